#pragma once
// Choosing an offset for one buffer when the space the others take comes as a few sorted unions
// (the time index's runs) rather than one list: the gaps are read where they are, not merged into
// one list first.
//
//   GapPick pick(buffer, Fit::tightest);
//   for (auto [begin, end] : free gaps in offset order) if (!pick.see(begin, end)) break;
//   const int64_t offset = pick.offset(top);  // the chosen gap, else `top` aligned
//
// Two ways to find the gaps of the union of a query's runs, both giving choose_offset's answer:
//   * choose_among(long, short, ...): a long union read once, gap by gap, with the few spans of a
//     short one cutting into it (a query over a short lifetime: the kept path union and a few
//     small nodes);
//   * FreeGaps: the complement of one run (the most solid), then each other run taken out of it,
//     keeping only gaps the buffer could use (a query over a long lifetime: many large runs whose
//     union is nearly solid, so the gaps left are few however long the runs).
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "footprint/plan/buffer.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {

// The best of the free gaps seen so far for one buffer: the smallest that fits, the lowest on
// ties (Fit::tightest), or the lowest that fits (Fit::lowest); the same choice as OffsetChooser.
class GapPick {
 public:
  GapPick(const Buffer& b, Fit fit) : b_(b), size_(b.size), fit_(fit) {}
  // Sees the free gap [begin, end), gaps in order of begin; false once none later can be chosen.
  bool see(int64_t begin, int64_t end) {
    const int64_t gap = end - begin;
    // One branch, rarely taken once a tight gap is known: gaps too small count as no gap.
    if (key(gap, size_) >= best_gap_) [[likely]]
      return true;
    return take(begin, gap);
  }
  // The chosen gap's offset, else `top` aligned (SizeOverflow when the buffer's end there cannot
  // be formed).
  int64_t offset(int64_t top) const;
  // A gap is looked at only if its key (below) is under this: see() ignores the others.
  int64_t threshold() const { return best_gap_; }
  // The key see() compares: the gap's length, or the largest value when the buffer cannot fit.
  static int64_t key(int64_t gap, int64_t size) {
    const int64_t too_small = (gap - size) >> 63;  // all ones when the gap is too small
    return gap | (too_small & std::numeric_limits<int64_t>::max());
  }

 private:
  bool take(int64_t begin, int64_t gap) {
    int64_t at = begin;
    if (b_.alignment != 1) {
      const int64_t pad = (b_.alignment - begin % b_.alignment) % b_.alignment;
      if (pad > gap - b_.size) return true;
      at = begin + pad;
    }
    best_gap_ = gap;
    best_ = at;
    return fit_ == Fit::tightest && gap != b_.size;  // none can be lower, or tighter
  }
  const Buffer& b_;
  int64_t size_;  // b_.size, in a register for the loop over gaps rather than read through b_
  Fit fit_;
  int64_t best_ = -1;
  int64_t best_gap_ = std::numeric_limits<int64_t>::max();
};

// The offset for `b` among the space taken by the long run `p` and `short_run`, each sorted by
// begin and disjoint: what choose_offset gives for their spans merged, in one pass over both.
int64_t choose_among(std::span<const Span> p, std::span<const Span> short_run, const Buffer& b,
                     Fit fit);

// The free space below the top of a union of runs (each sorted by begin and disjoint), as gaps
// no shorter than `min_length`; gaps only shrink as runs are taken out, so the shorter ones are
// dropped at once.
class FreeGaps {
 public:
  // The gaps of `run` from offset 0 up to its top.
  void reset(std::span<const Span> run, int64_t min_length);
  // Takes the spans of `run` out of the gaps, and raises the top over those above it. Finds the
  // spans meeting each gap by galloping, so a long run costs O(gaps log(run / gaps)).
  void take_out(std::span<const Span> run);
  // choose_offset's answer over the gaps and the top.
  int64_t choose(const Buffer& b, Fit fit) const;
  size_t size() const { return gaps_.size(); }

 private:
  void keep(int64_t begin, int64_t end) {
    if (end - begin >= min_length_) next_.push_back({begin, end});
  }
  std::vector<Span> gaps_;  // sorted, disjoint, all below top_
  std::vector<Span> next_;
  int64_t top_ = 0;
  int64_t min_length_ = 1;
};

}  // namespace footprint::plan::detail
