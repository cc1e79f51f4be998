#pragma once
// What a planner returns, and the knobs every planner understands.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "footprint/plan/buffer.hpp"

namespace footprint::plan {

struct Plan {
  std::vector<int64_t> offsets;   // offsets[i] belongs to buffers[i]
  int64_t arena_bytes = 0;        // max over buffers of offset + size
  int64_t lower_bound_bytes = 0;  // no plan of these buffers can be smaller (lower_bound.hpp)
  // The best bound known: lower_bound_bytes, or higher where a search proved it (`exact`'s
  // refuted heights, `auto`'s window bound). No plan is smaller, so arena_bytes over it is a
  // certified gap.
  int64_t proven_bound_bytes = 0;
  bool optimal = false;       // proven minimal: arena == a proven bound, or a completed search
  std::string algorithm;      // the algorithm that produced the offsets ("best-fit(heap)", ...)
  double solve_ms = 0;        // wall time of planning, validation excluded
  uint64_t search_nodes = 0;  // nodes the exact search expanded (0 for the heuristics)
  // The time limit stopped the algorithm before it finished its own work: the plan is the best
  // it had (a heuristic stacks the buffers it had no time for on top). A search that ran to its
  // budget without a proof is not cut short: it did what it was asked.
  bool cut_short = false;
};

struct PlanOptions {
  // Wall-clock budget, kept by every algorithm: the searches (anneal, exact, auto) have their
  // own default when unset, the heuristics none. Planning returns within it (plus the time to
  // check the plan) with the best plan found, and Plan::cut_short says if it stopped early.
  std::optional<double> time_limit_s;
  // The arena there is room for (a device's memory, MiniMalloc's capacity): the searches stop at
  // the first plan that fits instead of looking for the smallest (auto: at the first part whose
  // plan fits). The heuristics ignore it.
  std::optional<int64_t> capacity_bytes;
  // Seed of the improvement search: the same seed and iteration count give the same plan.
  uint64_t seed = 1;
  // Stops the improvement search after this many moves (0: only the time limit stops it).
  uint64_t max_iterations = 0;
};

// Max over buffers of offset + size (0 for no buffers).
int64_t arena_bytes(std::span<const Buffer> buffers, std::span<const int64_t> offsets);

}  // namespace footprint::plan
