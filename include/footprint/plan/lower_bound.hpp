#pragma once
// The lower bound every plan is measured against.
#include <cstdint>
#include <span>

#include "footprint/plan/buffer.hpp"

namespace footprint::plan {

// Max over time of the total size of the buffers live at that time, and at least the top of
// every fixed-offset buffer. No arena can be smaller; alignment can only make it larger.
int64_t lower_bound_bytes(std::span<const Buffer> buffers);

}  // namespace footprint::plan
