// `naive`: every buffer gets bytes of its own, in input order. The arena is the sum of the sizes
// (plus alignment padding): what a runtime without reuse needs, the reference point for the rest.
#include "algorithms.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {

Plan plan_naive(std::span<const Buffer> buffers) {
  Plan p;
  p.algorithm = "naive";
  p.offsets.assign(buffers.size(), 0);
  std::vector<Span> taken;
  int64_t cursor = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.fixed_offset) {
      p.offsets[i] = *b.fixed_offset;
      continue;
    }
    if (b.size == 0) continue;
    // Above everything placed so far, and clear of the fixed buffers it meets in time.
    taken.assign(1, Span{0, cursor});
    for (const Buffer& f : buffers) {
      if (f.fixed_offset && conflict(b, f))
        taken.push_back({*f.fixed_offset, *f.fixed_offset + f.size});
    }
    p.offsets[i] = choose_offset(taken, b, Fit::lowest);
    cursor = top_of(b, p.offsets[i]);
  }
  return p;
}

}  // namespace footprint::plan::detail
