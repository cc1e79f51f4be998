#pragma once
// Offset planners: given buffers with lifetimes and sizes, give each an offset in one arena so
// that buffers live at the same time never share bytes, and make the arena small.
//
// One interface, several algorithms, chosen by name:
//
//   naive           no reuse: every buffer gets bytes of its own (the reference point)
//   greedy-size     size-descending best fit (TFLite's "greedy by size")
//   greedy-breadth  TFLite's "greedy by breadth": the busiest times first
//   best-fit        XLA-style heap simulation (alloc/free events in time order, best-fitting
//                   gap) and global best fit in size and in lifetime order; keeps the best
//   anneal          simulated annealing over the placement order from the best greedy order
//   exact           complete branch and bound over canonical placements (MiniMalloc's idea)
//                   with dominance pruning, under a time limit; says when it proved optimality
//   auto            the default: a portfolio of the above, cheapest first, within a time budget,
//                   with repacking of the buffers at the top (repack.cpp) and a bound above
//                   max-live where a small search proves one (window_bound.cpp); keeps the best
//                   plan, stops at the best bound or the capacity (auto_planner.cpp)
//
// Whatever the algorithm, plan_buffers() validates the plan before returning it (validate.hpp):
// an invalid plan is a bug and is thrown as an error, never returned.
//
// Two ways in. The batch call:
//
//   std::vector<plan::Buffer> buffers = plan::read_buffers_csv("trace.csv");
//   plan::Plan p = plan::plan_buffers(buffers, "auto", {.time_limit_s = 2.0});
//   // p.offsets[i] is buffers[i]'s offset, p.arena_bytes the arena, p.optimal the proof.
//
// and, in the spirit of TFLite Micro's MicroMemoryPlanner (AddBuffer / GetOffsetForBuffer), an
// incremental one. Note that lifetimes are half-open here: TFLite's last_time_used t is upper t+1.
//
//   plan::MemoryPlanner planner("greedy-size");
//   const size_t a = planner.add_buffer(/*size=*/1024, /*lower=*/0, /*upper=*/2);
//   const size_t b = planner.add_buffer(512, 1, 3);
//   const size_t c = planner.add_buffer(1024, 2, 4);  // may reuse a's bytes: a is dead at 2
//   int64_t arena = planner.arena_bytes();             // plans on first use: 1536 here
//   int64_t offset_of_c = planner.offset(c);
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "footprint/plan/buffer.hpp"
#include "footprint/plan/plan.hpp"

namespace footprint::plan {

class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string_view name() const = 0;
  // Offsets (and, for the searches, `optimal` and `search_nodes`) for valid buffers
  // (check_buffers); the other fields of Plan are filled in by plan_buffers().
  virtual Plan plan(std::span<const Buffer> buffers, const PlanOptions& options) const = 0;
};

// The names make_planner accepts, in the order of the table above.
std::span<const std::string_view> planner_names();

// Throws footprint::UsageError listing the names when `name` is not one of them.
std::unique_ptr<Planner> make_planner(std::string_view name);

// Checks the buffers, plans, validates, and fills in arena_bytes, lower_bound_bytes,
// proven_bound_bytes (at least the lower bound), optimal (also true whenever the arena meets
// the proven bound) and solve_ms.
Plan plan_buffers(std::span<const Buffer> buffers, std::string_view algorithm = "auto",
                  const PlanOptions& options = {});

// Buffers added one at a time, offsets asked for afterwards. The first query plans everything
// added so far; adding a buffer after that plans again on the next query.
class MemoryPlanner {
 public:
  explicit MemoryPlanner(std::string_view algorithm = "auto", PlanOptions options = {});

  // Returns the buffer's index, the argument to offset().
  size_t add_buffer(int64_t size, int64_t lower, int64_t upper);
  size_t add_buffer(Buffer buffer);

  size_t buffer_count() const { return buffers_.size(); }
  int64_t offset(size_t index);
  int64_t arena_bytes();
  const Plan& plan();
  std::span<const Buffer> buffers() const { return buffers_; }

 private:
  std::unique_ptr<Planner> planner_;
  PlanOptions options_;
  std::vector<Buffer> buffers_;
  Plan plan_;
  bool planned_ = false;
};

}  // namespace footprint::plan
