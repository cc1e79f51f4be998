#pragma once
// The lower bound every plan is measured against.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "footprint/plan/buffer.hpp"

namespace footprint::plan {

// Max over time of the total size of the buffers live at that time, and at least the top of
// every fixed-offset buffer. No arena can be smaller; alignment can only make it larger.
// Throws SizeOverflow naming the buffer when the bytes live at one time overflow int64: then no
// plan exists.
int64_t lower_bound_bytes(std::span<const Buffer> buffers);

// Where the bytes live at one time first overflow int64: the buffer whose start does it.
struct LiveOverflow {
  size_t buffer;
  int64_t time;
  int64_t live_before;  // bytes live just before it
};
std::optional<LiveOverflow> live_overflow(std::span<const Buffer> buffers);

}  // namespace footprint::plan
