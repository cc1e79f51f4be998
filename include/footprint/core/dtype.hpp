#pragma once
// Element types. The numeric values are ONNX's TensorProto.DataType so that a dtype read from a
// model needs no translation table.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
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

// What kind of number an element is: the facts passes, checks and kernels branch on.
enum class DTypeKind : uint8_t {
  none,     // undefined
  boolean,  // one byte, 0 or 1
  signed_int,
  unsigned_int,
  floating,  // IEEE-style binary floats: float16, bfloat16, float32, float64, the float8/4 types
  complex,   // two floats per element
  string,    // variable size: no bytes per element
};

// One row per dtype: everything a layer needs to know about an element type, in one table (as
// ggml's type_traits), so a new dtype is one row here rather than a case in every layer.
//
//   const DTypeTraits& t = dtype_traits(DType::float16);
//   t.bits == 16 && t.kind == DTypeKind::floating && t.numpy == 'f';
//   double x = t.read_real(bytes);   // an element as a double (checks, propagation)
struct DTypeTraits {
  DType dtype = DType::undefined;
  std::string_view name;  // as ONNX spells it in type strings ("float", "int64", "float16")
  int bits = 0;           // storage bits per element (0: undefined, string)
  DTypeKind kind = DTypeKind::none;
  // Two elements share each byte (int4, uint4, float4e2m1): sizes round up to whole bytes.
  bool packed = false;
  // numpy's kind character ('f', 'i', 'u', 'b', 'c') for dtypes numpy has with the same bits;
  // 0 for those it has not (bfloat16, the float8 and 4-bit types).
  char numpy = 0;
  // Element `p` (little-endian, the dtype's own layout) as a double: exact for every type but
  // 64-bit integers beyond 2^53. nullptr where there is no scalar value (strings, complex,
  // packed types).
  double (*read_real)(const void* p) = nullptr;
  // An integer element (signed_int, unsigned_int, boolean) exactly; uint64 above 2^63 wraps.
  // nullptr for the other kinds.
  int64_t (*read_int)(const void* p) = nullptr;
  // Writes `x` as an element of the type, rounded as a cast does (an integer type's `x` must be
  // within its range); nullptr where read_real is.
  void (*write_real)(double x, void* p) = nullptr;

  bool is_float() const { return kind == DTypeKind::floating; }
  // Whether the integer `v` is a value of this type: within an integer type's range (0 or 1 for
  // bool); true for the other kinds, which an int64 does not bound.
  bool holds(int64_t v) const;
  // Integers and bool: what shape arithmetic and exact comparisons read.
  bool is_integer() const {
    return kind == DTypeKind::signed_int || kind == DTypeKind::unsigned_int ||
           kind == DTypeKind::boolean;
  }
};

// The row of `t`; the undefined row for codes footprint does not know.
const DTypeTraits& dtype_traits(DType t);

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

// A set of dtypes: what a kernel runs (OpSchema::kernel_dtypes), as one 32-bit mask over the
// ONNX codes (all below 32).
//
//   constexpr DTypeSet floats{DType::float32, DType::float64};
//   floats.contains(DType::float16) == false;
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> types) {
    for (DType t : types) add(t);
  }
  // Every dtype with whole bytes per element (not string, not the packed 4-bit ones): what a
  // kernel that moves bytes without reading them runs.
  static DTypeSet whole_bytes();
  // Every dtype footprint knows (a kernel that reads only extents: Shape, Size).
  static DTypeSet all();
  constexpr void add(DType t) { bits_ |= bit(t); }
  constexpr DTypeSet without(DType t) const {
    DTypeSet s = *this;
    s.bits_ &= ~bit(t);
    return s;
  }
  constexpr bool contains(DType t) const { return (bits_ & bit(t)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DTypeSet operator|(DTypeSet o) const {
    DTypeSet s;
    s.bits_ = bits_ | o.bits_;
    return s;
  }
  constexpr DTypeSet operator&(DTypeSet o) const {
    DTypeSet s;
    s.bits_ = bits_ & o.bits_;
    return s;
  }
  constexpr bool operator==(const DTypeSet&) const = default;
  // "float, double, int64": the names in code order.
  std::string to_string() const;

 private:
  static constexpr uint32_t bit(DType t) {
    const auto code = static_cast<uint32_t>(t);
    return code < 32 ? uint32_t{1} << code : 0;
  }
  uint32_t bits_ = 0;
};

}  // namespace footprint
