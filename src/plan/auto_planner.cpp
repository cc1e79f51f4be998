// `auto`: the default. Spends at most the time budget (PlanOptions::time_limit_s, else
// kDefaultSeconds) and picks by instance size:
//   * every instance: the greedy heuristics first (milliseconds), and done if one meets the
//     lower bound;
//   * up to kExactLimit buffers: the exact search from the best heuristic plan, for the rest of
//     the budget (it stops early when it proves optimality);
//   * up to kGlobalBestFitLimit buffers: annealing from the best heuristic plan;
//   * beyond: the O(n log n) heap simulation alone.
#include "algorithms.hpp"
#include "footprint/plan/lower_bound.hpp"

namespace footprint::plan::detail {
namespace {

constexpr double kDefaultSeconds = 5.0;
constexpr size_t kExactLimit = 4000;

}  // namespace

Plan plan_auto(std::span<const Buffer> buffers, const PlanOptions& options) {
  const Deadline deadline(options.time_limit_s.value_or(kDefaultSeconds));
  if (buffers.size() > kGlobalBestFitLimit) return plan_heap_simulation(buffers);

  Plan best = plan_best_fit(buffers);
  int64_t best_arena = arena_bytes(buffers, best.offsets);
  for (Plan p : {plan_greedy_size(buffers), plan_greedy_breadth(buffers)}) {
    const int64_t arena = arena_bytes(buffers, p.offsets);
    if (arena < best_arena) {
      best = std::move(p);
      best_arena = arena;
    }
  }
  if (best_arena <= lower_bound_bytes(buffers)) return best;
  if (options.capacity_bytes && best_arena <= *options.capacity_bytes) return best;
  if (buffers.size() <= kExactLimit) {
    return plan_exact(buffers, best, deadline, options.capacity_bytes);
  }
  return plan_anneal(buffers, best, deadline,
                     {.seed = options.seed, .max_iterations = options.max_iterations});
}

}  // namespace footprint::plan::detail
