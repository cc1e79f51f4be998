// `auto`: the default, a portfolio. Within the time budget (PlanOptions::time_limit_s, else
// kDefaultSeconds) it runs every algorithm that fits the instance, cheapest first, and keeps the
// best plan:
//   1. the heap simulation, O(n log n) whatever the instance;
//   2. the global orders: greedy by size, greedy by breadth, XLA's global best fit in size and
//      in lifetime order, each O(n log n) index updates plus the spans its queries read (about
//      the same for every order, so when one is cut short the others are not started);
//   3. a search for the rest of the budget: the exact search up to kExactLimit buffers, else
//      annealing, where the conflict lists fit in memory. It starts from best-fit's plan, as it
//      does alone (a better start changes the search's path, not only its incumbent), so `auto`
//      keeps what the search alone would find, given the same time, beside every heuristic.
// It stops as soon as a plan meets the lower bound (proven optimal) or, with a capacity, fits
// it. Each part gets what is left of the budget and keeps it (a part cut short still gives a
// valid plan), so `auto` returns within the budget, never worse than the heuristics it ran, and
// says it was cut short when the budget ended before every heuristic had run to the end.
#include <utility>

#include "algorithms.hpp"
#include "footprint/plan/lower_bound.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {
namespace {

constexpr double kDefaultSeconds = 5.0;
constexpr size_t kExactLimit = 4000;

class Portfolio {
 public:
  Portfolio(std::span<const Buffer> buffers, const PlanOptions& options)
      : deadline_(options.time_limit_s.value_or(kDefaultSeconds)),
        buffers_(buffers),
        lower_(lower_bound_bytes(buffers)),
        capacity_(options.capacity_bytes) {}

  // Keeps `p` if it beats the best so far; a part cut short marks the whole.
  void offer(Plan p) {
    cut_short_ = cut_short_ || p.cut_short;
    const int64_t arena = arena_bytes(buffers_, p.offsets);
    if (best_.offsets.empty() || arena < best_arena_) {
      best_ = std::move(p);
      best_arena_ = arena;
    } else if (arena == best_arena_ && p.optimal) {
      best_.optimal = true;  // a search proved the plan in hand optimal
    }
  }
  // Nothing more to do: out of time, proven optimal, or fitting the capacity.
  bool done() const {
    if (best_.offsets.empty()) return false;
    if (best_arena_ <= lower_ || (capacity_ && best_arena_ <= *capacity_)) return true;
    return deadline_.passed();
  }
  // Marks a part that did not run for want of time.
  void skipped() { cut_short_ = cut_short_ || deadline_.passed(); }
  bool cut_short() const { return cut_short_; }

  const Deadline& deadline() const { return deadline_; }
  const Plan& best() const { return best_; }
  Plan result() && {
    best_.cut_short = cut_short_;
    return std::move(best_);
  }

 private:
  Deadline deadline_;  // first: the budget counts from the start, lower bound included
  std::span<const Buffer> buffers_;
  int64_t lower_;
  std::optional<int64_t> capacity_;
  Plan best_;
  int64_t best_arena_ = 0;
  bool cut_short_ = false;
};

}  // namespace

Plan plan_auto(std::span<const Buffer> buffers, const PlanOptions& options) {
  Portfolio portfolio(buffers, options);
  const Deadline& deadline = portfolio.deadline();
  // What `best-fit` alone returns (the best of its three parts, first one kept on ties): the
  // searches start from it, as they do alone, so that they search what they would alone.
  Plan best_fit;
  auto run = [&](Plan p, bool part_of_best_fit) {
    if (part_of_best_fit &&
        (best_fit.offsets.empty() ||
         arena_bytes(buffers, p.offsets) < arena_bytes(buffers, best_fit.offsets))) {
      best_fit = p;
    }
    portfolio.offer(std::move(p));
  };
  run(plan_heap_simulation(buffers, deadline), true);

  using Heuristic = Plan (*)(std::span<const Buffer>, const Deadline&);
  const std::pair<Heuristic, bool> orders[] = {
      {plan_greedy_size, false},
      {plan_greedy_breadth, false},
      {[](std::span<const Buffer> b, const Deadline& d) {
         return plan_global_best_fit(b, true, d);
       },
       true},
      {[](std::span<const Buffer> b, const Deadline& d) {
         return plan_global_best_fit(b, false, d);
       },
       true},
  };
  for (const auto& [heuristic, part_of_best_fit] : orders) {
    if (portfolio.done() || portfolio.cut_short()) {
      portfolio.skipped();
      return std::move(portfolio).result();
    }
    run(heuristic(buffers, deadline), part_of_best_fit);
  }
  if (portfolio.done() || portfolio.cut_short() || overlap_pairs(buffers) > kSearchPairLimit) {
    return std::move(portfolio).result();
  }
  if (buffers.size() <= kExactLimit) {
    portfolio.offer(plan_exact(buffers, best_fit, deadline, options.capacity_bytes));
  } else {
    portfolio.offer(plan_anneal(buffers, best_fit, deadline,
                                {.seed = options.seed, .max_iterations = options.max_iterations}));
  }
  return std::move(portfolio).result();
}

}  // namespace footprint::plan::detail
