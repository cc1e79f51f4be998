// `auto`: the default, a portfolio. Within the time budget (PlanOptions::time_limit_s, else
// kDefaultSeconds) it runs every algorithm that fits the instance, cheapest first, and keeps the
// best plan:
//   1. the heap simulation, O(n log n) whatever the instance;
//   2. repacking (repack.cpp) of the best plan so far, a share of what is left: it works on the
//      buffers at the top, so it is cheap where the global orders are not;
//   3. the global orders: greedy by breadth, greedy by size, XLA's global best fit in size and
//      in lifetime order, each O(n log n) index updates plus the spans its queries read (about
//      the same for every order, so when one is cut short the others are not started). Each
//      gives up early once the pace of its first buffers shows it cannot end within the budget
//      even if the rest goes 2.5x faster (its first buffers are its dearest; Deadline::hopeless),
//      leaving the time to the parts after it;
//   4. where a gap is left, the window bound (window_bound.cpp), a small share of the budget: a
//      bound above max-live where a small search proves one, so that a plan meeting it ends the
//      portfolio;
//   5. repacking of the best plan, then a search for the rest of the budget: the exact search up
//      to kExactLimit buffers, else annealing, where the conflict lists fit in memory. It starts
//      from best-fit's plan, as it does alone (a better start changes the search's path, not
//      only its incumbent), so `auto` keeps what the search alone would find, given the same
//      time, beside every heuristic.
// It stops as soon as a plan meets the best bound (proven optimal) or, with a capacity, fits it.
// Each part gets what is left of the budget and keeps it (a part cut short still gives a valid
// plan), so `auto` returns within the budget, never worse than the heuristics it ran, and says it
// was cut short when the budget ended before every heuristic had run to the end.
#include <algorithm>
#include <chrono>
#include <utility>

#include "algorithms.hpp"
#include "footprint/plan/lower_bound.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {
namespace {

constexpr double kDefaultSeconds = 5.0;
constexpr size_t kExactLimit = 4000;
constexpr double kBoundShare = 0.05;   // of the budget, for the window bound
constexpr double kRepackShare = 0.25;  // of what is left, for the first repacking

class Portfolio {
 public:
  Portfolio(std::span<const Buffer> buffers, const PlanOptions& options)
      : deadline_(options.time_limit_s.value_or(kDefaultSeconds)),
        buffers_(buffers),
        bound_(lower_bound_bytes(buffers)),
        capacity_(options.capacity_bytes) {}

  // Keeps `p` if it beats the best so far; a part cut short marks the whole.
  void offer(Plan p) {
    cut_short_ = cut_short_ || p.cut_short;
    bound_ = std::max(bound_, p.proven_bound_bytes);
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
    if (best_arena_ <= bound_ || (capacity_ && best_arena_ <= *capacity_)) return true;
    return deadline_.passed();
  }
  // A proof that no plan is below `bound`.
  void raise_bound(int64_t bound) { bound_ = std::max(bound_, bound); }
  int64_t bound() const { return bound_; }
  bool minimising() const { return !capacity_; }
  // Runs the repacking search on the best plan within `d`, unless it has had this plan already.
  void repack(const Deadline& d) {
    if (done() || best_arena_ == repacked_arena_) return;
    Plan p = plan_repack(buffers_, best_, bound_, d);
    repacked_arena_ = arena_bytes(buffers_, p.offsets);
    offer(std::move(p));
  }
  // Marks a part that did not run for want of time (`now`: there is time left, but too little).
  void skipped(bool now = false) { cut_short_ = cut_short_ || now || deadline_.passed(); }
  bool cut_short() const { return cut_short_; }

  const Deadline& deadline() const { return deadline_; }
  const Plan& best() const { return best_; }
  Plan result() && {
    best_.cut_short = cut_short_;
    best_.proven_bound_bytes = bound_;
    return std::move(best_);
  }

 private:
  Deadline deadline_;  // first: the budget counts from the start, lower bound included
  std::span<const Buffer> buffers_;
  int64_t bound_;  // the best proven: max-live, raised by the window bound and the exact search
  std::optional<int64_t> capacity_;
  Plan best_;
  int64_t best_arena_ = 0;
  int64_t repacked_arena_ = -1;  // what the last repacking returned
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
  const auto started = Deadline::Clock::now();
  run(plan_heap_simulation(buffers, deadline), true);
  // What a global order costs before it places a buffer (sorting, the time index, checked
  // against the deadline only once it places) is about what the heap simulation cost: one is
  // not started with less time than that left (at 10^6 buffers it ran 0.4 s past a 1 s limit).
  const double setup_s = std::chrono::duration<double>(Deadline::Clock::now() - started).count();
  portfolio.repack(deadline.within(kRepackShare * deadline.seconds_left()));

  using Heuristic = Plan (*)(std::span<const Buffer>, const Deadline&);
  // Breadth first: the busiest times placed first reach the bound most often on real traces.
  const std::pair<Heuristic, bool> orders[] = {
      {plan_greedy_breadth, false},
      {plan_greedy_size, false},
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
    if (portfolio.done() || portfolio.cut_short()) break;
    if (deadline.seconds_left() < setup_s) {
      portfolio.skipped(true);
      break;
    }
    run(heuristic(buffers, deadline.giving_up_early()), part_of_best_fit);
  }
  portfolio.skipped();
  // Certifying the gap matters when minimising (a capacity asks only for a plan that fits), and
  // only where the heuristics left one.
  if (!portfolio.done() && portfolio.minimising()) {
    portfolio.raise_bound(window_lower_bound(
        buffers, portfolio.bound(), deadline.within(kBoundShare * deadline.seconds_left())));
  }
  portfolio.repack(deadline);
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
