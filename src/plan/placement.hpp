#pragma once
// Building blocks the planners share: choosing an offset among the space other buffers take,
// placing buffers one by one in a given order, and who conflicts with whom.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "deadline.hpp"
#include "footprint/plan/buffer.hpp"

namespace footprint::plan::detail {

struct Span {
  int64_t begin;
  int64_t end;
};

// Offsets are int64: a plan of huge buffers can need more than that holds, and then these throw
// SizeOverflow naming the buffer instead of wrapping (check_buffers bounds each buffer, not sums).
int64_t aligned_offset(const Buffer& b, int64_t at_least);  // rounded up to b's alignment
int64_t top_of(const Buffer& b, int64_t offset);            // offset + size

// Unchecked rounding, for values below a plan already found (the searches): those fit.
inline int64_t align_up(int64_t value, int64_t alignment) {
  const int64_t r = value % alignment;
  return r == 0 ? value : value + (alignment - r);
}

// How to pick among the gaps where a buffer fits: the lowest one (first fit, what TFLite Micro
// does) or the smallest one, so big gaps stay whole for big buffers (best fit, TFLite's and XLA's
// greedy planners). Without a fitting gap both go on top of everything.
enum class Fit { lowest, tightest };

// Chooses an offset for one buffer from the spans others take, seen in order of begin (they may
// overlap one another).
class OffsetChooser {
 public:
  OffsetChooser(const Buffer& b, Fit fit) : b_(b), fit_(fit) {}
  // Takes the next span; false once the choice is made (first fit: the lowest gap that fits).
  bool see(const Span& s) {
    // Only a gap as long as the buffer, and (best fit) tighter than the best so far, is worth
    // aligning: on a training trace most of a thousand gaps are neither.
    const int64_t gap = s.begin - cursor_;
    if (gap > 0 && gap >= b_.size && (fit_ == Fit::lowest || gap < best_gap_) && fits(s)) {
      best_gap_ = gap;
      best_ = at_;
      if (fit_ == Fit::lowest || gap == b_.size) return false;  // none can be tighter
    }
    if (s.end > cursor_) cursor_ = s.end;
    return true;
  }
  // The chosen gap's offset, else on top of every span seen (SizeOverflow when its top cannot be
  // formed).
  int64_t offset() const;

 private:
  bool fits(const Span& s);  // b aligned at the cursor ends by s.begin (sets at_)
  const Buffer& b_;
  Fit fit_;
  int64_t cursor_ = 0;  // everything below is taken or already considered
  int64_t at_ = 0;
  int64_t best_ = -1;
  int64_t best_gap_ = std::numeric_limits<int64_t>::max();
};

// Sorts `spans` by begin and joins those that overlap or touch: their union, sorted and disjoint.
void join(std::vector<Span>& spans);

// An aligned offset where `b` overlaps none of `taken` (sorted by begin in place unless it is
// already; spans may overlap one another).
int64_t choose_offset(std::vector<Span>& taken, const Buffer& b, Fit fit);

struct Placement {
  std::vector<int64_t> offsets;
  bool cut_short = false;  // the deadline passed: the buffers left went on top of the arena
};

// Places buffers one by one in `order` (a permutation of their indices): each avoids the space of
// the buffers placed before it that it meets in time. Fixed-offset buffers keep their offsets
// and count as placed from the start. The space taken comes from a time index (time_index.hpp):
// O(log n) node updates a buffer, and a query reads unions of spans, not every buffer met. When
// the deadline passes, the buffers not yet placed are stacked on top (a valid, worse plan).
Placement place_in_order(std::span<const Buffer> buffers, std::span<const uint32_t> order, Fit fit,
                         const Deadline& deadline);

// For every buffer, the buffers it conflicts with (both directions), by a sweep over time.
// O(n log n + k) time and memory for k conflicting pairs: see overlap_pairs before calling.
std::vector<std::vector<uint32_t>> conflict_lists(std::span<const Buffer> buffers);

// The number of conflicting pairs, in O(n log n) without listing them.
uint64_t overlap_pairs(std::span<const Buffer> buffers);

// The order of `offsets` (ascending, ties by index): placing in this order with Fit::lowest gives
// every buffer an offset no higher than in `offsets`, so it is how a search starts from a plan.
std::vector<uint32_t> order_by_offset(std::span<const int64_t> offsets);

}  // namespace footprint::plan::detail
