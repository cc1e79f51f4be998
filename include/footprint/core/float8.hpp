#pragma once
// The 8-bit floats of ONNX (opset 19): float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz,
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

}  // namespace footprint
