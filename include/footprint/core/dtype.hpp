#pragma once
// Element types. The numeric values are ONNX's TensorProto.DataType so that a dtype read from a
// model needs no translation table.
#include <cstdint>
#include <optional>
#include <string_view>

namespace footprint {

enum class DType : int32_t {
  undefined = 0,
  float32 = 1,
  uint8 = 2,
  int8 = 3,
  uint16 = 4,
  int16 = 5,
  int32 = 6,
  int64 = 7,
  string = 8,
  boolean = 9,
  float16 = 10,
  float64 = 11,
  uint32 = 12,
  uint64 = 13,
  complex64 = 14,
  complex128 = 15,
  bfloat16 = 16,
  float8e4m3fn = 17,
  float8e4m3fnuz = 18,
  float8e5m2 = 19,
  float8e5m2fnuz = 20,
  uint4 = 21,
  int4 = 22,
  float4e2m1 = 23,
};

// Whether `code` is a dtype footprint knows (any defined TensorProto.DataType).
bool is_known_dtype(int32_t code);

// Storage bits per element (4 for the packed 4-bit types, 0 for string and undefined).
int dtype_bits(DType t);

// Short lower-case name as ONNX spells it in type strings ("float", "int64", "float16", ...).
std::string_view dtype_name(DType t);

std::optional<DType> dtype_from_name(std::string_view name);

// Bytes needed for `numel` elements, rounding packed sub-byte types up to whole bytes.
// Returns nullopt on overflow or for variable-size types (string).
std::optional<uint64_t> dtype_storage_bytes(DType t, uint64_t numel);

}  // namespace footprint
