#include "footprint/plan/lower_bound.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace footprint::plan {

int64_t lower_bound_bytes(std::span<const Buffer> buffers) {
  // Sweep the lifetime ends in time order; at equal times the frees go first, since [lower,
  // upper) lifetimes that touch do not overlap.
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +size or -size)
  events.reserve(2 * buffers.size());
  int64_t bound = 0;
  for (const Buffer& b : buffers) {
    if (b.fixed_offset) bound = std::max(bound, *b.fixed_offset + b.size);
    if (b.size == 0) continue;
    events.emplace_back(b.lower, b.size);
    events.emplace_back(b.upper, -b.size);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0;
  for (const auto& [time, delta] : events) {
    live += delta;
    bound = std::max(bound, live);
  }
  return bound;
}

}  // namespace footprint::plan
