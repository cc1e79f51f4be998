#pragma once
// Arithmetic on element counts, byte sizes, offsets and totals that reports overflow instead of
// wrapping.
//
// A size that wraps is worse than an error: 2^64 bytes become 0, two 2^63-byte buffers "fit" in
// nothing, and every number printed after it is a silent guess (DESIGN.md: exact, bounded, or an
// error). Every layer that adds or multiplies sizes goes through these:
//
//   auto bytes = checked_mul(numel, element_size);          // std::optional<uint64_t>
//   total = add_or_throw(total, bytes, "total of 'x' and 'y'");  // SizeOverflow on wrap
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "footprint/core/error.hpp"

namespace footprint {

// A size, count or offset that does not fit its type. The message names what was being computed.
class SizeOverflow : public Error {
 public:
  using Error::Error;
};

template <std::integral T>
constexpr std::optional<T> checked_add(T a, T b) noexcept {
  T r{};
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

template <std::integral T>
constexpr std::optional<T> checked_sub(T a, T b) noexcept {
  T r{};
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

template <std::integral T>
constexpr std::optional<T> checked_mul(T a, T b) noexcept {
  T r{};
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// `value` rounded up to a multiple of `align` (> 0); nullopt when the result does not fit.
template <std::integral T>
constexpr std::optional<T> checked_round_up(T value, T align) noexcept {
  if (align <= 0) return std::nullopt;
  const T rem = value % align;
  if (rem == 0) return value;
  return checked_add<T>(value, rem > 0 ? align - rem : -rem);
}

namespace detail {
[[noreturn]] void throw_overflow(std::string_view what, std::string_view op, std::string a,
                                 std::string b, std::string_view type);
template <std::integral T>
constexpr std::string_view type_name() {
  if constexpr (std::is_signed_v<T>) {
    return sizeof(T) == 8 ? "int64" : "int32";
  } else {
    return sizeof(T) == 8 ? "uint64" : "uint32";
  }
}
}  // namespace detail

// The same, throwing SizeOverflow("<what>: <a> + <b> overflows uint64") instead of nullopt.
template <std::integral T>
T add_or_throw(T a, T b, std::string_view what) {
  if (auto r = checked_add(a, b)) return *r;
  detail::throw_overflow(what, "+", std::to_string(a), std::to_string(b), detail::type_name<T>());
}

template <std::integral T>
T mul_or_throw(T a, T b, std::string_view what) {
  if (auto r = checked_mul(a, b)) return *r;
  detail::throw_overflow(what, "x", std::to_string(a), std::to_string(b), detail::type_name<T>());
}

template <std::integral T>
T round_up_or_throw(T value, T align, std::string_view what) {
  if (auto r = checked_round_up(value, align)) return *r;
  detail::throw_overflow(what, "rounded up to a multiple of", std::to_string(value),
                         std::to_string(align), detail::type_name<T>());
}

}  // namespace footprint
