#pragma once
// The algorithms behind the planner names (planner.hpp), one file each. They return offsets and,
// where they know it, `optimal`; plan_buffers() fills in and checks the rest.
#include <cstdint>
#include <optional>
#include <span>

#include "deadline.hpp"
#include "footprint/plan/plan.hpp"

namespace footprint::plan::detail {

Plan plan_naive(std::span<const Buffer> buffers);
Plan plan_greedy_size(std::span<const Buffer> buffers);
Plan plan_greedy_breadth(std::span<const Buffer> buffers);

// XLA-style heap simulation alone: O(n log n), the one heuristic that scales to millions.
Plan plan_heap_simulation(std::span<const Buffer> buffers);
// The best of the heap simulation and global best fit in size and in lifetime order (the
// global orders only up to kGlobalBestFitLimit buffers: they are O(n^2)).
inline constexpr size_t kGlobalBestFitLimit = 20000;
Plan plan_best_fit(std::span<const Buffer> buffers);

struct AnnealLimits {
  uint64_t seed = 1;
  uint64_t max_iterations = 0;  // 0: until the deadline
};
// Simulated annealing over the placement order, starting from `start` (any valid plan).
Plan plan_anneal(std::span<const Buffer> buffers, const Plan& start, const Deadline& deadline,
                 const AnnealLimits& limits);

// The complete search (exact_planner.cpp), starting from the incumbent `start`: the best plan
// found, optimal when proven. With a capacity it stops at the first plan that fits.
Plan plan_exact(std::span<const Buffer> buffers, const Plan& start, const Deadline& deadline,
                std::optional<int64_t> capacity);

Plan plan_auto(std::span<const Buffer> buffers, const PlanOptions& options);

}  // namespace footprint::plan::detail
