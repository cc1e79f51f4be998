// `greedy-breadth`: TFLite's "greedy by breadth" (Pisarchyk & Lee, 2020). The times with the most
// live bytes are the hardest to pack, so they go first: visit the sections of the time axis by
// live bytes, descending, and place the buffers live there that are not yet placed, largest
// first, each into the smallest gap that fits (the conflict order of the name).
//
// A buffer is placed at the first visited section it covers, i.e. its busiest one, so the visit
// reduces to sorting the buffers by (busiest section's bytes desc, that section, size desc).
#include <algorithm>
#include <bit>
#include <numeric>

#include "algorithms.hpp"
#include "placement.hpp"
#include "sections.hpp"

namespace footprint::plan::detail {
namespace {

// Range arg-max over the sections' live bytes (a sparse table: O(S log S) to build, O(1) a query).
class BusiestSection {
 public:
  explicit BusiestSection(std::vector<int64_t> bytes) : bytes_(std::move(bytes)) {
    std::vector<uint32_t> level(bytes_.size());
    std::iota(level.begin(), level.end(), 0);
    table_.push_back(std::move(level));
    for (size_t width = 2; width <= bytes_.size(); width *= 2) {
      const auto& prev = table_.back();
      std::vector<uint32_t> next(bytes_.size() - width + 1);
      for (size_t i = 0; i < next.size(); ++i) next[i] = better(prev[i], prev[i + width / 2]);
      table_.push_back(std::move(next));
    }
  }
  // The busiest section in [first, end) (end > first); ties go to the earliest.
  uint32_t in(size_t first, size_t end) const {
    const size_t k = static_cast<size_t>(std::bit_width(end - first)) - 1;
    return better(table_[k][first], table_[k][end - (size_t{1} << k)]);
  }
  int64_t bytes(uint32_t section) const { return bytes_[section]; }

 private:
  uint32_t better(uint32_t a, uint32_t b) const {
    return bytes_[b] > bytes_[a] || (bytes_[b] == bytes_[a] && b < a) ? b : a;
  }
  std::vector<int64_t> bytes_;
  std::vector<std::vector<uint32_t>> table_;
};

}  // namespace

Plan plan_greedy_breadth(std::span<const Buffer> buffers, const Deadline& deadline) {
  const Sections sections(buffers);
  std::vector<int64_t> live(sections.count() + 1, 0);  // difference array, then prefix sums
  for (const Buffer& b : buffers) {
    if (b.size == 0) continue;
    live[sections.first(b)] += b.size;
    live[sections.end(b)] -= b.size;
  }
  std::partial_sum(live.begin(), live.end(), live.begin());
  live.pop_back();

  std::vector<uint32_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  if (!live.empty()) {  // else nothing takes space and any order will do
    const BusiestSection table(std::move(live));
    std::vector<uint32_t> busiest(buffers.size(), 0);
    for (size_t i = 0; i < buffers.size(); ++i) {
      const Buffer& b = buffers[i];
      if (b.size > 0) busiest[i] = table.in(sections.first(b), sections.end(b));
    }
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const int64_t bytes_a = table.bytes(busiest[a]);
      const int64_t bytes_b = table.bytes(busiest[b]);
      if (bytes_a != bytes_b) return bytes_a > bytes_b;
      if (busiest[a] != busiest[b]) return busiest[a] < busiest[b];
      return buffers[a].size > buffers[b].size;
    });
  }
  Plan p;
  p.algorithm = "greedy-breadth";
  Placement placed = place_in_order(buffers, order, Fit::tightest, deadline);
  p.offsets = std::move(placed.offsets);
  p.cut_short = placed.cut_short;
  return p;
}

}  // namespace footprint::plan::detail
