// The repacking search: improvement that works on the buffers that define the peak, so it scales
// with them rather than with the instance.
//
// No plan of height h can keep a buffer whose top is above h, so lowering the arena means moving
// the buffers at the top. A round takes the band of buffers whose tops lie above a threshold,
// lifts them out, and places them again, largest first, each into the smallest gap left by the
// buffers it meets (the rest stay where they are, so the band can drop into holes further down).
// A round that lowers the arena is kept and the band starts again from the new top; one that does
// not widens the band (twice as deep, so more buffers may move) up to a cap on its size.
//
// Who meets whom comes from the buffers sorted by start with a max-of-ends tree over them (built
// once, linear memory): a band buffer's list costs O((k + 1) log n) for the k buffers it meets.
// A round costs that and a best-fit placement per band buffer among those k, so O(band k log n)
// beside an O(n) pass, with the band capped so the pairs stay bounded. The plan is valid whatever
// the band: every placement avoids everything it meets.
#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

#include "algorithms.hpp"
#include "footprint/plan/lower_bound.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {
namespace {

// Beyond these the band stops widening: its pairs are held in memory, its buffers re-placed one
// by one.
constexpr size_t kBandLimit = 4096;
constexpr size_t kBandPairLimit = 8'000'000;

class Repacker {
 public:
  Repacker(std::span<const Buffer> buffers, std::vector<int64_t> offsets)
      : buffers_(buffers), offsets_(std::move(offsets)), by_lower_(buffers.size()) {
    std::iota(by_lower_.begin(), by_lower_.end(), 0);
    std::stable_sort(by_lower_.begin(), by_lower_.end(),
                     [&](uint32_t a, uint32_t b) { return buffers[a].lower < buffers[b].lower; });
    height_ = arena_bytes(buffers, offsets_);
    build_max_upper();
  }

  int64_t height() const { return height_; }
  const std::vector<int64_t>& offsets() const { return offsets_; }

  // The movable buffers whose tops lie above `threshold`, or nothing when there are too many.
  std::vector<uint32_t> band(int64_t threshold) const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < buffers_.size(); ++i) {
      const Buffer& b = buffers_[i];
      if (b.fixed_offset || b.size == 0 || offsets_[i] + b.size <= threshold) continue;
      if (out.size() == kBandLimit) return {};
      out.push_back(i);
    }
    return out;
  }

  // Places `band` again, in each of a few orders until one lowers the arena, and keeps that.
  // False when none does (or the band meets too many buffers to list); then the band's offsets
  // are as they were.
  bool repack(const std::vector<uint32_t>& band, const Deadline& deadline) {
    std::vector<std::vector<uint32_t>> meets;
    if (!meeting(band, meets)) return false;
    std::vector<int64_t> saved(band.size());
    for (size_t k = 0; k < band.size(); ++k) saved[k] = offsets_[band[k]];
    // Largest first (what best fit does best), longest first, and in time order (the heap
    // simulation's, which packs the busiest time as it comes).
    const auto key = [&](int kind, uint32_t k) {
      const Buffer& b = buffers_[band[k]];
      const int64_t length = b.upper - b.lower;
      if (kind == 0) return std::tuple(-b.size, -length, int64_t{0});
      if (kind == 1) return std::tuple(-length, -b.size, int64_t{0});
      return std::tuple(b.lower, -b.size, -length);
    };
    for (int kind = 0; kind < 3; ++kind) {
      std::vector<uint32_t> order(band.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](uint32_t a, uint32_t b) { return key(kind, a) < key(kind, b); });
      if (place(band, meets, order, deadline)) return true;
      for (size_t k = 0; k < band.size(); ++k) offsets_[band[k]] = saved[k];
      if (deadline.passed()) break;
    }
    return false;
  }

 private:
  // Best fit of band[order[0]], band[order[1]], ... among what they meet; true (and the new
  // height set) when the band ends below the old height.
  bool place(const std::vector<uint32_t>& band, const std::vector<std::vector<uint32_t>>& meets,
             const std::vector<uint32_t>& order, const Deadline& deadline) {
    std::vector<char> waiting(buffers_.size(), 0);  // in the band, not yet placed again
    for (const uint32_t i : band) waiting[i] = 1;
    std::vector<Span> taken;
    int64_t top = 0;
    for (const uint32_t k : order) {
      if (deadline.passed()) return false;
      const uint32_t i = band[k];
      taken.clear();
      for (const uint32_t j : meets[k]) {
        if (!waiting[j]) taken.push_back({offsets_[j], offsets_[j] + buffers_[j].size});
      }
      offsets_[i] = choose_offset(taken, buffers_[i], Fit::tightest);
      top = std::max(top, top_of(buffers_[i], offsets_[i]));
      if (top >= height_) return false;  // this order cannot lower the arena
      waiting[i] = 0;
    }
    // Everything outside the band stays below the old height; the band now ends lower.
    height_ = arena_bytes(buffers_, offsets_);
    return true;
  }

  // For each band buffer, every buffer it meets in time (band or not): those that start inside
  // its lifetime (a range of by_lower_) and those alive when it starts (max_upper_'s descent).
  bool meeting(const std::vector<uint32_t>& band, std::vector<std::vector<uint32_t>>& meets) const {
    meets.assign(band.size(), {});
    size_t pairs = 0;
    for (size_t k = 0; k < band.size(); ++k) {
      const Buffer& b = buffers_[band[k]];
      const auto lower_of = [&](uint32_t j, int64_t t) { return buffers_[j].lower < t; };
      const auto from = std::lower_bound(by_lower_.begin(), by_lower_.end(), b.lower, lower_of);
      const auto to = std::lower_bound(from, by_lower_.end(), b.upper, lower_of);
      for (auto it = from; it != to; ++it) {
        if (*it != band[k] && buffers_[*it].size > 0) meets[k].push_back(*it);
      }
      alive_at(b.lower, static_cast<size_t>(from - by_lower_.begin()), 1, 0, leaves_, meets[k]);
      pairs += meets[k].size();
      if (pairs > kBandPairLimit) return false;
    }
    return true;
  }

  // Appends the buffers among by_lower_[0, end) (all starting before t) still alive at t: the
  // subtrees of max_upper_ whose largest upper is above t, O((k + 1) log n) for k found.
  void alive_at(int64_t t, size_t end, size_t node, size_t begin, size_t width,
                std::vector<uint32_t>& out) const {
    if (begin >= end || max_upper_[node] <= t) return;
    if (width == 1) {
      if (buffers_[by_lower_[begin]].size > 0) out.push_back(by_lower_[begin]);
      return;
    }
    alive_at(t, end, 2 * node, begin, width / 2, out);
    alive_at(t, end, 2 * node + 1, begin + width / 2, width / 2, out);
  }

  void build_max_upper() {
    leaves_ = std::bit_ceil(std::max<size_t>(1, by_lower_.size()));
    max_upper_.assign(2 * leaves_, std::numeric_limits<int64_t>::min());
    for (size_t k = 0; k < by_lower_.size(); ++k) {
      max_upper_[leaves_ + k] = buffers_[by_lower_[k]].upper;
    }
    for (size_t node = leaves_ - 1; node >= 1; --node) {
      max_upper_[node] = std::max(max_upper_[2 * node], max_upper_[2 * node + 1]);
    }
  }

  std::span<const Buffer> buffers_;
  std::vector<int64_t> offsets_;
  std::vector<uint32_t> by_lower_;
  size_t leaves_ = 1;
  std::vector<int64_t> max_upper_;  // by node over by_lower_: the largest upper below
  int64_t height_ = 0;
};

}  // namespace

Plan plan_repack(std::span<const Buffer> buffers, const Plan& start, int64_t lower_bound,
                 const Deadline& deadline) {
  Plan best = start;
  best.cut_short = false;
  Repacker r(buffers, start.offsets);
  const int64_t initial = r.height();
  int64_t depth = 0;  // how far below the top the band reaches; 0: start again from the top
  while (r.height() > lower_bound && !deadline.passed()) {
    const int64_t height = r.height();
    // The first band is what lies above the lower bound (it must move in any better plan), then
    // twice as deep each time a round fails.
    depth = depth == 0 ? height - lower_bound : 2 * depth;
    if (depth > height) break;
    const std::vector<uint32_t> band = r.band(height - depth);
    if (band.empty()) break;  // too many buffers to move at once
    if (r.repack(band, deadline)) depth = 0;
  }
  if (r.height() < initial) {
    best.offsets = r.offsets();
    best.algorithm = start.algorithm + "+repack";
  }
  return best;
}

}  // namespace footprint::plan::detail
