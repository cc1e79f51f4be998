#include "footprint/plan/planner.hpp"

#include <array>
#include <chrono>

#include "algorithms.hpp"
#include "footprint/core/error.hpp"
#include "footprint/plan/lower_bound.hpp"
#include "footprint/plan/validate.hpp"

namespace footprint::plan {
namespace {

using PlanFunction = Plan (*)(std::span<const Buffer>, const PlanOptions&);

// Time budgets of the searches when PlanOptions::time_limit_s is unset.
constexpr double kAnnealSeconds = 1.0;
constexpr double kExactSeconds = 10.0;

// A search starts from best-fit's plan, made within the search's own budget.
Plan run_anneal(std::span<const Buffer> buffers, const PlanOptions& o) {
  const detail::Deadline deadline(o.time_limit_s.value_or(kAnnealSeconds));
  const Plan start = detail::plan_best_fit(buffers, deadline);
  Plan p = detail::plan_anneal(buffers, start, deadline,
                               {.seed = o.seed, .max_iterations = o.max_iterations});
  p.cut_short = p.cut_short || start.cut_short;
  return p;
}

Plan run_exact(std::span<const Buffer> buffers, const PlanOptions& o) {
  const detail::Deadline deadline(o.time_limit_s.value_or(kExactSeconds));
  const Plan start = detail::plan_best_fit(buffers, deadline);
  Plan p = detail::plan_exact(buffers, start, deadline, o.capacity_bytes);
  p.cut_short = p.cut_short || start.cut_short;
  return p;
}

// The heuristics have no default budget: unset, they run to the end.
template <Plan (*Heuristic)(std::span<const Buffer>, const detail::Deadline&)>
Plan run_heuristic(std::span<const Buffer> buffers, const PlanOptions& o) {
  return Heuristic(buffers, detail::Deadline(o.time_limit_s));
}

struct Entry {
  std::string_view name;
  PlanFunction run;
};

constexpr std::array<Entry, 7> kPlanners{{
    {"naive", [](std::span<const Buffer> b, const PlanOptions&) { return detail::plan_naive(b); }},
    {"greedy-size", run_heuristic<detail::plan_greedy_size>},
    {"greedy-breadth", run_heuristic<detail::plan_greedy_breadth>},
    {"best-fit", run_heuristic<detail::plan_best_fit>},
    {"anneal", run_anneal},
    {"exact", run_exact},
    {"auto", detail::plan_auto},
}};

constexpr std::array<std::string_view, kPlanners.size()> kNames = [] {
  std::array<std::string_view, kPlanners.size()> names{};
  for (size_t i = 0; i < kPlanners.size(); ++i) names[i] = kPlanners[i].name;
  return names;
}();

class NamedPlanner final : public Planner {
 public:
  explicit NamedPlanner(const Entry& entry) : entry_(entry) {}
  std::string_view name() const override { return entry_.name; }
  Plan plan(std::span<const Buffer> buffers, const PlanOptions& options) const override {
    return entry_.run(buffers, options);
  }

 private:
  const Entry& entry_;
};

}  // namespace

std::span<const std::string_view> planner_names() {
  return kNames;
}

std::unique_ptr<Planner> make_planner(std::string_view name) {
  for (const Entry& e : kPlanners) {
    if (e.name == name) return std::make_unique<NamedPlanner>(e);
  }
  std::string known;
  for (const std::string_view n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
  throw UsageError("unknown planner " + in_quotes(name) + ": expected one of " + known);
}

Plan plan_buffers(std::span<const Buffer> buffers, std::string_view algorithm,
                  const PlanOptions& options) {
  const auto planner = make_planner(algorithm);
  check_buffers(buffers);
  // First: when the bytes live at one time overflow int64 no plan exists, and saying so names
  // the buffer (SizeOverflow) before any planner forms a sum.
  const int64_t bound = lower_bound_bytes(buffers);
  const auto start = std::chrono::steady_clock::now();
  Plan p = planner->plan(buffers, options);
  p.solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (const auto violation = find_violation(buffers, p.offsets)) {
    throw Error("internal error: planner '" + std::string(algorithm) + "' (" + p.algorithm +
                ") produced an invalid plan: " + *violation);
  }
  if (p.algorithm.empty()) p.algorithm = std::string(algorithm);
  p.arena_bytes = arena_bytes(buffers, p.offsets);
  p.lower_bound_bytes = bound;
  p.proven_bound_bytes = std::max(p.proven_bound_bytes, bound);
  if (p.proven_bound_bytes > p.arena_bytes) {
    throw Error("internal error: planner '" + std::string(algorithm) + "' claims a bound of " +
                std::to_string(p.proven_bound_bytes) + " B above its own plan's " +
                std::to_string(p.arena_bytes) + " B");
  }
  p.optimal = p.optimal || p.arena_bytes <= p.proven_bound_bytes;
  return p;
}

MemoryPlanner::MemoryPlanner(std::string_view algorithm, PlanOptions options)
    : planner_(make_planner(algorithm)), options_(options) {}

size_t MemoryPlanner::add_buffer(int64_t size, int64_t lower, int64_t upper) {
  return add_buffer(Buffer{std::to_string(buffers_.size()), lower, upper, size, 1, std::nullopt});
}

size_t MemoryPlanner::add_buffer(Buffer buffer) {
  buffers_.push_back(std::move(buffer));
  planned_ = false;
  return buffers_.size() - 1;
}

const Plan& MemoryPlanner::plan() {
  if (!planned_) {
    plan_ = plan_buffers(buffers_, planner_->name(), options_);
    planned_ = true;
  }
  return plan_;
}

int64_t MemoryPlanner::offset(size_t index) {
  if (index >= buffers_.size()) {
    throw UsageError("no buffer " + std::to_string(index) + ": " + std::to_string(buffers_.size()) +
                     " were added");
  }
  return plan().offsets[index];
}

int64_t MemoryPlanner::arena_bytes() {
  return plan().arena_bytes;
}

}  // namespace footprint::plan
