#include "placement.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>
#include <utility>

namespace footprint::plan::detail {

int64_t choose_offset(std::vector<Span>& taken, int64_t size, int64_t alignment, Fit fit) {
  std::sort(taken.begin(), taken.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  int64_t best = -1;
  int64_t best_gap = std::numeric_limits<int64_t>::max();
  int64_t cursor = 0;  // everything below is taken or already considered
  for (const Span& s : taken) {
    if (s.begin > cursor) {
      const int64_t at = align_up(cursor, alignment);
      if (at + size <= s.begin) {
        if (fit == Fit::lowest) return at;
        if (s.begin - cursor < best_gap) {
          best_gap = s.begin - cursor;
          best = at;
        }
      }
    }
    cursor = std::max(cursor, s.end);
  }
  return best >= 0 ? best : align_up(cursor, alignment);
}

std::vector<int64_t> place_in_order(std::span<const Buffer> buffers,
                                    std::span<const uint32_t> order, Fit fit) {
  std::vector<int64_t> offsets(buffers.size(), 0);
  std::vector<uint32_t> placed;  // only buffers that take space
  placed.reserve(buffers.size());
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].fixed_offset) {
      offsets[i] = *buffers[i].fixed_offset;
      if (buffers[i].size > 0) placed.push_back(i);
    }
  }
  std::vector<Span> taken;
  for (const uint32_t i : order) {
    const Buffer& b = buffers[i];
    if (b.fixed_offset || b.size == 0) continue;
    taken.clear();
    for (const uint32_t j : placed) {
      if (conflict(b, buffers[j])) taken.push_back({offsets[j], offsets[j] + buffers[j].size});
    }
    offsets[i] = choose_offset(taken, b.size, b.alignment, fit);
    placed.push_back(i);
  }
  return offsets;
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

std::vector<uint32_t> order_by_offset(std::span<const int64_t> offsets) {
  std::vector<uint32_t> order(offsets.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return offsets[a] < offsets[b]; });
  return order;
}

}  // namespace footprint::plan::detail
