#pragma once
// The small floats of ONNX: the 8-bit ones (opset 19) and float4e2m1 (opset 23).
//
// The 8-bit floats: float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz,
// decoded exactly and encoded from double rounding to nearest even, as ml_dtypes (ONNX's
// reference) converts:
//
//   e4m3fn    4 exponent bits (bias 7), 3 mantissa; no infinity, NaN S.1111.111; max 448
//   e4m3fnuz  bias 8; no infinity, no negative zero, NaN 0x80; max 240
//   e5m2      5 exponent bits (bias 15), 2 mantissa, IEEE-like: infinities; max 57344
//   e5m2fnuz  bias 16; no infinity, no negative zero, NaN 0x80; max 57344
//
// A finite value past the largest saturates to it with `saturate` (Cast's default from opset
// 19), else becomes NaN (infinity for e5m2); an infinity saturates the same way. Core's dtype
// table reads and writes these types through them; Cast converts with them.
//
//   const uint8_t b = encode_float8(DType::float8e4m3fn, 500.0, true);  // 0x7E, 448
//   const float f = decode_float8(DType::float8e4m3fn, b);             // 448.0F
#include <cstdint>

#include "footprint/core/dtype.hpp"

namespace footprint {

bool is_float8(DType t);
float decode_float8(DType t, uint8_t bits);
uint8_t encode_float8(DType t, double v, bool saturate);

// float4e2m1, a nibble: 2 exponent bits (bias 1), 1 mantissa bit, values 0, 0.5, 1, 1.5, 2, 3, 4,
// 6 and their negatives; no infinity or NaN. Encoding rounds half to even and saturates at 6
// (infinities too); NaN becomes 0x8, negative zero, as ml_dtypes (ONNX's reference) makes it.
float decode_float4e2m1(uint8_t nibble);
uint8_t encode_float4e2m1(double v);

}  // namespace footprint
