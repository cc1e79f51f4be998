// `greedy-size`: TFLite's "greedy by size" (Pisarchyk & Lee, 2020): the largest buffers first,
// each into the smallest gap among the buffers it meets in time, else on top of them.
#include <algorithm>
#include <numeric>

#include "algorithms.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {

Plan plan_greedy_size(std::span<const Buffer> buffers, const Deadline& deadline) {
  std::vector<uint32_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return buffers[a].size > buffers[b].size; });
  Plan p;
  p.algorithm = "greedy-size";
  Placement placed = place_in_order(buffers, order, Fit::tightest, deadline);
  p.offsets = std::move(placed.offsets);
  p.cut_short = placed.cut_short;
  return p;
}

}  // namespace footprint::plan::detail
