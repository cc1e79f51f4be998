#include "free_space.hpp"

#include <algorithm>
#include <limits>

#include "gap_scan.hpp"

namespace footprint::plan::detail {
namespace {

// The first index at or after `from` whose span satisfies `past` (false for a prefix of the run,
// true after it), by galloping: O(log distance).
template <typename Past>
size_t gallop(std::span<const Span> run, size_t from, Past past) {
  size_t lo = from;
  size_t hi = from;
  for (size_t step = 1; hi < run.size() && !past(run[hi]); step *= 2) {
    lo = hi + 1;
    hi += step;
  }
  hi = std::min(hi, run.size());
  return static_cast<size_t>(std::partition_point(run.begin() + static_cast<ptrdiff_t>(lo),
                                                  run.begin() + static_cast<ptrdiff_t>(hi),
                                                  [&](const Span& s) { return !past(s); }) -
                             run.begin());
}

// The first span at or after `from` that ends after `at` (in a run sorted by begin and disjoint,
// ends increase too).
size_t first_ending_after(std::span<const Span> run, size_t from, int64_t at) {
  return gallop(run, from, [at](const Span& s) { return s.end > at; });
}

}  // namespace

int64_t GapPick::offset(int64_t top) const {
  const int64_t at = best_ >= 0 ? best_ : aligned_offset(b_, top);
  top_of(b_, at);  // the caller will form the end: refuse here if it cannot be formed
  return at;
}

int64_t choose_among(std::span<const Span> p, std::span<const Span> short_run, const Buffer& b,
                     Fit fit) {
  GapPick pick(b, fit);
  int64_t cursor = 0;  // everything below is taken or already seen
  size_t i = 0;
  // When the tightest gap is simply the one of least key (no alignment to pad), a stretch of p's
  // own gaps shows `pick` only its first of least key: placing in decreasing size, nearly every
  // gap fits and they shrink along the offsets, so seen one by one nearly each would be the
  // tightest yet, a mispredicted branch a gap.
  const bool least_key = fit == Fit::tightest && b.alignment == 1;
  // Sees the gaps before the spans of p that begin before `before`, false once the choice is
  // made. Past the cursor p's gaps are its own, each between two of its spans: no cursor to keep.
  auto read = [&](int64_t before) {
    for (; i < p.size() && p[i].end <= cursor; ++i) {
    }  // the short run's span hid them
    if (i == p.size() || p[i].begin >= before) return true;
    if (p[i].begin > cursor && !pick.see(cursor, p[i].begin)) return false;
    if (least_key) {
      const Span* const spans = p.data();
      const size_t n = p.size();
      const int64_t size = b.size;
      const size_t from = i + 1;
      const LeastKey stretch = least_gap_key(spans, from, n, before, size);
      const int64_t least = stretch.key;
      i = stretch.end;
      if (least < pick.threshold()) {  // then the first gap of that key is shown
        const size_t at = first_with_key(spans, from, i, least, size);
        if (!pick.see(spans[at - 1].end, spans[at].begin)) return false;
      }
    } else {
      for (++i; i < p.size() && p[i].begin < before; ++i) {
        if (!pick.see(p[i - 1].end, p[i].begin)) return false;
      }
    }
    cursor = p[i - 1].end;
    return true;
  };
  for (const Span& s : short_run) {
    if (!read(s.begin)) return pick.offset(cursor);
    if (s.begin > cursor && !pick.see(cursor, s.begin)) return pick.offset(cursor);
    cursor = std::max(cursor, s.end);
  }
  read(std::numeric_limits<int64_t>::max());
  return pick.offset(cursor);
}

void FreeGaps::reset(std::span<const Span> run, int64_t min_length) {
  min_length_ = std::max<int64_t>(1, min_length);
  next_.clear();
  int64_t below = 0;
  for (const Span& s : run) {
    keep(below, s.begin);
    below = s.end;
  }
  top_ = below;
  gaps_.swap(next_);
}

void FreeGaps::take_out(std::span<const Span> run) {
  next_.clear();
  size_t j = 0;
  for (const Span& g : gaps_) {
    j = first_ending_after(run, j, g.begin);
    int64_t from = g.begin;
    for (; j < run.size() && run[j].begin < g.end; ++j) {
      keep(from, run[j].begin);
      from = run[j].end;
      if (from >= g.end) break;  // it may reach into the next gap too
    }
    keep(from, g.end);
  }
  for (j = first_ending_after(run, j, top_); j < run.size(); ++j) {
    keep(top_, run[j].begin);
    top_ = std::max(top_, run[j].end);
  }
  gaps_.swap(next_);
}

int64_t FreeGaps::choose(const Buffer& b, Fit fit) const {
  GapPick pick(b, fit);
  for (const Span& g : gaps_) {
    if (!pick.see(g.begin, g.end)) break;
  }
  return pick.offset(top_);
}

}  // namespace footprint::plan::detail
