#include "footprint/plan/lower_bound.hpp"

#include <algorithm>
#include <tuple>
#include <vector>

#include "footprint/core/checked_math.hpp"

namespace footprint::plan {
namespace {

struct Sweep {
  int64_t bound = 0;
  std::optional<LiveOverflow> overflow;
};

// Sweeps the lifetime ends in time order; at equal times the frees go first, since [lower,
// upper) lifetimes that touch do not overlap. Stops at the first overflow.
Sweep sweep(std::span<const Buffer> buffers) {
  std::vector<std::tuple<int64_t, int64_t, size_t>> events;  // (time, +size or -size, buffer)
  events.reserve(2 * buffers.size());
  Sweep out;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.fixed_offset) out.bound = std::max(out.bound, *b.fixed_offset + b.size);  // <= 2^61
    if (b.size == 0) continue;
    events.emplace_back(b.lower, b.size, i);
    events.emplace_back(b.upper, -b.size, i);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0;
  for (const auto& [time, delta, i] : events) {
    const auto sum = checked_add(live, delta);
    if (!sum) {
      out.overflow = LiveOverflow{i, time, live};
      return out;
    }
    live = *sum;
    out.bound = std::max(out.bound, live);
  }
  return out;
}

}  // namespace

std::optional<LiveOverflow> live_overflow(std::span<const Buffer> buffers) {
  return sweep(buffers).overflow;
}

int64_t lower_bound_bytes(std::span<const Buffer> buffers) {
  const Sweep s = sweep(buffers);
  if (const auto& o = s.overflow) {
    const Buffer& b = buffers[o->buffer];
    add_or_throw(o->live_before, b.size,
                 "buffer " + std::to_string(o->buffer) + " (id " + in_quotes(b.id) +
                     "): bytes live at time " + std::to_string(o->time));
  }
  return s.bound;
}

}  // namespace footprint::plan
