#include "footprint/core/dtype.hpp"

#include <array>
#include <cstring>
#include <type_traits>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/float16.hpp"
#include "footprint/core/minifloat.hpp"

namespace footprint {
namespace {

template <class T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
double real_of(const void* p) {
  return static_cast<double>(load<T>(p));
}

template <class T>
int64_t int_of(const void* p) {
  return static_cast<int64_t>(load<T>(p));
}

template <class T>
void write_as(double x, void* p) {
  const auto v = static_cast<T>(x);
  std::memcpy(p, &v, sizeof(T));
}

double real_of_half(const void* p) {
  return float_from_half(load<uint16_t>(p));
}
double real_of_bfloat16(const void* p) {
  return float_from_bfloat16(load<uint16_t>(p));
}
// Through float, as the Cast kernel converts: rounding twice can differ from rounding once next
// to a tie, and a propagated value must equal the computed one.
void write_half(double x, void* p) {
  const uint16_t h = half_from_float(static_cast<float>(x));
  std::memcpy(p, &h, sizeof h);
}
void write_bfloat16(double x, void* p) {
  const uint16_t b = bfloat16_from_float(static_cast<float>(x));
  std::memcpy(p, &b, sizeof b);
}
void write_bool(double x, void* p) {
  const uint8_t b = x != 0 ? 1 : 0;
  std::memcpy(p, &b, 1);
}

// An integer row: exact reads, and a double that converts as a cast does.
template <class T>
constexpr DTypeTraits int_row(DType t, std::string_view name, char numpy) {
  return {t,
          name,
          static_cast<int>(sizeof(T) * 8),
          std::is_signed_v<T> ? DTypeKind::signed_int : DTypeKind::unsigned_int,
          false,
          numpy,
          real_of<T>,
          int_of<T>,
          write_as<T>};
}

template <DType kType>
double real_of_float8(const void* p) {
  return decode_float8(kType, *static_cast<const uint8_t*>(p));
}

template <DType kType>
void write_float8(double x, void* p) {
  *static_cast<uint8_t*>(p) = encode_float8(kType, x, true);
}

template <DType kType>
constexpr DTypeTraits float8_row(std::string_view name) {
  return {kType,
          name,
          8,
          DTypeKind::floating,
          false,
          0,
          real_of_float8<kType>,
          nullptr,
          write_float8<kType>};
}

// Indexed by the ONNX DataType code.
constexpr std::array<DTypeTraits, 24> kTraits = {{
    {DType::undefined, "undefined"},
    {DType::float32, "float", 32, DTypeKind::floating, false, 'f', real_of<float>, nullptr,
     write_as<float>},
    int_row<uint8_t>(DType::uint8, "uint8", 'u'),
    int_row<int8_t>(DType::int8, "int8", 'i'),
    int_row<uint16_t>(DType::uint16, "uint16", 'u'),
    int_row<int16_t>(DType::int16, "int16", 'i'),
    int_row<int32_t>(DType::int32, "int32", 'i'),
    int_row<int64_t>(DType::int64, "int64", 'i'),
    {DType::string, "string", 0, DTypeKind::string},
    {DType::boolean, "bool", 8, DTypeKind::boolean, false, 'b', real_of<uint8_t>, int_of<uint8_t>,
     write_bool},
    {DType::float16, "float16", 16, DTypeKind::floating, false, 'f', real_of_half, nullptr,
     write_half},
    {DType::float64, "double", 64, DTypeKind::floating, false, 'f', real_of<double>, nullptr,
     write_as<double>},
    int_row<uint32_t>(DType::uint32, "uint32", 'u'),
    int_row<uint64_t>(DType::uint64, "uint64", 'u'),
    {DType::complex64, "complex64", 64, DTypeKind::complex, false, 'c'},
    {DType::complex128, "complex128", 128, DTypeKind::complex, false, 'c'},
    {DType::bfloat16, "bfloat16", 16, DTypeKind::floating, false, 0, real_of_bfloat16, nullptr,
     write_bfloat16},
    float8_row<DType::float8e4m3fn>("float8e4m3fn"),
    float8_row<DType::float8e4m3fnuz>("float8e4m3fnuz"),
    float8_row<DType::float8e5m2>("float8e5m2"),
    float8_row<DType::float8e5m2fnuz>("float8e5m2fnuz"),
    {DType::uint4, "uint4", 4, DTypeKind::unsigned_int, true},
    {DType::int4, "int4", 4, DTypeKind::signed_int, true},
    {DType::float4e2m1, "float4e2m1", 4, DTypeKind::floating, true},
}};

constexpr bool rows_in_code_order() {
  for (size_t i = 0; i < kTraits.size(); ++i) {
    if (static_cast<size_t>(kTraits[i].dtype) != i) return false;
  }
  return true;
}
static_assert(rows_in_code_order(), "kTraits is indexed by the ONNX code");

}  // namespace

const DTypeTraits& dtype_traits(DType t) {
  const auto code = static_cast<int32_t>(t);
  return is_known_dtype(code) ? kTraits[static_cast<size_t>(code)] : kTraits[0];
}

bool is_known_dtype(int32_t code) {
  return code > 0 && static_cast<size_t>(code) < kTraits.size();
}

int dtype_bits(DType t) {
  return dtype_traits(t).bits;
}

std::string_view dtype_name(DType t) {
  return dtype_traits(t).name;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (size_t i = 1; i < kTraits.size(); ++i) {
    if (kTraits[i].name == name) return kTraits[i].dtype;
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

bool DTypeTraits::holds(int64_t v) const {
  switch (kind) {
    case DTypeKind::boolean:
      return v == 0 || v == 1;
    case DTypeKind::signed_int:
      return bits >= 64 || (v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1)));
    case DTypeKind::unsigned_int:
      return v >= 0 && (bits >= 63 || v < (int64_t{1} << bits));
    default:
      return true;
  }
}

DTypeSet DTypeSet::whole_bytes() {
  DTypeSet s;
  for (const DTypeTraits& t : kTraits) {
    if (t.bits > 0 && t.bits % 8 == 0) s.add(t.dtype);
  }
  return s;
}

DTypeSet DTypeSet::all() {
  DTypeSet s;
  for (const DTypeTraits& t : kTraits) {
    if (t.dtype != DType::undefined) s.add(t.dtype);
  }
  return s;
}

std::string DTypeSet::to_string() const {
  std::string out;
  for (const DTypeTraits& t : kTraits) {
    if (t.dtype == DType::undefined || !contains(t.dtype)) continue;
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

}  // namespace footprint
