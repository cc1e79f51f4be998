#include "footprint/plan/plan.hpp"

#include <algorithm>

namespace footprint::plan {

int64_t arena_bytes(std::span<const Buffer> buffers, std::span<const int64_t> offsets) {
  int64_t top = 0;
  for (size_t i = 0; i < buffers.size() && i < offsets.size(); ++i) {
    top = std::max(top, offsets[i] + buffers[i].size);
  }
  return top;
}

}  // namespace footprint::plan
