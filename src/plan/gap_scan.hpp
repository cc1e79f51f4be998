#pragma once
// Reading a stretch of a sorted, disjoint run's gaps for the least GapPick key
// (free_space.hpp), four gaps at a time where the CPU has AVX2 and one by one otherwise; both
// give the same answers (tests/plan/gap_scan_test.cpp).
//
//   const LeastKey s = least_gap_key(run.data(), from, run.size(), before, b.size);
//   // s.key: the least key of the gaps before run[from], run[from + 1], ... that begin before
//   // `before`; s.end: the first of them that does not.
//   const size_t k = first_with_key(run.data(), from, s.end, s.key, b.size);  // its first gap
#include <cstddef>
#include <cstdint>

#include "free_space.hpp"

namespace footprint::plan::detail {

// The gap before spans[k] is the one between spans[k - 1] and spans[k]; `from` >= 1.
struct LeastKey {
  int64_t key;  // the least GapPick::key of the gaps read (the largest value if none)
  size_t end;   // the first k not read: n, or the first span beginning at or after `before`
};
LeastKey least_gap_key(const Span* spans, size_t from, size_t n, int64_t before, int64_t size);
// The first k in [from, end) whose gap has GapPick::key `key` (one must).
size_t first_with_key(const Span* spans, size_t from, size_t end, int64_t key, int64_t size);

// Each way on its own, for the tests; the AVX2 ones exist on x86 and run only where
// gap_scan_has_avx2().
LeastKey least_gap_key_scalar(const Span* spans, size_t from, size_t n, int64_t before,
                              int64_t size);
size_t first_with_key_scalar(const Span* spans, size_t from, int64_t key, int64_t size);
#if defined(__x86_64__)
LeastKey least_gap_key_avx2(const Span* spans, size_t from, size_t n, int64_t before, int64_t size);
size_t first_with_key_avx2(const Span* spans, size_t from, size_t end, int64_t key, int64_t size);
#endif
bool gap_scan_has_avx2();

}  // namespace footprint::plan::detail
