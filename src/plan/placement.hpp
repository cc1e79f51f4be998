#pragma once
// Building blocks the planners share: choosing an offset among the space other buffers take,
// placing buffers one by one in a given order, and who conflicts with whom.
#include <cstdint>
#include <span>
#include <vector>

#include "footprint/plan/buffer.hpp"

namespace footprint::plan::detail {

struct Span {
  int64_t begin;
  int64_t end;
};

inline int64_t align_up(int64_t value, int64_t alignment) {
  const int64_t r = value % alignment;
  return r == 0 ? value : value + (alignment - r);
}

// How to pick among the gaps where a buffer fits: the lowest one (first fit, what TFLite Micro
// does) or the smallest one, so big gaps stay whole for big buffers (best fit, TFLite's and XLA's
// greedy planners). Without a fitting gap both go on top of everything.
enum class Fit { lowest, tightest };

// An aligned offset where `size` bytes overlap none of `taken` (sorted in place; spans may
// overlap one another).
int64_t choose_offset(std::vector<Span>& taken, int64_t size, int64_t alignment, Fit fit);

// Places buffers one by one in `order` (a permutation of their indices): each avoids the space of
// the buffers placed before it that it conflicts with. Fixed-offset buffers keep their offsets
// and count as placed from the start. O(n^2): each buffer scans those placed before it.
std::vector<int64_t> place_in_order(std::span<const Buffer> buffers,
                                    std::span<const uint32_t> order, Fit fit);

// For every buffer, the buffers it conflicts with (both directions), by a sweep over time.
std::vector<std::vector<uint32_t>> conflict_lists(std::span<const Buffer> buffers);

// The order of `offsets` (ascending, ties by index): placing in this order with Fit::lowest gives
// every buffer an offset no higher than in `offsets`, so it is how a search starts from a plan.
std::vector<uint32_t> order_by_offset(std::span<const int64_t> offsets);

}  // namespace footprint::plan::detail
