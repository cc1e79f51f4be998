// `naive`: every buffer gets bytes of its own, in input order. The arena is the sum of the sizes
// (plus alignment padding): what a runtime without reuse needs, the reference point for the rest.
// The fixed-offset buffers a buffer must also clear come from the time index: O(n log n).
#include "algorithms.hpp"
#include "placement.hpp"
#include "time_index.hpp"

namespace footprint::plan::detail {

Plan plan_naive(std::span<const Buffer> buffers) {
  Plan p;
  p.algorithm = "naive";
  p.offsets.assign(buffers.size(), 0);
  TimeIndex fixed(buffers);
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (!b.fixed_offset) continue;
    p.offsets[i] = *b.fixed_offset;
    if (b.size > 0) fixed.add(i, {*b.fixed_offset, *b.fixed_offset + b.size});
  }
  std::vector<Span> taken;
  int64_t cursor = 0;
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.fixed_offset || b.size == 0) continue;
    // Above everything placed so far, and clear of the fixed buffers it meets in time.
    fixed.taken_meeting(i, taken);
    taken.push_back({0, cursor});
    p.offsets[i] = choose_offset(taken, b, Fit::lowest);
    cursor = top_of(b, p.offsets[i]);
  }
  return p;
}

}  // namespace footprint::plan::detail
