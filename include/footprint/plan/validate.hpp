#pragma once
// The plan validator: every plan a planner returns passes through it before anyone sees it.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "footprint/plan/buffer.hpp"

namespace footprint::plan {

// The first rule `offsets` breaks, in words naming the buffers, or nullopt for a valid plan.
// Rules: one offset per buffer, offsets >= 0, offset % alignment == 0, fixed offsets kept, and no
// two buffers that overlap in time ([lower, upper) half-open) overlap in space. O(n log n).
std::optional<std::string> find_violation(std::span<const Buffer> buffers,
                                          std::span<const int64_t> offsets);

// Throws footprint::Error("invalid plan: ...") when find_violation finds something.
void validate_plan(std::span<const Buffer> buffers, std::span<const int64_t> offsets);

}  // namespace footprint::plan
