#pragma once
// Helpers every kernel family shares: dtype dispatch, 16-bit floats, fixed-capacity index
// buffers, broadcasting, strided copies and parallel loops.
//
// Nothing here allocates on the heap in a kernel's run path (DESIGN.md "Prediction =
// measurement"): index buffers are std::array with a rank limit (kMaxRank), and a kernel fails
// on tensors of a higher rank. The std::vector helpers at the end are for prepare time only.
#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "footprint/core/dtype.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::runtime::kernels {

// The highest tensor rank the kernels index with fixed-size buffers.
inline constexpr size_t kMaxRank = 8;
using Index = std::array<int64_t, kMaxRank>;

// ---- 16-bit floating point storage types (converted through float for arithmetic)

struct Float16 {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};

inline float to_float(Float16 h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t mant = h.bits & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  // Subnormal: normalise the mantissa.
  int e = -1;
  do {
    ++e;
    mant <<= 1;
  } while ((mant & 0x400u) == 0);
  return std::bit_cast<float>(sign | (static_cast<uint32_t>(112 - e) << 23) |
                              ((mant & 0x3ffu) << 13));
}

// Round to nearest even, as IEEE conversion does; overflow gives infinity.
inline Float16 to_float16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN (kept quiet)
    return {static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u))};
  }
  if (abs >= 0x477ff000u) return {static_cast<uint16_t>(sign | 0x7c00u)};  // rounds past 65504
  if (abs < 0x38800000u) {
    // Subnormal or zero in half: scale so the float adder rounds to nearest even for us.
    const float magic = std::bit_cast<float>(0x3f000000u);  // 0.5: 2^-1 aligns 2^-24 ulps
    const float r = std::bit_cast<float>(abs) + magic;
    return {static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(r) - 0x3f000000u))};
  }
  const uint32_t odd = (abs >> 13) & 1u;
  const uint32_t rounded = abs + 0xc8000fffu + odd;  // rebias exponent (-112 << 23) and round
  return {static_cast<uint16_t>(sign | (rounded >> 13))};
}

inline float to_float(BFloat16 b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16);
}

inline BFloat16 to_bfloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<uint16_t>((x >> 16) | 0x40u)};  // NaN
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);  // nearest even
  return {static_cast<uint16_t>(rounded >> 16)};
}

// A 16-bit float type from float (H is Float16 or BFloat16).
template <class H>
H from_float(float f) {
  if constexpr (std::is_same_v<H, Float16>) {
    return to_float16(f);
  } else {
    return to_bfloat16(f);
  }
}

// ---- Vectorised float math
//
// exp, sigmoid, tanh and erf on four floats at a time with GCC vector extensions: the compiler
// does not vectorise loops that call libm, and these ops dominate activations. Within about
// 2 ulp of libm (Cephes' expf and tanhf); NaN propagates, overflow gives infinity.
namespace simd {

using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = int32_t __attribute__((vector_size(16)));
inline constexpr size_t kLanes = 4;

inline f32x4 splat(float v) {
  return f32x4{} + v;
}

inline f32x4 abs(f32x4 x) {
  return reinterpret_cast<f32x4>(reinterpret_cast<i32x4>(x) & 0x7fffffff);
}

// x = n ln2 + r; exp(r) by a polynomial; 2^n built in the exponent bits as two factors, so that
// n = 128 still reaches infinity and n = -150 zero.
inline f32x4 exp(f32x4 x) {
  x = x < splat(-104.0f) ? splat(-104.0f) : x;
  x = x > splat(88.8f) ? splat(88.8f) : x;
  // x / ln2 rounded to nearest by adding and removing 1.5 x 2^23.
  const f32x4 n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const f32x4 r = x - n * 0.693359375f + n * 2.12194440e-4f;
  f32x4 p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const i32x4 k = __builtin_convertvector(n, i32x4);
  const i32x4 k1 = k >> 1;
  const i32x4 k2 = k - k1;
  return p * reinterpret_cast<f32x4>((k1 + 127) << 23) * reinterpret_cast<f32x4>((k2 + 127) << 23);
}

// 1 / (1 + exp(-x)) from e = exp(-|x|), which cannot overflow.
inline f32x4 sigmoid(f32x4 x) {
  const f32x4 e = exp(-abs(x));
  const f32x4 r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}

// An odd polynomial near 0 (where 1 - e cancels), else (1 - e) / (1 + e) with e = exp(-2|x|).
inline f32x4 tanh(f32x4 x) {
  const f32x4 a = abs(x);
  const f32x4 z = x * x;
  f32x4 small = splat(-5.70498872745e-3f);
  small = small * z + 2.06390887954e-2f;
  small = small * z - 5.37397155531e-2f;
  small = small * z + 1.33314422036e-1f;
  small = small * z - 3.33332819422e-1f;
  small = small * z * x + x;
  const f32x4 e = exp(-2.0f * a);
  const f32x4 magnitude = (1.0f - e) / (1.0f + e);
  const f32x4 large = reinterpret_cast<f32x4>(reinterpret_cast<i32x4>(magnitude) |
                                              (reinterpret_cast<i32x4>(x) & (-0x7fffffff - 1)));
  return a < 0.625f ? small : large;
}

// erf(x) as x P(x^2) / Q(x^2) on [-4, 4] (Eigen's float erf), within 5e-7 absolute.
inline f32x4 erf(f32x4 x) {
  x = x < splat(-4.0f) ? splat(-4.0f) : x;
  x = x > splat(4.0f) ? splat(4.0f) : x;
  const f32x4 z = x * x;
  f32x4 p = z * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = z * p - 2.10102402082508e-06f;
  p = z * p - 5.69250639462346e-05f;
  p = z * p - 7.34990630326855e-04f;
  p = z * p - 2.95459980854025e-03f;
  p = z * p - 1.60960333262415e-02f;
  f32x4 q = z * -1.45660718464996e-05f - 2.13374055278905e-04f;
  q = z * q - 1.68282697438203e-03f;
  q = z * q - 7.37332916720468e-03f;
  q = z * q - 1.42647390514189e-02f;
  return x * p / q;
}

// y[i] = f(x[i]) four at a time (the tail through a zero-padded vector); y may be x.
template <class F>
void map(const float* x, float* y, size_t n, F&& f) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    f32x4 v;
    std::memcpy(&v, x + i, sizeof v);
    v = f(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    f32x4 v{};
    std::memcpy(&v, x + i, (n - i) * sizeof(float));
    v = f(v);
    std::memcpy(y + i, &v, (n - i) * sizeof(float));
  }
}

}  // namespace simd

// ---- Wider vectors where the CPU has them
//
// The build targets the SSE2 baseline (no -march), so a loop the compiler vectorises moves 16
// bytes at a time. On x86, with_wide_vectors(body) compiles `body` twice more, for AVX2 and for
// AVX-512, and runs the copy the CPU supports: `flatten` inlines the body's whole call tree into
// each copy, where the same plain loops vectorise at that width. Only for the float loops that
// dominate profiles (each use compiles three times). GCC's AVX-512 brings FMA along, so a * b + c
// may be contracted there and round differently from the baseline copy in the last bit, as
// oneDNN's per-ISA kernels already do.
//
// Sanitizer builds compile the baseline copy only: it runs the same loops, and three copies of
// every hot loop would triple their compile time.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FOOTPRINT_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(FOOTPRINT_SANITIZED)
#define FOOTPRINT_SANITIZED 1
#endif
#if (defined(__x86_64__) || defined(__i386__)) && !defined(FOOTPRINT_SANITIZED)
#define FOOTPRINT_WIDE_VECTORS 1
#endif

namespace wide {

#if defined(FOOTPRINT_WIDE_VECTORS)
enum class Isa : uint8_t { baseline, avx2, avx512 };

inline Isa detect_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::avx512;
  if (__builtin_cpu_supports("avx2")) return Isa::avx2;
  return Isa::baseline;
}

inline Isa host_isa() {
  static const Isa isa = detect_isa();
  return isa;
}

template <class F>
__attribute__((target("avx512f"), flatten)) void on_avx512(const F& body) {
  body();
}

template <class F>
__attribute__((target("avx2"), flatten)) void on_avx2(const F& body) {
  body();
}
#endif

}  // namespace wide

template <class F>
void with_wide_vectors(const F& body) {
#if defined(FOOTPRINT_WIDE_VECTORS)
  switch (wide::host_isa()) {
    case wide::Isa::avx512:
      return wide::on_avx512(body);
    case wide::Isa::avx2:
      return wide::on_avx2(body);
    case wide::Isa::baseline:
      break;
  }
#endif
  body();
}

// ---- dtype <-> C++ type

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

// Element size in bytes of a dtype kernels can move (0 for strings and packed sub-byte types).
inline size_t element_size(DType t) {
  const int bits = dtype_bits(t);
  return bits % 8 == 0 && t != DType::string ? static_cast<size_t>(bits / 8) : 0;
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

// ---- Small reads of inputs and attributes into fixed buffers

inline void check_rank(const graph::KernelContext& ctx, size_t rank) {
  if (rank > kMaxRank) {
    ctx.fail("rank " + std::to_string(rank) + " is above the limit of " + std::to_string(kMaxRank));
  }
}

// The elements of an integer tensor (int32 or int64) into `out`; returns the count. Fails when
// there are more than out.size().
inline size_t read_ints(const graph::KernelContext& ctx, const graph::TensorRef& t,
                        std::span<int64_t> out) {
  const size_t n = t.numel();
  if (n > out.size())
    ctx.fail("an index tensor has more than " + std::to_string(out.size()) + " entries");
  if (t.dtype == DType::int64) {
    std::copy_n(t.as<const int64_t>(), n, out.begin());
  } else if (t.dtype == DType::int32) {
    std::copy_n(t.as<const int32_t>(), n, out.begin());
  } else {
    ctx.fail("an index tensor must be int32 or int64, is " + dtype_label(t.dtype));
  }
  return n;
}

// The single element of a numeric tensor, as double (or int64 for exactness).
inline double scalar_real(const graph::KernelContext& ctx, const graph::TensorRef& t) {
  if (t.numel() != 1) ctx.fail("a scalar input has " + std::to_string(t.numel()) + " elements");
  double v = 0;
  if (t.dtype == DType::float16) return to_float(*t.as<const Float16>());
  if (t.dtype == DType::bfloat16) return to_float(*t.as<const BFloat16>());
  dispatch_or_fail<NumericTypes>(ctx, t.dtype, [&](auto tag) {
    using T = decltype(tag);
    v = static_cast<double>(*t.as<const T>());
  });
  return v;
}

inline int64_t scalar_int(const graph::KernelContext& ctx, const graph::TensorRef& t) {
  if (t.numel() != 1) ctx.fail("a scalar input has " + std::to_string(t.numel()) + " elements");
  int64_t v = 0;
  dispatch_or_fail<NumericTypes>(ctx, t.dtype, [&](auto tag) {
    using T = decltype(tag);
    // int8 values are signed: sign extension is meant.
    // NOLINTNEXTLINE(bugprone-signed-char-misuse)
    v = static_cast<int64_t>(*t.as<const T>());
  });
  return v;
}

// An ints attribute into `out`; nullopt when absent. Fails when it has more than out.size().
inline std::optional<size_t> attr_ints_into(const graph::KernelContext& ctx, std::string_view name,
                                            std::span<int64_t> out) {
  const auto* a = ctx.attribute(name);
  if (a == nullptr) return std::nullopt;
  if (a->ints.count > out.size()) ctx.fail("attribute '" + std::string(name) + "' is too long");
  size_t n = 0;
  a->ints.for_each([&](uint64_t raw) { out[n++] = static_cast<int64_t>(raw); });
  return n;
}

inline std::optional<size_t> attr_floats_into(const graph::KernelContext& ctx,
                                              std::string_view name, std::span<float> out) {
  const auto* a = ctx.attribute(name);
  if (a == nullptr) return std::nullopt;
  if (a->floats.count > out.size()) ctx.fail("attribute '" + std::string(name) + "' is too long");
  size_t n = 0;
  a->floats.for_each(
      [&](uint64_t raw) { out[n++] = std::bit_cast<float>(static_cast<uint32_t>(raw)); });
  return n;
}

// `axis` in [-rank, rank) made non-negative; fails otherwise.
inline size_t normalize_axis(const graph::KernelContext& ctx, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

// Product of dims[begin, end).
inline size_t product(std::span<const int64_t> dims, size_t begin, size_t end) {
  size_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= static_cast<size_t>(dims[i]);
  return n;
}

// ---- Parallel loops

// Runs body(begin, end) over [0, n) in up to `threads` contiguous chunks; one chunk (no thread
// team) when the work is small.
template <class F>
void parallel_for(int threads, size_t n, F&& body, size_t min_chunk = 4096) {
  min_chunk = std::max<size_t>(min_chunk, 1);
  const size_t chunks = threads <= 1 || n < 2 * min_chunk
                            ? 1
                            : std::min<size_t>(static_cast<size_t>(threads), n / min_chunk);
  if (chunks <= 1) {
    body(size_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static)
  for (size_t c = 0; c < chunks; ++c) body(n * c / chunks, n * (c + 1) / chunks);
}

// ---- Broadcasting (numpy rules) over N operands

// The output's index space with dims of extent 1 dropped and adjacent dims merged where every
// operand walks them as one, so the innermost loop is as long as possible. Strides are in
// elements; 0 where an operand is broadcast.
template <size_t N>
struct BroadcastPlan {
  size_t rank = 1;
  Index dims{};
  std::array<Index, N> strides{};

  size_t rows() const { return product(dims, 0, rank - 1); }
  size_t row_length() const { return static_cast<size_t>(dims[rank - 1]); }
  int64_t inner_stride(size_t operand) const { return strides[operand][rank - 1]; }
};

// False when the output's rank is above kMaxRank or below an operand's. Operand dims align to
// the right (numpy).
template <size_t N>
bool plan_broadcast(std::span<const int64_t> out, const std::array<std::span<const int64_t>, N>& in,
                    BroadcastPlan<N>& p) {
  if (out.size() > kMaxRank) return false;
  for (const auto& dims : in) {
    if (dims.size() > out.size()) return false;
  }
  std::array<Index, N> own{};  // each operand's strides aligned to the output's dims
  for (size_t k = 0; k < N; ++k) {
    const size_t offset = out.size() - in[k].size();
    int64_t s = 1;
    for (size_t d = out.size(); d-- > 0;) {
      const bool present = d >= offset;
      const int64_t extent = present ? in[k][d - offset] : 1;
      own[k][d] = extent == 1 ? 0 : s;
      s *= extent;
    }
  }
  size_t r = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = r > 0;
    for (size_t k = 0; k < N && merge; ++k) merge = p.strides[k][r - 1] == own[k][d] * out[d];
    if (merge) {
      p.dims[r - 1] *= out[d];
      for (size_t k = 0; k < N; ++k) p.strides[k][r - 1] = own[k][d];
    } else {
      p.dims[r] = out[d];
      for (size_t k = 0; k < N; ++k) p.strides[k][r] = own[k][d];
      ++r;
    }
  }
  if (r == 0) {
    p.dims[0] = 1;
    for (size_t k = 0; k < N; ++k) p.strides[k][0] = 0;
    r = 1;
  }
  p.rank = r;
  return true;
}

// Calls row(offsets, out_offset, length) for rows [begin, end) of the plan, where offsets[k] is
// operand k's element offset at the row's start.
template <size_t N, class F>
void broadcast_rows_from(const BroadcastPlan<N>& p, F& row, size_t begin, size_t end) {
  const size_t len = p.row_length();
  // Decompose the first row index into the outer dims' coordinates.
  Index at{};
  size_t rest = begin;
  std::array<int64_t, N> off{};
  for (size_t d = p.rank - 1; d-- > 0;) {
    at[d] = static_cast<int64_t>(rest % static_cast<size_t>(p.dims[d]));
    rest /= static_cast<size_t>(p.dims[d]);
    for (size_t k = 0; k < N; ++k) off[k] += at[d] * p.strides[k][d];
  }
  for (size_t r = begin; r < end; ++r) {
    row(off, r * len, len);
    // Odometer step over the outer dims.
    for (size_t d = p.rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) off[k] += p.strides[k][d];
      if (++at[d] < p.dims[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= at[d] * p.strides[k][d];
      at[d] = 0;
    }
  }
}

// Calls row(offsets, out_offset, length) for each innermost row of the plan, where offsets[k] is
// operand k's element offset at the row's start; rows are split over threads. kWide: each
// thread's rows run through with_wide_vectors.
template <size_t N, bool kWide = false, class F>
void broadcast_rows(const BroadcastPlan<N>& p, int threads, F&& row) {
  const size_t len = p.row_length();
  parallel_for(
      threads, p.rows(),
      [&](size_t begin, size_t end) {
        if (begin >= end) return;
        if constexpr (kWide) {
          with_wide_vectors([&] { broadcast_rows_from<N>(p, row, begin, end); });
        } else {
          broadcast_rows_from<N>(p, row, begin, end);
        }
      },
      std::max<size_t>(1, 16384 / std::max<size_t>(len, 1)));
}

// ---- Strided gathers into a contiguous output

// Copies a tensor of `rank` dims (up to 2 x kMaxRank) read through arbitrary element strides
// (negative for reversed slices, 0 for broadcasts) from `src` into contiguous `dst`.
inline constexpr size_t kMaxCopyRank = 2 * kMaxRank;
using CopyIndex = std::array<int64_t, kMaxCopyRank>;

template <class T>
void strided_copy(size_t rank, const CopyIndex& dims, const CopyIndex& strides, const T* src,
                  T* dst, int threads) {
  // Merge adjacent dims that the source walks contiguously, and drop extents of 1.
  CopyIndex md{};
  CopyIndex ms{};
  size_t r = 0;
  size_t total = 1;
  for (size_t d = 0; d < rank; ++d) {
    total *= static_cast<size_t>(dims[d]);
    if (dims[d] == 1) continue;
    if (r > 0 && ms[r - 1] == strides[d] * dims[d]) {
      md[r - 1] *= dims[d];
      ms[r - 1] = strides[d];
    } else {
      md[r] = dims[d];
      ms[r] = strides[d];
      ++r;
    }
  }
  if (total == 0) return;
  if (r == 0) {
    dst[0] = src[0];
    return;
  }
  const auto len = static_cast<size_t>(md[r - 1]);
  const int64_t inner = ms[r - 1];
  const size_t rows = total / len;
  parallel_for(
      threads, rows,
      [&](size_t begin, size_t end) {
        CopyIndex at{};
        int64_t off = 0;
        size_t rest = begin;
        for (size_t d = r - 1; d-- > 0;) {
          at[d] = static_cast<int64_t>(rest % static_cast<size_t>(md[d]));
          rest /= static_cast<size_t>(md[d]);
          off += at[d] * ms[d];
        }
        for (size_t row = begin; row < end; ++row) {
          T* out = dst + row * len;
          const T* in = src + off;
          if (inner == 1) {
            std::memcpy(out, in, len * sizeof(T));
          } else if (inner == 0) {
            std::fill_n(out, len, in[0]);
          } else {
            for (size_t i = 0; i < len; ++i) out[i] = in[static_cast<int64_t>(i) * inner];
          }
          for (size_t d = r - 1; d-- > 0;) {
            off += ms[d];
            if (++at[d] < md[d]) break;
            off -= at[d] * ms[d];
            at[d] = 0;
          }
        }
      },
      std::max<size_t>(1, 16384 / len));
}

// ---- Prepare-time helpers (they allocate: never call them while a kernel runs)

// Strides (in elements) of a row-major tensor with `dims`.
inline std::vector<int64_t> row_major_strides(std::span<const int64_t> dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// Strides of an input broadcast (numpy rules) to `out_dims`: 0 where the input's dim is 1 or
// missing, so walking the output's index space reads the right input element.
inline std::vector<int64_t> broadcast_strides(std::span<const int64_t> in_dims,
                                              std::span<const int64_t> out_dims) {
  std::vector<int64_t> s(out_dims.size(), 0);
  const std::vector<int64_t> own = row_major_strides(in_dims);
  const size_t offset = out_dims.size() - in_dims.size();
  for (size_t i = 0; i < in_dims.size(); ++i) s[offset + i] = in_dims[i] == 1 ? 0 : own[i];
  return s;
}

}  // namespace footprint::runtime::kernels
