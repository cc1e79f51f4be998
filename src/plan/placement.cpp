#include "placement.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

#include "footprint/core/checked_math.hpp"
#include "time_index.hpp"

namespace footprint::plan::detail {

int64_t aligned_offset(const Buffer& b, int64_t at_least) {
  if (const auto r = checked_round_up(at_least, b.alignment)) return *r;
  return round_up_or_throw(at_least, b.alignment, "offset of buffer " + in_quotes(b.id));
}

int64_t top_of(const Buffer& b, int64_t offset) {
  if (const auto r = checked_add(offset, b.size)) return *r;
  return add_or_throw(offset, b.size, "end of buffer " + in_quotes(b.id) + " (offset + size)");
}

bool OffsetChooser::fits(const Span& s) {
  at_ = aligned_offset(b_, cursor_);
  return at_ <= s.begin - b_.size;  // at + size <= begin, without forming at + size
}

int64_t OffsetChooser::offset() const {
  const int64_t at = best_ >= 0 ? best_ : aligned_offset(b_, cursor_);
  top_of(b_, at);  // the caller will form the top: refuse here if it cannot be formed
  return at;
}

void join(std::vector<Span>& spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span& x, const Span& y) { return x.begin < y.begin; });
  size_t kept = 0;
  for (const Span& s : spans) {
    if (kept > 0 && s.begin <= spans[kept - 1].end) {
      spans[kept - 1].end = std::max(spans[kept - 1].end, s.end);
    } else {
      spans[kept++] = s;
    }
  }
  spans.resize(kept);
}

int64_t choose_offset(std::vector<Span>& taken, const Buffer& b, Fit fit) {
  const auto by_begin = [](const Span& x, const Span& y) { return x.begin < y.begin; };
  if (!std::is_sorted(taken.begin(), taken.end(), by_begin)) {
    std::sort(taken.begin(), taken.end(), by_begin);
  }
  OffsetChooser chooser(b, fit);
  for (const Span& s : taken) {
    if (!chooser.see(s)) break;
  }
  return chooser.offset();
}

namespace {

// Buffers that meet every other buffer (a training run's weights and optimizer state) can go to
// the bottom, stacked, with the rest packed above them, at no loss: in any plan, moving them down
// and every other buffer down by the bytes of theirs below it keeps the plan valid and no higher.
// Kept out of the time index, their spans stay out of every query. Only without fixed offsets,
// and with power-of-two alignments so that the shift (rounded up to the largest) keeps them.
std::vector<bool> meeting_every_buffer(std::span<const Buffer> buffers) {
  std::vector<bool> out(buffers.size(), false);
  int64_t min_upper = std::numeric_limits<int64_t>::max();
  int64_t max_lower = std::numeric_limits<int64_t>::min();
  for (const Buffer& b : buffers) {
    if (b.fixed_offset || (b.alignment & (b.alignment - 1)) != 0) return out;
    if (b.size == 0) continue;
    min_upper = std::min(min_upper, b.upper);
    max_lower = std::max(max_lower, b.lower);
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    out[i] = b.size > 0 && b.lower < min_upper && b.upper > max_lower;
  }
  return out;
}

}  // namespace

Placement place_in_order(std::span<const Buffer> buffers, std::span<const uint32_t> order, Fit fit,
                         const Deadline& deadline) {
  Placement out;
  out.offsets.assign(buffers.size(), 0);
  // The buffers that meet every other one first, stacked in `order` from 0 up to `base`.
  const std::vector<bool> below = meeting_every_buffer(buffers);
  int64_t base = 0;
  int64_t largest_alignment = 1;
  for (const Buffer& b : buffers) largest_alignment = std::max(largest_alignment, b.alignment);
  for (const uint32_t i : order) {
    if (!below[i]) continue;
    out.offsets[i] = aligned_offset(buffers[i], base);
    base = top_of(buffers[i], out.offsets[i]);
  }
  base = round_up_or_throw(base, largest_alignment, "bytes of the buffers live throughout");

  // The others above, their offsets relative to `base` until the end.
  // The index costs O(n log n) before the first placement is timed: not built when the time is
  // up already, and looked at again once built.
  std::optional<TimeIndex> placed;
  if (!deadline.passed()) placed.emplace(buffers);
  out.cut_short = !placed || deadline.passed();
  int64_t top = 0;  // of everything placed: where the buffers go when time runs out
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    if (!buffers[i].fixed_offset) continue;
    out.offsets[i] = *buffers[i].fixed_offset;
    top = std::max(top, top_of(buffers[i], out.offsets[i]));
    if (placed && buffers[i].size > 0) {
      placed->add(i, {out.offsets[i], out.offsets[i] + buffers[i].size});
    }
  }
  size_t done = 0;
  const auto begin = Deadline::Clock::now();
  // A portfolio's part gives up at one of these points if its pace cannot end in time.
  const size_t checkpoint = std::max<size_t>(1024, order.size() / 32);
  for (const uint32_t i : order) {
    const Buffer& b = buffers[i];
    if (b.fixed_offset || b.size == 0 || below[i]) continue;
    // Every buffer: a clock read (tens of ns) is small beside a placement, and at 10^6 buffers
    // sixteen of the first (the longest-lived) placements took a third of a second.
    ++done;
    if (!out.cut_short && deadline.passed()) out.cut_short = true;
    if (!out.cut_short && done % checkpoint == 0) {
      const double elapsed = std::chrono::duration<double>(Deadline::Clock::now() - begin).count();
      const double fraction = static_cast<double>(done) / static_cast<double>(order.size());
      out.cut_short = deadline.hopeless(elapsed, fraction);
    }
    if (out.cut_short) {
      out.offsets[i] = aligned_offset(b, top);
    } else {
      out.offsets[i] = placed->choose_offset(i, fit);
      placed->add(i, {out.offsets[i], out.offsets[i] + b.size});
    }
    top = std::max(top, top_of(b, out.offsets[i]));
  }
  if (base > 0) {
    add_or_throw(top, base, "top of the arena above the buffers live throughout");
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (!below[i] && buffers[i].size > 0) out.offsets[i] += base;
    }
  }
  return out;
}

std::vector<std::vector<uint32_t>> conflict_lists(std::span<const Buffer> buffers) {
  std::vector<uint32_t> by_lower(buffers.size());
  std::iota(by_lower.begin(), by_lower.end(), 0);
  std::sort(by_lower.begin(), by_lower.end(),
            [&](uint32_t a, uint32_t b) { return buffers[a].lower < buffers[b].lower; });
  std::vector<std::vector<uint32_t>> lists(buffers.size());
  std::set<std::pair<int64_t, uint32_t>> live;  // (upper, buffer)
  for (const uint32_t i : by_lower) {
    const Buffer& b = buffers[i];
    if (b.size == 0) continue;
    while (!live.empty() && live.begin()->first <= b.lower) live.erase(live.begin());
    for (const auto& [upper, j] : live) {
      lists[i].push_back(j);
      lists[j].push_back(i);
    }
    live.emplace(b.upper, i);
  }
  return lists;
}

uint64_t overlap_pairs(std::span<const Buffer> buffers) {
  // Each buffer meets the ones alive when it starts; frees before allocations at equal times.
  std::vector<std::pair<int64_t, int>> events;  // (time, -1 free / +1 allocation)
  for (const Buffer& b : buffers) {
    if (b.size == 0) continue;
    events.emplace_back(b.lower, 1);
    events.emplace_back(b.upper, -1);
  }
  std::sort(events.begin(), events.end());
  uint64_t pairs = 0;
  uint64_t live = 0;
  for (const auto& [time, delta] : events) {
    if (delta > 0) pairs += live;
    live = delta > 0 ? live + 1 : live - 1;
  }
  return pairs;
}

std::vector<uint32_t> order_by_offset(std::span<const int64_t> offsets) {
  std::vector<uint32_t> order(offsets.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return offsets[a] < offsets[b]; });
  return order;
}

}  // namespace footprint::plan::detail
