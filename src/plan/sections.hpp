#pragma once
// The time axis cut at every lifetime end: section k is [points[k], points[k+1]), and a buffer
// covers the sections [first(b), end(b)). Within a section the set of live buffers is constant.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "footprint/plan/buffer.hpp"

namespace footprint::plan::detail {

class Sections {
 public:
  // Cut at the lifetimes of the buffers that take space.
  explicit Sections(std::span<const Buffer> buffers) {
    for (const Buffer& b : buffers) {
      if (b.size == 0) continue;
      points_.push_back(b.lower);
      points_.push_back(b.upper);
    }
    std::sort(points_.begin(), points_.end());
    points_.erase(std::unique(points_.begin(), points_.end()), points_.end());
  }
  size_t count() const { return points_.empty() ? 0 : points_.size() - 1; }
  size_t first(const Buffer& b) const { return index_of(b.lower); }
  size_t end(const Buffer& b) const { return index_of(b.upper); }
  // Where section k begins (k == count(): where the last one ends).
  int64_t point(size_t k) const { return points_[k]; }

 private:
  size_t index_of(int64_t t) const {
    return static_cast<size_t>(std::lower_bound(points_.begin(), points_.end(), t) -
                               points_.begin());
  }
  std::vector<int64_t> points_;
};

}  // namespace footprint::plan::detail
