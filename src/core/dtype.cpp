#include "footprint/core/dtype.hpp"

#include <array>

#include "footprint/core/checked_math.hpp"

namespace footprint {
namespace {

struct DTypeInfo {
  std::string_view name;
  int bits;
};

// Indexed by the ONNX DataType code.
constexpr std::array<DTypeInfo, 24> kInfo = {{
    {"undefined", 0},      {"float", 32},       {"uint8", 8},          {"int8", 8},
    {"uint16", 16},        {"int16", 16},       {"int32", 32},         {"int64", 64},
    {"string", 0},         {"bool", 8},         {"float16", 16},       {"double", 64},
    {"uint32", 32},        {"uint64", 64},      {"complex64", 64},     {"complex128", 128},
    {"bfloat16", 16},      {"float8e4m3fn", 8}, {"float8e4m3fnuz", 8}, {"float8e5m2", 8},
    {"float8e5m2fnuz", 8}, {"uint4", 4},        {"int4", 4},           {"float4e2m1", 4},
}};

}  // namespace

bool is_known_dtype(int32_t code) {
  return code > 0 && static_cast<size_t>(code) < kInfo.size();
}

int dtype_bits(DType t) {
  auto code = static_cast<int32_t>(t);
  return is_known_dtype(code) ? kInfo[code].bits : 0;
}

std::string_view dtype_name(DType t) {
  auto code = static_cast<int32_t>(t);
  return is_known_dtype(code) ? kInfo[code].name : "undefined";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (size_t i = 1; i < kInfo.size(); ++i) {
    if (kInfo[i].name == name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

std::optional<uint64_t> dtype_storage_bytes(DType t, uint64_t numel) {
  const int bits = dtype_bits(t);
  if (bits == 0) return std::nullopt;
  // Whole groups of 8 elements take `bits` bytes each; counting bits instead would overflow at
  // 2^61 bytes, an eighth of what uint64 holds.
  const auto b = static_cast<uint64_t>(bits);
  const auto groups = checked_mul(numel / 8, b);
  const uint64_t tail = ((numel % 8) * b + 7) / 8;
  return groups ? checked_add(*groups, tail) : std::nullopt;
}

}  // namespace footprint
