// QuantizeLinear and DequantizeLinear (the ONNX ops and com.microsoft's, one semantics), and
// DynamicQuantizeLinear.
//
// y = saturate(round_half_even(x / scale) + zero_point) and y = (x - zero_point) * scale, with the
// scale and zero point per tensor, per slice along an axis or per block of it, as
// graph::ops::LinearQuantization decodes them for inference and for these kernels alike. Elements
// pass through small stack buffers in chunks: loaded as float or int32 whatever their storage
// (float16, bfloat16, the 4-bit types two to a byte), computed in plain loops the compiler
// vectorises, stored back; so one loop serves every pair of types and the run never allocates.
#include "footprint/graph/ops/quantization.hpp"

#include <algorithm>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "dtype_dispatch.hpp"
#include "dynamic_quantize.hpp"
#include "families.hpp"
#include "float16.hpp"
#include "footprint/core/minifloat.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "parallel_for.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;
using graph::ops::Extents;
using graph::ops::LinearQuantization;
using graph::ops::QuantGranularity;
using graph::ops::QuantizeOp;
using graph::ops::QuantLayout;

// What the kernels run: the integer types QuantizeLinear produces (DequantizeLinear also reads
// int32), the 8-bit floats and float4e2m1 (core/minifloat.hpp: x / scale + zero point cast,
// rounding half to even, the 8-bit ones saturating as `saturate` says and float4e2m1 always, no
// integer rounding), from float32, float16 and bfloat16. float8e8m0 is not among them, so the
// rows say so and analyze warns before anything runs.
constexpr DTypeSet kQuantizedTypes{DType::int8,           DType::uint8,          DType::int16,
                                   DType::uint16,         DType::int4,           DType::uint4,
                                   DType::float8e4m3fn,   DType::float8e4m3fnuz, DType::float8e5m2,
                                   DType::float8e5m2fnuz, DType::float4e2m1};
constexpr DTypeSet kDequantizedTypes = kQuantizedTypes | DTypeSet{DType::int32};
constexpr DTypeSet kRealTypes{DType::float32, DType::float16, DType::bfloat16};

// Elements per pass through the stack buffers.
constexpr size_t kChunk = 256;

// ---- Loading and storing chunks whatever the storage type

void load_reals(DType t, const void* base, size_t k, size_t n, float* out) {
  if (t == DType::float32) {
    std::memcpy(out, static_cast<const float*>(base) + k, n * sizeof(float));
  } else if (t == DType::float16) {
    const Float16* p = static_cast<const Float16*>(base) + k;
    for (size_t i = 0; i < n; ++i) out[i] = to_float(p[i]);
  } else if (t == DType::bfloat16) {
    const BFloat16* p = static_cast<const BFloat16*>(base) + k;
    for (size_t i = 0; i < n; ++i) out[i] = to_float(p[i]);
  }
}

void store_reals(DType t, void* base, size_t k, size_t n, const float* in) {
  if (t == DType::float32) {
    std::memcpy(static_cast<float*>(base) + k, in, n * sizeof(float));
  } else if (t == DType::float16) {
    Float16* p = static_cast<Float16*>(base) + k;
    for (size_t i = 0; i < n; ++i) p[i] = to_float16(in[i]);
  } else if (t == DType::bfloat16) {
    BFloat16* p = static_cast<BFloat16*>(base) + k;
    for (size_t i = 0; i < n; ++i) p[i] = to_bfloat16(in[i]);
  }
}

// Each value rounded to the nearest of type t (float16, bfloat16; float32 leaves them): the
// precision the spec computes x / scale in.
void round_reals(DType t, float* v, size_t n) {
  if (t == DType::float16) {
    for (size_t i = 0; i < n; ++i) v[i] = to_float(to_float16(v[i]));
  } else if (t == DType::bfloat16) {
    for (size_t i = 0; i < n; ++i) v[i] = to_float(to_bfloat16(v[i]));
  }
}

// The floats whose elements convert with x / scale + zero point and no integer rounding.
bool is_small_float(DType t) {
  return is_float8(t) || t == DType::float4e2m1;
}

// Elements k .. k+n-1 of an 8-bit float or float4e2m1 tensor (two a byte, as 4-bit integers
// lie: element e in the low nibble of byte e / 2 when e is even), decoded exactly.
void load_small_floats(DType t, const void* base, size_t k, size_t n, float* out) {
  const auto* p = static_cast<const uint8_t*>(base);
  if (t == DType::float4e2m1) {
    for (size_t i = 0; i < n; ++i) {
      const size_t e = k + i;
      out[i] = decode_float4e2m1(static_cast<uint8_t>((p[e >> 1] >> ((e & 1) * 4)) & 0xF));
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) out[i] = decode_float8(t, p[k + i]);
}

template <class T>
void load_whole(const void* base, size_t k, size_t n, int32_t* out) {
  const T* p = static_cast<const T*>(base) + k;
  // int8 elements are numbers: sign extension is meant.
  // NOLINTNEXTLINE(bugprone-signed-char-misuse)
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(p[i]);
}

// Element e of a 4-bit tensor is the low nibble of byte e / 2 when e is even, the high one
// when odd; int4 sign-extends.
void load_nibbles(const void* base, size_t k, size_t n, bool is_signed, int32_t* out) {
  const auto* p = static_cast<const uint8_t*>(base);
  for (size_t i = 0; i < n; ++i) {
    const size_t e = k + i;
    const int32_t v = (p[e >> 1] >> ((e & 1) * 4)) & 0xF;
    out[i] = is_signed ? (v ^ 8) - 8 : v;
  }
}

void load_ints(DType t, const void* base, size_t k, size_t n, int32_t* out) {
  switch (t) {
    case DType::int8:
      return load_whole<int8_t>(base, k, n, out);
    case DType::uint8:
      return load_whole<uint8_t>(base, k, n, out);
    case DType::int16:
      return load_whole<int16_t>(base, k, n, out);
    case DType::uint16:
      return load_whole<uint16_t>(base, k, n, out);
    case DType::int32:
      return load_whole<int32_t>(base, k, n, out);
    case DType::int4:
    case DType::uint4:
      return load_nibbles(base, k, n, t == DType::int4, out);
    default:
      return;
  }
}

template <class T>
void store_whole(void* base, size_t k, size_t n, const int32_t* in) {
  T* p = static_cast<T*>(base) + k;
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(in[i]);
}

// Writes elements k .. k+n-1 of a 4-bit tensor. An odd first element fills the high nibble of a
// byte whose low one an earlier call wrote; a last element at an even index writes its byte
// whole, high nibble 0: the padding of an odd count, or the next element's, which a later call
// of the same thread fills (threads split 4-bit outputs at even indices).
void store_nibbles(void* base, size_t k, size_t n, const int32_t* in) {
  auto* p = static_cast<uint8_t*>(base);
  size_t i = 0;
  if (n > 0 && (k & 1) != 0) {
    uint8_t& b = p[k >> 1];
    b = static_cast<uint8_t>((b & 0x0F) | ((in[0] & 0xF) << 4));
    i = 1;
  }
  for (; i + 1 < n; i += 2) {
    p[(k + i) >> 1] = static_cast<uint8_t>((in[i] & 0xF) | ((in[i + 1] & 0xF) << 4));
  }
  if (i < n) p[(k + i) >> 1] = static_cast<uint8_t>(in[i] & 0xF);
}

void store_ints(DType t, void* base, size_t k, size_t n, const int32_t* in) {
  switch (t) {
    case DType::int8:
      return store_whole<int8_t>(base, k, n, in);
    case DType::uint8:
      return store_whole<uint8_t>(base, k, n, in);
    case DType::int16:
      return store_whole<int16_t>(base, k, n, in);
    case DType::uint16:
      return store_whole<uint16_t>(base, k, n, in);
    case DType::int4:
    case DType::uint4:
      return store_nibbles(base, k, n, in);
    default:
      return;
  }
}

// ---- Where each element's scale is

// The integer range of a quantized type, from core's table.
struct IntRange {
  float lo = 0;
  float hi = 0;
};

IntRange range_of(DType t) {
  const DTypeTraits& tr = dtype_traits(t);
  const int64_t span = int64_t{1} << tr.bits;
  const int64_t half = span >> 1;
  if (tr.kind == DTypeKind::signed_int) {
    return {static_cast<float>(-half), static_cast<float>(half - 1)};
  }
  return {0.0F, static_cast<float>(span - 1)};
}

// x seen as [outer, extent, inner] around the layout's axis.
struct Geometry {
  QuantLayout layout;
  size_t extent = 1;
  size_t inner = 1;
};

Geometry geometry_of(const QuantLayout& l, const TensorRef& x) {
  Geometry g{l, 1, x.numel()};
  if (l.granularity == QuantGranularity::per_tensor) return g;
  g.extent = static_cast<size_t>(x.dims[l.axis]);
  g.inner = 1;
  for (size_t d = l.axis + 1; d < x.rank(); ++d) g.inner *= static_cast<size_t>(x.dims[d]);
  return g;
}

// Calls run(k, n, s, per_element) for consecutive runs covering x's elements [begin, end): each
// run's elements k .. k+n-1 use scale (and zero point) element s when per_element is false, or
// elements s .. s+n-1, one each, when it is true.
template <class F>
void for_each_run(const Geometry& g, size_t begin, size_t end, F&& run) {
  const QuantLayout& l = g.layout;
  const size_t extent = g.extent;
  const size_t inner = g.inner;
  size_t k = begin;
  while (k < end) {
    size_t n = end - k;
    if (l.granularity == QuantGranularity::per_tensor) {
      run(k, n, size_t{0}, false);
    } else if (inner == 1) {
      // The axis is the innermost: along a row of `extent` elements the scale changes every
      // element (per axis) or every block.
      const size_t row = k / extent;
      const size_t a = k % extent;
      if (l.granularity == QuantGranularity::per_axis) {
        n = std::min(end, (row + 1) * extent) - k;
        run(k, n, a, true);
      } else {
        const auto block = static_cast<size_t>(l.block);
        const size_t b = a / block;
        n = std::min(end, row * extent + std::min((b + 1) * block, extent)) - k;
        run(k, n, row * static_cast<size_t>(l.blocks) + b, false);
      }
    } else {
      // A row of `inner` elements at one index along the axis: one scale (per axis), or the
      // block's row of scales (blocked).
      const size_t r = k / inner;
      const size_t a = r % extent;
      n = std::min(end, (r + 1) * inner) - k;
      if (l.granularity == QuantGranularity::per_axis) {
        run(k, n, a, false);
      } else {
        const size_t o = r / extent;
        const size_t s =
            (o * static_cast<size_t>(l.blocks) + a / static_cast<size_t>(l.block)) * inner +
            k % inner;
        run(k, n, s, true);
      }
    }
    k += n;
  }
}

// Splits x's elements among threads, at even indices when the output packs two a byte, so no
// two threads write one byte.
template <class F>
void parallel_runs(int threads, const Geometry& g, size_t numel, bool nibbles, F&& run) {
  if (!nibbles) {
    parallel_for(threads, numel, [&](size_t b, size_t e) { for_each_run(g, b, e, run); });
    return;
  }
  parallel_for(threads, (numel + 1) / 2,
               [&](size_t b, size_t e) { for_each_run(g, 2 * b, std::min(2 * e, numel), run); });
}

// ---- Quantize and dequantize one run

struct QuantizeArgs {
  const void* x = nullptr;
  DType x_type = DType::undefined;
  const void* scale = nullptr;
  DType scale_type = DType::undefined;
  const void* zero_point = nullptr;  // of y_type; nullptr: 0
  DType precision = DType::float32;
  void* y = nullptr;
  DType y_type = DType::undefined;
  IntRange range;
  bool saturate = true;  // an 8-bit float y: past its largest value saturate, else NaN/inf
};

// The scales and small-float zero points (absent: 0) of m elements from index `at`: one each
// (per_element), or the one at `at` repeated.
void small_float_parameters(DType scale_type, const void* scale, DType zero_type, const void* zero,
                            size_t at, size_t m, bool per_element, float* ss, float* zs) {
  const size_t count = per_element ? m : 1;
  load_reals(scale_type, scale, at, count, ss);
  if (zero != nullptr) {
    load_small_floats(zero_type, zero, at, count, zs);
  } else {
    std::fill_n(zs, count, 0.0F);
  }
  if (!per_element) {
    std::fill_n(ss + 1, m - 1, ss[0]);
    std::fill_n(zs + 1, m - 1, zs[0]);
  }
}

// QuantizeLinear to an 8-bit float or float4e2m1: x / scale (in the precision) plus the zero
// point, cast.
void quantize_small_float_run(const QuantizeArgs& a, size_t k, size_t n, size_t s,
                              bool per_element) {
  alignas(64) float xs[kChunk];
  alignas(64) float ss[kChunk];
  alignas(64) float zs[kChunk];
  alignas(64) int32_t nibbles[kChunk];
  for (size_t c = 0; c < n; c += kChunk) {
    const size_t m = std::min(kChunk, n - c);
    small_float_parameters(a.scale_type, a.scale, a.y_type, a.zero_point, per_element ? s + c : s,
                           m, per_element, ss, zs);
    round_reals(a.precision, ss, m);
    load_reals(a.x_type, a.x, k + c, m, xs);
    round_reals(a.precision, xs, m);
    for (size_t i = 0; i < m; ++i) xs[i] = xs[i] / ss[i];
    round_reals(a.precision, xs, m);
    if (a.y_type == DType::float4e2m1) {
      for (size_t i = 0; i < m; ++i) nibbles[i] = encode_float4e2m1(xs[i] + zs[i]);
      store_nibbles(a.y, k + c, m, nibbles);
      continue;
    }
    auto* y = static_cast<uint8_t*>(a.y) + k + c;
    for (size_t i = 0; i < m; ++i) y[i] = encode_float8(a.y_type, xs[i] + zs[i], a.saturate);
  }
}

// Half to even: adding and removing 1.5 x 2^23 leaves the nearest integer (ties to even) of any
// float within 2^22, which the clamp before guarantees; beyond it every value saturates anyway.
// NaN goes to the bottom of the range (as the reference's int32 conversion makes it), before
// any conversion to an integer could be undefined.
void saturate_round(const float* q, const float* z, size_t n, IntRange r, int32_t* out) {
  constexpr float kLimit = 4194304.0F;   // 2^22
  constexpr float kMagic = 12582912.0F;  // 1.5 x 2^23
  for (size_t i = 0; i < n; ++i) {
    float v = std::min(kLimit, std::max(-kLimit, q[i]));
    v = (v + kMagic) - kMagic;
    v = std::min(r.hi, std::max(r.lo, v + z[i]));
    out[i] = static_cast<int32_t>(v);
  }
}

// The common case, float32 to a byte type with one scale over the run, as one loop compiled at
// the CPU's vector width, giving the bytes saturate_round gives. The loops take their operands by
// value and restrict: a byte store may alias anything, so a loop reading them through the closure's
// references would reload them on every element and never vectorise.
//
// It skips saturate_round's first clamp, whose branches keep GCC from vectorising the loop under
// -ftrapping-math: a quotient beyond 2^22 is not rounded exactly by the magic number, but it
// stays beyond any byte type's range and saturates as the clamped one does (infinities too; NaN
// falls to the bottom as there).
template <class T>
void quantize_loop(const float* __restrict x, size_t n, float scale, float zero, IntRange r,
                   T* __restrict y) {
  constexpr float kMagic = 12582912.0F;  // 1.5 x 2^23
#pragma omp simd
  for (size_t i = 0; i < n; ++i) {
    const float v = ((x[i] / scale) + kMagic) - kMagic;
    y[i] = static_cast<T>(static_cast<int32_t>(std::min(r.hi, std::max(r.lo, v + zero))));
  }
}

#if defined(FOOTPRINT_WIDE_VECTORS)
// quantize_loop's bytes, 16 to an AVX-512 vector, multiplying by 1 / scale where the loop
// divides: a division of 16 floats takes about 10 cycles, which made QuantizeLinear a fifth of a
// QDQ ViT's run (100 steps, 3.3 of 16.4 ms at one thread). The product is within 2.1 ulp of the
// rounded quotient, so below 1024 (larger ones saturate either way) it is within 2^-13 of it,
// and both round to the same integer unless the product lies that close to a half: those lanes
// (a few per million) are divided as the loop does. NaN goes to the bottom of the range as there
// (max_ps returns its second operand for NaN).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <class T>
__attribute__((target("avx512f,avx512bw"))) void quantize_avx512(const float* x, size_t n,
                                                                 float scale, float zero,
                                                                 IntRange r, T* y) {
  const __m512 inverse = _mm512_set1_ps(1.0F / scale);
  const __m512 divisor = _mm512_set1_ps(scale);
  const __m512 near_half = _mm512_set1_ps(0.5F - 1.0F / 8192.0F);
  const __m512 small = _mm512_set1_ps(1024.0F);
  const __m512 z = _mm512_set1_ps(zero);
  const __m512 lo = _mm512_set1_ps(r.lo);
  const __m512 hi = _mm512_set1_ps(r.hi);
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  for (size_t i = 0; i < n; i += 16) {
    const __mmask16 k =
        n - i >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1U << (n - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
    __m512 q = _mm512_mul_ps(v, inverse);
    __m512 rounded = _mm512_roundscale_ps(q, kNearest);
    const __m512 off = _mm512_abs_ps(_mm512_sub_ps(q, rounded));
    const __mmask16 redo =
        _mm512_mask_cmp_ps_mask(_mm512_mask_cmp_ps_mask(k, off, near_half, _CMP_GT_OQ),
                                _mm512_abs_ps(q), small, _CMP_LT_OQ);
    if (redo != 0) {
      q = _mm512_mask_div_ps(q, redo, v, divisor);
      rounded = _mm512_roundscale_ps(q, kNearest);
    }
    const __m512 t = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(rounded, z), lo), hi);
    const __m512i w = _mm512_cvttps_epi32(t);
    if constexpr (std::is_same_v<T, uint8_t>) {
      _mm512_mask_cvtusepi32_storeu_epi8(y + i, k, w);
    } else {
      _mm512_mask_cvtsepi32_storeu_epi8(y + i, k, w);
    }
  }
}
#pragma GCC diagnostic pop
#endif

template <class T>
void quantize_floats(const float* x, size_t n, float scale, float zero, IntRange r, T* y) {
#if defined(FOOTPRINT_WIDE_VECTORS)
  // A reciprocal that is not a normal float (a scale near the smallest or largest floats) would
  // turn 0 into NaN or lose the bound above: those divide.
  if (wide::host_isa() == wide::Isa::avx512 && std::isnormal(scale) &&
      std::isnormal(1.0F / scale) && __builtin_cpu_supports("avx512bw")) {
    return quantize_avx512(x, n, scale, zero, r, y);
  }
#endif
  with_wide_vectors([=] { quantize_loop(x, n, scale, zero, r, y); });
}

template <class T>
void dequantize_loop(const T* __restrict x, size_t n, float scale, int32_t zero,
                     float* __restrict y) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) y[i] = static_cast<float>(int32_t{x[i]} - zero) * scale;
}

template <class T>
void dequantize_bytes(const T* x, size_t n, float scale, int32_t zero, float* y) {
  with_wide_vectors([=] { dequantize_loop(x, n, scale, zero, y); });
}

bool is_byte(DType t) {
  return t == DType::int8 || t == DType::uint8;
}

void quantize_run(const QuantizeArgs& a, size_t k, size_t n, size_t s, bool per_element) {
  if (is_small_float(a.y_type)) return quantize_small_float_run(a, k, n, s, per_element);
  if (!per_element && a.x_type == DType::float32 && a.precision == DType::float32 &&
      is_byte(a.y_type)) {
    float s0 = 0;
    int32_t z0 = 0;
    load_reals(a.scale_type, a.scale, s, 1, &s0);
    if (a.zero_point != nullptr) load_ints(a.y_type, a.zero_point, s, 1, &z0);
    const float* x = static_cast<const float*>(a.x) + k;
    const auto z = static_cast<float>(z0);
    if (a.y_type == DType::int8) {
      return quantize_floats(x, n, s0, z, a.range, static_cast<int8_t*>(a.y) + k);
    }
    return quantize_floats(x, n, s0, z, a.range, static_cast<uint8_t*>(a.y) + k);
  }
  alignas(64) float xs[kChunk];
  alignas(64) float ss[kChunk];
  alignas(64) float zs[kChunk];
  alignas(64) int32_t vs[kChunk];
  float s0 = 0;
  float z0 = 0;
  if (!per_element) {
    load_reals(a.scale_type, a.scale, s, 1, &s0);
    round_reals(a.precision, &s0, 1);
    if (a.zero_point != nullptr) {
      int32_t z = 0;
      load_ints(a.y_type, a.zero_point, s, 1, &z);
      z0 = static_cast<float>(z);
    }
  }
  for (size_t c = 0; c < n; c += kChunk) {
    const size_t m = std::min(kChunk, n - c);
    if (per_element) {
      load_reals(a.scale_type, a.scale, s + c, m, ss);
      round_reals(a.precision, ss, m);
      if (a.zero_point != nullptr) {
        load_ints(a.y_type, a.zero_point, s + c, m, vs);
        for (size_t i = 0; i < m; ++i) zs[i] = static_cast<float>(vs[i]);
      } else {
        std::fill_n(zs, m, 0.0F);
      }
    } else {
      std::fill_n(ss, m, s0);
      std::fill_n(zs, m, z0);
    }
    load_reals(a.x_type, a.x, k + c, m, xs);
    round_reals(a.precision, xs, m);
    for (size_t i = 0; i < m; ++i) xs[i] = xs[i] / ss[i];
    round_reals(a.precision, xs, m);
    saturate_round(xs, zs, m, a.range, vs);
    store_ints(a.y_type, a.y, k + c, m, vs);
  }
}

struct DequantizeArgs {
  const void* x = nullptr;
  DType x_type = DType::undefined;
  const void* scale = nullptr;
  DType scale_type = DType::undefined;
  const void* zero_point = nullptr;  // of x_type; nullptr: 0
  void* y = nullptr;
  DType y_type = DType::undefined;
};

// DequantizeLinear of an 8-bit float or float4e2m1: (x - zero point) * scale, each decoded
// exactly.
void dequantize_small_float_run(const DequantizeArgs& a, size_t k, size_t n, size_t s,
                                bool per_element) {
  alignas(64) float xs[kChunk];
  alignas(64) float zs[kChunk];
  alignas(64) float ss[kChunk];
  for (size_t c = 0; c < n; c += kChunk) {
    const size_t m = std::min(kChunk, n - c);
    small_float_parameters(a.scale_type, a.scale, a.x_type, a.zero_point, per_element ? s + c : s,
                           m, per_element, ss, zs);
    load_small_floats(a.x_type, a.x, k + c, m, xs);
    for (size_t i = 0; i < m; ++i) xs[i] = (xs[i] - zs[i]) * ss[i];
    store_reals(a.y_type, a.y, k + c, m, xs);
  }
}

void dequantize_run(const DequantizeArgs& a, size_t k, size_t n, size_t s, bool per_element) {
  if (is_small_float(a.x_type)) return dequantize_small_float_run(a, k, n, s, per_element);
  if (!per_element && is_byte(a.x_type) && a.y_type == DType::float32) {
    float s0 = 0;
    int32_t z0 = 0;
    load_reals(a.scale_type, a.scale, s, 1, &s0);
    if (a.zero_point != nullptr) load_ints(a.x_type, a.zero_point, s, 1, &z0);
    float* y = static_cast<float*>(a.y) + k;
    if (a.x_type == DType::int8) {
      return dequantize_bytes(static_cast<const int8_t*>(a.x) + k, n, s0, z0, y);
    }
    return dequantize_bytes(static_cast<const uint8_t*>(a.x) + k, n, s0, z0, y);
  }
  alignas(64) int32_t xs[kChunk];
  alignas(64) int32_t zs[kChunk];
  alignas(64) float ss[kChunk];
  alignas(64) float ys[kChunk];
  float s0 = 0;
  int32_t z0 = 0;
  if (!per_element) {
    load_reals(a.scale_type, a.scale, s, 1, &s0);
    if (a.zero_point != nullptr) load_ints(a.x_type, a.zero_point, s, 1, &z0);
  }
  for (size_t c = 0; c < n; c += kChunk) {
    const size_t m = std::min(kChunk, n - c);
    if (per_element) {
      load_reals(a.scale_type, a.scale, s + c, m, ss);
      if (a.zero_point != nullptr) {
        load_ints(a.x_type, a.zero_point, s + c, m, zs);
      } else {
        std::fill_n(zs, m, 0);
      }
    } else {
      std::fill_n(ss, m, s0);
      std::fill_n(zs, m, z0);
    }
    load_ints(a.x_type, a.x, k + c, m, xs);
    if (a.x_type == DType::int32) {
      // The difference of two int32 may not fit one.
      for (size_t i = 0; i < m; ++i) {
        ys[i] = static_cast<float>(int64_t{xs[i]} - int64_t{zs[i]}) * ss[i];
      }
    } else {
      for (size_t i = 0; i < m; ++i) ys[i] = static_cast<float>(xs[i] - zs[i]) * ss[i];
    }
    store_reals(a.y_type, a.y, k + c, m, ys);
  }
}

// ---- The kernels

// The node's decoded attributes, and whether its scales were checked when it was prepared (they
// are constants then); scales computed while running are checked on each run.
class QuantizationState final : public graph::KernelState {
 public:
  explicit QuantizationState(const LinearQuantization& decoded) : q(decoded) {}
  LinearQuantization q;
  bool scales_checked = false;
};

template <QuantizeOp kOp>
LinearQuantization decode(const KernelContext& ctx) {
  const DType zp = ctx.has_input(2) ? ctx.input(2).dtype : DType::undefined;
  LinearQuantization q = LinearQuantization::decode(ctx.node(), ctx.node_id(), kOp,
                                                    ctx.input(0).dtype, ctx.input(1).dtype, zp);
  const std::string quantized(dtype_name(q.quantized));
  const std::string real(dtype_name(q.real));
  if (kOp == QuantizeOp::quantize) {
    if (!kQuantizedTypes.contains(q.quantized)) {
      ctx.fail("quantizing to " + quantized + " is not supported (footprint quantizes to " +
               kQuantizedTypes.to_string() + ")");
    }
    if (!kRealTypes.contains(q.real)) {
      ctx.fail("quantizing " + real + " is not supported (footprint quantizes " +
               kRealTypes.to_string() + ")");
    }
  } else if (!kDequantizedTypes.contains(q.quantized)) {
    ctx.fail("dequantizing " + quantized + " is not supported (footprint dequantizes " +
             kDequantizedTypes.to_string() + ")");
  }
  return q;
}

QuantLayout layout_of(const KernelContext& ctx, const LinearQuantization& q) {
  std::optional<Extents> zp;
  if (ctx.has_input(2)) zp = Extents::of(ctx.input(2).dims);
  return *q.layout(ctx.node(), ctx.node_id(), Extents::of(ctx.input(0).dims),
                   Extents::of(ctx.input(1).dims), zp);
}

void check_scales(const KernelContext& ctx, QuantizeOp op, const TensorRef& scale) {
  alignas(64) float buf[kChunk];
  const size_t n = scale.numel();
  for (size_t c = 0; c < n; c += kChunk) {
    const size_t m = std::min(kChunk, n - c);
    load_reals(scale.dtype, scale.data, c, m, buf);
    for (size_t i = 0; i < m; ++i) {
      if (!(buf[i] > 0) || !std::isfinite(buf[i])) {
        graph::ops::check_scale(ctx.node(), ctx.node_id(), op, c + i, buf[i]);
      }
    }
  }
}

template <QuantizeOp kOp>
std::unique_ptr<graph::KernelState> linear_quantization_prepare(const KernelContext& ctx) {
  auto state = std::make_unique<QuantizationState>(decode<kOp>(ctx));
  layout_of(ctx, state->q);
  const TensorRef& scale = ctx.input(1);
  if (scale.data != nullptr) {
    check_scales(ctx, kOp, scale);
    state->scales_checked = true;
  }
  return state;
}

template <QuantizeOp kOp>
void linear_quantization_kernel(KernelContext& ctx) {
  const auto* state = dynamic_cast<const QuantizationState*>(ctx.state());
  // Unprepared (a lone kernel run) it decodes here, allocating nothing unless it fails.
  const LinearQuantization q = state != nullptr ? state->q : decode<kOp>(ctx);
  const TensorRef& x = ctx.input(0);
  const TensorRef& scale = ctx.input(1);
  const TensorRef* zp = ctx.input_or_null(2);
  TensorRef& y = ctx.output(0);
  const Geometry g = geometry_of(layout_of(ctx, q), x);
  if (state == nullptr || !state->scales_checked) check_scales(ctx, kOp, scale);
  const void* zero_point = zp != nullptr ? zp->data : nullptr;
  if constexpr (kOp == QuantizeOp::quantize) {
    const QuantizeArgs a{
        x.data,      x.dtype, scale.data, scale.dtype,       zero_point,
        q.precision, y.data,  y.dtype,    range_of(y.dtype), ctx.attr_int("saturate", 1) != 0};
    parallel_runs(ctx.threads(), g, x.numel(), dtype_traits(y.dtype).packed,
                  [&](size_t k, size_t n, size_t s, bool per_element) {
                    quantize_run(a, k, n, s, per_element);
                  });
  } else {
    const DequantizeArgs a{x.data, x.dtype, scale.data, scale.dtype, zero_point, y.data, y.dtype};
    parallel_runs(ctx.threads(), g, x.numel(), false,
                  [&](size_t k, size_t n, size_t s, bool per_element) {
                    dequantize_run(a, k, n, s, per_element);
                  });
  }
}

// DynamicQuantizeLinear: uint8 with the scale and zero point the data give, as the spec
// defines them: the range [min(0, min x), max(0, max x)] (so 0 is always exact) spread over
// 0 .. 255, the zero point that range's image of 0, saturated and rounded half to even; then x
// quantized with them per tensor. NaN elements do not widen the range.
void dynamic_quantize_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  if (x.dtype != DType::float32) fail_dtype(ctx, x.dtype);
  const float* p = x.as<const float>();
  const size_t n = x.numel();
  float lo = 0;
  float hi = 0;
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, p[i]);
    hi = std::max(hi, p[i]);
  }
  const IntRange range = range_of(DType::uint8);
  const float scale = (hi == lo ? 1.0F : hi - lo) / (range.hi - range.lo);
  const float initial = range.lo - lo / scale;
  const float zp_real = std::min(range.hi, std::max(range.lo, initial));
  int32_t zp_int = 0;
  const float no_offset = 0;
  saturate_round(&zp_real, &no_offset, 1, range, &zp_int);
  const auto zp = static_cast<uint8_t>(zp_int);

  TensorRef& y = ctx.output(0);
  const QuantizeArgs a{p,      DType::float32, &scale, DType::float32, &zp, DType::float32,
                       y.data, y.dtype,        range};
  const Geometry g{QuantLayout{}, 1, n};
  parallel_runs(ctx.threads(), g, n, false, [&](size_t k, size_t m, size_t s, bool per_element) {
    quantize_run(a, k, m, s, per_element);
  });
  if (TensorRef* out = ctx.output_or_null(1)) *out->as<float>() = scale;
  if (TensorRef* out = ctx.output_or_null(2)) *out->as<uint8_t>() = zp;
}

}  // namespace

void dynamic_quantize_linear(graph::KernelContext& ctx) {
  dynamic_quantize_kernel(ctx);
}

void register_quantization(graph::OpRegistry& r) {
  for (const std::string_view domain : {std::string_view{}, std::string_view{"com.microsoft"}}) {
    graph::OpSchema& q = r.row(domain, "QuantizeLinear");
    q.kernel = linear_quantization_kernel<QuantizeOp::quantize>;
    q.prepare = linear_quantization_prepare<QuantizeOp::quantize>;
    q.kernel_dtypes = kQuantizedTypes;
    q.kernel_dtype_of = -1;  // the type quantized to (input 0 is a float)
    graph::OpSchema& dq = r.row(domain, "DequantizeLinear");
    dq.kernel = linear_quantization_kernel<QuantizeOp::dequantize>;
    dq.prepare = linear_quantization_prepare<QuantizeOp::dequantize>;
    dq.kernel_dtypes = kDequantizedTypes;
    // Channels-last (elementwise) only without blocks: a block lies along an axis.
    for (graph::OpSchema* row : {&q, &dq}) {
      row->channels_last_runs = [](const graph::Node& n) {
        return graph::attr_int(n, "block_size", 0) == 0;
      };
    }
  }
  graph::OpSchema& dynamic = r.row("", "DynamicQuantizeLinear");
  dynamic.kernel = dynamic_quantize_kernel;
  dynamic.kernel_dtypes = {DType::float32};
}

}  // namespace footprint::runtime::kernels
