#pragma once
// From a tensor's DType to the C++ type a kernel is instantiated for: type lists, dispatch,
// and element-size dispatch for kernels that move bytes without reading them.
//
//   dispatch_or_fail<RealTypes>(ctx, x.dtype, [&](auto tag) { run<decltype(tag)>(ctx); });
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "float16.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::runtime::kernels {

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::float32;
  if constexpr (std::is_same_v<T, double>) return DType::float64;
  if constexpr (std::is_same_v<T, int8_t>) return DType::int8;
  if constexpr (std::is_same_v<T, uint8_t>) return DType::uint8;
  if constexpr (std::is_same_v<T, int16_t>) return DType::int16;
  if constexpr (std::is_same_v<T, uint16_t>) return DType::uint16;
  if constexpr (std::is_same_v<T, int32_t>) return DType::int32;
  if constexpr (std::is_same_v<T, uint32_t>) return DType::uint32;
  if constexpr (std::is_same_v<T, int64_t>) return DType::int64;
  if constexpr (std::is_same_v<T, uint64_t>) return DType::uint64;
  if constexpr (std::is_same_v<T, bool>) return DType::boolean;
  if constexpr (std::is_same_v<T, Float16>) return DType::float16;
  if constexpr (std::is_same_v<T, BFloat16>) return DType::bfloat16;
  return DType::undefined;
}

template <class... Ts>
struct TypeList {};

using RealTypes = TypeList<float, double>;
// float alone: with dispatch_with_16bit, the kernels that compute float32 and the 16-bit floats
// in float registers (the channels-last pools, fused elementwise runs and blocks).
using Float32Types = TypeList<float>;
using SignedTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t>;
using IntTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;
using UnsignedTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
// Numbers one computes with (no bool).
using ArithTypes = TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                            int64_t, uint64_t>;
using NumericTypes = TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                              int64_t, uint64_t, bool>;
// Everything a Cast converts between.
using CastTypes = TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                           int64_t, uint64_t, bool, Float16, BFloat16>;

// The dtypes a list dispatches on: what a registry row declares its kernel runs
// (OpSchema::kernel_dtypes).
template <class... Ts>
constexpr DTypeSet dtypes_of(TypeList<Ts...> /*list*/) {
  return DTypeSet{dtype_of<Ts>()...};
}

// Those of a list that computes float16 and bfloat16 through float where it has float
// (dispatch_with_16bit, the unary and binary elementwise kernels).
template <class List>
constexpr DTypeSet dtypes_with_16bit(List list) {
  DTypeSet s = dtypes_of(list);
  if (s.contains(DType::float32)) s = s | DTypeSet{DType::float16, DType::bfloat16};
  return s;
}

// Whether T is one of the list's types.
template <class T, class... Ts>
constexpr bool contains(TypeList<Ts...> /*list*/) {
  return (std::is_same_v<T, Ts> || ...);
}

// Calls f(T{}) for the C++ type of `t` among `List`; false when `t` is not in it.
template <class... Ts, class F>
bool dispatch(TypeList<Ts...> /*list*/, DType t, F&& f) {
  return ((t == dtype_of<Ts>() ? (f(Ts{}), true) : false) || ...);
}

// Calls f(T{}) with the C++ type of `t` for the plain numeric dtypes (and bool as bool);
// returns false for the others (float16, strings, ...), so the caller can fail naming them.
template <class F>
bool dispatch_numeric(DType t, F&& f) {
  return dispatch(NumericTypes{}, t, f);
}

inline std::string dtype_label(DType t) {
  return std::string(dtype_name(t));
}

[[noreturn]] inline void fail_dtype(const graph::KernelContext& ctx, DType t) {
  ctx.fail("dtype " + dtype_label(t) + " is not supported");
}

// Calls f(T{}) for `t` among `List`, or fails naming the dtype.
template <class List, class F>
void dispatch_or_fail(const graph::KernelContext& ctx, DType t, F&& f) {
  if (!dispatch(List{}, t, f)) fail_dtype(ctx, t);
}

// Calls f(T{}) with the C++ type of `t` among List, adding the 16-bit floats when List has float
// (the kernel computes them through float: ComputeType, widen, narrow); fails naming the dtype
// otherwise. What it runs is dtypes_with_16bit(List{}).
template <class List, class F>
void dispatch_with_16bit(const graph::KernelContext& ctx, DType t, F&& f) {
  if constexpr (contains<float>(List{})) {
    if (t == DType::float16) return f(Float16{});
    if (t == DType::bfloat16) return f(BFloat16{});
  }
  dispatch_or_fail<List>(ctx, t, f);
}

// Element size in bytes of a dtype kernels can move (0 for strings and packed sub-byte types).
inline size_t element_size(DType t) {
  const int bits = dtype_bits(t);
  return bits % 8 == 0 && t != DType::string ? static_cast<size_t>(bits / 8) : 0;
}

// Every dtype dispatch_bits moves: elements of 1, 2, 4 or 8 bytes.
inline DTypeSet movable_dtypes() {
  DTypeSet s;
  for (int32_t code = 1; is_known_dtype(code); ++code) {
    const auto t = static_cast<DType>(code);
    const size_t size = element_size(t);
    if (size == 1 || size == 2 || size == 4 || size == 8) s.add(t);
  }
  return s;
}

// Unsigned integer of `size` bytes, for kernels that move elements without reading them.
template <size_t Size>
using Bits = std::conditional_t<
    Size == 1, uint8_t,
    std::conditional_t<Size == 2, uint16_t, std::conditional_t<Size == 4, uint32_t, uint64_t>>>;

// Calls f(Bits<n>{}) for an element size n of 1, 2, 4 or 8; fails otherwise (strings, int4,
// complex128).
template <class F>
void dispatch_bits(const graph::KernelContext& ctx, DType t, F&& f) {
  switch (element_size(t)) {
    case 1:
      f(uint8_t{});
      return;
    case 2:
      f(uint16_t{});
      return;
    case 4:
      f(uint32_t{});
      return;
    case 8:
      f(uint64_t{});
      return;
    default:
      fail_dtype(ctx, t);
  }
}

}  // namespace footprint::runtime::kernels
