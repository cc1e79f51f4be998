#include "placement.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
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

int64_t choose_offset(std::vector<Span>& taken, const Buffer& b, Fit fit) {
  std::sort(taken.begin(), taken.end(),
            [](const Span& x, const Span& y) { return x.begin < y.begin; });
  int64_t best = -1;
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  int64_t cursor = 0;  // everything below is taken or already considered
  for (const Span& s : taken) {
    if (s.begin > cursor) {
      const int64_t at = aligned_offset(b, cursor);
      if (at <= s.begin - b.size) {  // at + size <= begin, without forming at + size
        if (fit == Fit::lowest) return at;
        if (s.begin - cursor < best_gap) {
          best_gap = s.begin - cursor;
          best = at;
        }
      }
    }
    cursor = std::max(cursor, s.end);
  }
  const int64_t at = best >= 0 ? best : aligned_offset(b, cursor);
  top_of(b, at);  // the caller will form the top: refuse here if it cannot be formed
  return at;
}

Placement place_in_order(std::span<const Buffer> buffers, std::span<const uint32_t> order, Fit fit,
                         const Deadline& deadline) {
  Placement out;
  out.offsets.assign(buffers.size(), 0);
  TimeIndex placed(buffers);
  int64_t top = 0;  // of everything placed: where the buffers go when time runs out
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    if (!buffers[i].fixed_offset) continue;
    out.offsets[i] = *buffers[i].fixed_offset;
    top = std::max(top, top_of(buffers[i], out.offsets[i]));
    if (buffers[i].size > 0) placed.add(i);
  }
  std::vector<Span> taken;
  size_t done = 0;
  for (const uint32_t i : order) {
    const Buffer& b = buffers[i];
    if (b.fixed_offset || b.size == 0) continue;
    // A clock read costs about as much as a small placement: look every few buffers.
    if (!out.cut_short && (++done & 15) == 0 && deadline.passed()) out.cut_short = true;
    if (out.cut_short) {
      out.offsets[i] = aligned_offset(b, top);
    } else {
      taken.clear();
      placed.for_each_meeting(i, [&](uint32_t j) {
        taken.push_back({out.offsets[j], out.offsets[j] + buffers[j].size});
      });
      out.offsets[i] = choose_offset(taken, b, fit);
      placed.add(i);
    }
    top = std::max(top, top_of(b, out.offsets[i]));
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
