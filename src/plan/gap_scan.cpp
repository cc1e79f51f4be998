#include "gap_scan.hpp"

#include <algorithm>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace footprint::plan::detail {

LeastKey least_gap_key_scalar(const Span* spans, size_t k, size_t n, int64_t before, int64_t size) {
  int64_t least = std::numeric_limits<int64_t>::max();
  for (; k < n && spans[k].begin < before; ++k) {
    least = std::min(least, GapPick::key(spans[k].begin - spans[k - 1].end, size));
  }
  return {least, k};
}

size_t first_with_key_scalar(const Span* spans, size_t k, int64_t key, int64_t size) {
  while (GapPick::key(spans[k].begin - spans[k - 1].end, size) != key) ++k;
  return k;
}

#if defined(__x86_64__)
namespace {

// Two spans (begin, end, begin, end) as four lanes.
__attribute__((target("avx2"))) __m256i two_spans(const Span* at) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
}

// The GapPick keys of the gaps before spans k..k+3 (lanes in the order k, k+2, k+1, k+3: the
// begins of those spans less the ends of spans k-1..k+2, read as two pairs of overlapping
// loads), and the begins in the same lanes.
struct FourGaps {
  __m256i keys, begins;
};
__attribute__((target("avx2"))) FourGaps four_gaps(const Span* spans, size_t k, __m256i size_v) {
  const __m256i largest = _mm256_set1_epi64x(std::numeric_limits<int64_t>::max());
  const __m256i begins = _mm256_unpacklo_epi64(two_spans(spans + k), two_spans(spans + k + 2));
  const __m256i ends = _mm256_unpackhi_epi64(two_spans(spans + k - 1), two_spans(spans + k + 1));
  const __m256i gap = _mm256_sub_epi64(begins, ends);
  return {_mm256_blendv_epi8(gap, largest, _mm256_cmpgt_epi64(size_v, gap)), begins};
}

bool has_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0;
  return avx2;
}

}  // namespace

// Four gaps an iteration (a minimum does not mind the lanes' order); the begins are sorted, so
// the lanes beginning before `before` are the first ones, however the lanes are ordered.
__attribute__((target("avx2"))) LeastKey least_gap_key_avx2(const Span* spans, size_t k, size_t n,
                                                            int64_t before, int64_t size) {
  static_assert(sizeof(Span) == 2 * sizeof(int64_t));
  const __m256i largest = _mm256_set1_epi64x(std::numeric_limits<int64_t>::max());
  const __m256i size_v = _mm256_set1_epi64x(size);
  const __m256i before_v = _mm256_set1_epi64x(before);
  __m256i least = largest;
  bool stopped = false;
  for (; k + 4 <= n; k += 4) {
    const FourGaps g = four_gaps(spans, k, size_v);
    const __m256i inside = _mm256_cmpgt_epi64(before_v, g.begins);
    const __m256i key = _mm256_blendv_epi8(largest, g.keys, inside);
    least = _mm256_blendv_epi8(least, key, _mm256_cmpgt_epi64(least, key));
    const int lanes = _mm256_movemask_pd(_mm256_castsi256_pd(inside));
    if (lanes != 0xF) {
      k += static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(lanes)));
      stopped = true;
      break;
    }
  }
  alignas(32) int64_t each[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(each), least);
  LeastKey out{std::min({each[0], each[1], each[2], each[3]}), k};
  if (!stopped) {  // the last few, one by one
    const LeastKey tail = least_gap_key_scalar(spans, k, n, before, size);
    out = {std::min(out.key, tail.key), tail.end};
  }
  return out;
}

__attribute__((target("avx2"))) size_t first_with_key_avx2(const Span* spans, size_t k, size_t end,
                                                           int64_t key, int64_t size) {
  const __m256i size_v = _mm256_set1_epi64x(size);
  const __m256i key_v = _mm256_set1_epi64x(key);
  for (; k + 4 <= end; k += 4) {
    const auto lanes = static_cast<unsigned>(_mm256_movemask_pd(
        _mm256_castsi256_pd(_mm256_cmpeq_epi64(four_gaps(spans, k, size_v).keys, key_v))));
    if (lanes != 0) {  // lanes k, k+2, k+1, k+3 into the order k, k+1, k+2, k+3
      const unsigned ordered =
          (lanes & 1U) | ((lanes >> 2) & 1U) << 1 | ((lanes >> 1) & 1U) << 2 | (lanes & 8U);
      return k + static_cast<size_t>(__builtin_ctz(ordered));
    }
  }
  return first_with_key_scalar(spans, k, key, size);
}

LeastKey least_gap_key(const Span* spans, size_t from, size_t n, int64_t before, int64_t size) {
  return has_avx2() ? least_gap_key_avx2(spans, from, n, before, size)
                    : least_gap_key_scalar(spans, from, n, before, size);
}

size_t first_with_key(const Span* spans, size_t from, size_t end, int64_t key, int64_t size) {
  return has_avx2() ? first_with_key_avx2(spans, from, end, key, size)
                    : first_with_key_scalar(spans, from, key, size);
}

bool gap_scan_has_avx2() {
  return has_avx2();
}

#else  // no AVX2 copies off x86

LeastKey least_gap_key(const Span* spans, size_t from, size_t n, int64_t before, int64_t size) {
  return least_gap_key_scalar(spans, from, n, before, size);
}

size_t first_with_key(const Span* spans, size_t from, size_t /*end*/, int64_t key, int64_t size) {
  return first_with_key_scalar(spans, from, key, size);
}

bool gap_scan_has_avx2() {
  return false;
}

#endif

}  // namespace footprint::plan::detail
