#pragma once
// The algorithms behind the planner names (planner.hpp), one file each. They return offsets and,
// where they know it, `optimal` and `cut_short`; plan_buffers() fills in and checks the rest.
// Each keeps its deadline: past it, it returns the best valid plan it has.
#include <cstdint>
#include <optional>
#include <span>

#include "deadline.hpp"
#include "footprint/plan/plan.hpp"

namespace footprint::plan::detail {

Plan plan_naive(std::span<const Buffer> buffers);
Plan plan_greedy_size(std::span<const Buffer> buffers, const Deadline& deadline);
Plan plan_greedy_breadth(std::span<const Buffer> buffers, const Deadline& deadline);

// XLA-style heap simulation alone: O(n log n) whatever the overlaps.
Plan plan_heap_simulation(std::span<const Buffer> buffers, const Deadline& deadline);
// XLA's global best fit in decreasing size ("size") or lifetime ("time") order.
Plan plan_global_best_fit(std::span<const Buffer> buffers, bool by_size, const Deadline& deadline);
// The best of the heap simulation and the two global best fits.
Plan plan_best_fit(std::span<const Buffer> buffers, const Deadline& deadline);

// The searches hold every conflicting pair in memory (8 bytes each): beyond this many pairs
// (160 MB) they return their start plan unsearched.
inline constexpr uint64_t kSearchPairLimit = 20'000'000;

struct AnnealLimits {
  uint64_t seed = 1;
  uint64_t max_iterations = 0;  // 0: until the deadline
};
// Simulated annealing over the placement order, starting from `start` (any valid plan).
Plan plan_anneal(std::span<const Buffer> buffers, const Plan& start, const Deadline& deadline,
                 const AnnealLimits& limits);

// The complete search (exact_planner.cpp), starting from the incumbent `start`: the best plan
// found, optimal when proven. With a capacity it stops at the first plan that fits. Sets
// Plan::proven_bound_bytes to the height below which it proved no plan exists.
Plan plan_exact(std::span<const Buffer> buffers, const Plan& start, const Deadline& deadline,
                std::optional<int64_t> capacity);

// The repacking search (repack.cpp): the buffers at the top of `start` placed again, in bands
// that widen while they fail, until the arena meets `lower_bound` or the deadline passes. Never
// worse than `start`; its cost grows with the band, not with the instance.
Plan plan_repack(std::span<const Buffer> buffers, const Plan& start, int64_t lower_bound,
                 const Deadline& deadline);

// A lower bound at least max-live (window_bound.cpp): the exact search's proof on the buffers
// met by small time windows around the busiest sections, their lifetimes cut to the window.
// Any plan of all the buffers plans those, so what no plan of theirs can beat, none can.
int64_t window_lower_bound(std::span<const Buffer> buffers, int64_t max_live,
                           const Deadline& deadline);

Plan plan_auto(std::span<const Buffer> buffers, const PlanOptions& options);

}  // namespace footprint::plan::detail
