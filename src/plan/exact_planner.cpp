// `exact`: a complete search for the smallest arena, after MiniMalloc (Moffitt, ASPLOS 2023):
// canonical solutions, section inference, dominance, dynamic temporal decomposition and a
// portfolio of static orders. The ideas are the paper's; the code and the proofs below are ours,
// and the memo, the release-time section bound and the handling of alignment and fixed offsets
// are additions.
//
// Canonical placements. Take a plan with the least sum of offsets among those of height <= cap.
// No buffer in it can move down, so each sits at the lowest position (aligned, clear of fixed
// buffers) above the placed buffers it meets in time: it *rests* on them. Placing its buffers in
// offset order (ties by a static rank) re-creates it if every buffer goes to its resting position:
// the search only chooses which buffer comes next, never where, offsets never decrease, and a
// buffer whose resting position is below the last offset waits (placed higher it would float).
//
// Pruning, each sound because that least-sum plan passes it, so the search still finds it:
//   * sections: each section of the time axis must stack its unplaced buffers, each at or above
//     its lowest possible offset, below cap; the shortest stack takes them by that offset (a
//     one-machine schedule with release times). The next offset o must also leave room for the
//     unplaced bytes of every section above it;
//   * dominance: if an unplaced buffer y would fit entirely below the next offset o (it rests at
//     r(y) and r(y) + size(y) <= o), nothing placed later could be below o, so y could move down
//     and the plan would not be least-sum: o < min over unplaced y of r(y) + size(y);
//   * symmetry: identical buffers (lifetime, size, alignment) go in rank order, and so do buffers
//     at equal offsets (which never meet in time);
//   * decomposition: when the unplaced buffers fall into groups that never meet in time, each
//     group is solved on its own, in its own canonical order; one failing fails the node, and no
//     other group's choices are searched again for it;
//   * memo: a state is its unplaced buffers with their resting positions and the last offset (and
//     the order, when the tie rule bites). A state that failed at some cap fails at every lower
//     cap, so it is remembered with that cap, shared by the whole portfolio. Keys are 64-bit
//     hashes in a fixed table: a collision could cost a plan or the optimality proof's
//     soundness, at odds near 2^-40 for these table sizes, never an invalid plan (every plan is
//     validated).
//
// The driver asks "is there a plan of height <= cap?" in rounds. In each, every order of the
// portfolio probes the bottom (the lower bound: a plan there is optimal), the middle of what is
// left, and a step below the best plan (the step doubles after a plan and halves after none), and
// the node limit doubles from round to round: a search that ran out of nodes starts again, and
// the states it refuted stay in the memo. With a capacity (PlanOptions::capacity_bytes) it probes
// that height alone and stops at the first plan that fits.
#include <algorithm>
#include <memory>

#include "algorithms.hpp"
#include "exact_search.hpp"
#include "footprint/plan/lower_bound.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {
namespace {

// Static orders (exact_search.hpp): total first and lifetime first (MiniMalloc's preorders are
// total/area heuristics), and a jittered copy for diversity. Which one finds a plan first varies
// a lot between instances; every order costs a share of each round, so there are few.
std::vector<SearchOrder> portfolio() {
  return {{"TWA"}, {"WAT"}, {"TA"}, {"TA", 0.2, 3}};
}

// Where a round probes, and the share of the round's node limit each probe gets: a plan at the
// bottom ends the search, one in the middle halves the gap, the top is a cheap steady descent.
enum class Probe { bottom, middle, top };
constexpr struct {
  Probe probe;
  double share;
} kProbes[] = {{Probe::bottom, 1.0}, {Probe::middle, 0.5}, {Probe::top, 0.1}};

}  // namespace

Plan plan_exact(std::span<const Buffer> buffers, const Plan& start, const Deadline& deadline,
                std::optional<int64_t> capacity) {
  Plan best;
  best.algorithm = start.algorithm;  // until the search finds a better plan
  best.offsets = start.offsets;
  int64_t hi = arena_bytes(buffers, best.offsets);  // a plan of this height exists
  int64_t lo = lower_bound_bytes(buffers);          // none lower does
  // With a capacity at or above the lower bound, any plan that fits will do: only that height
  // is probed (MiniMalloc's question), and the first plan that fits, or a proof that none does,
  // ends the search. Below the lower bound nothing fits, so the search minimises as usual.
  const bool fit_only = capacity && *capacity >= lo;
  auto over = [&] { return lo >= hi || (fit_only && (hi <= *capacity || lo > *capacity)); };
  best.proven_bound_bytes = lo;
  if (over() || overlap_pairs(buffers) > kSearchPairLimit) {
    best.optimal = lo >= hi;
    return best;
  }
  const SearchProblem problem(buffers);
  FailedStates failed(18);
  std::vector<std::unique_ptr<CanonicalSearch>> searches;
  const auto orders = portfolio();
  for (size_t i = 0; i < orders.size(); ++i) {
    searches.push_back(std::make_unique<CanonicalSearch>(problem, orders[i], failed, i));
  }
  int64_t step = (hi - lo) / 64;  // how far below the best plan the top probe asks
  for (uint64_t limit = std::max<uint64_t>(256, problem.items.size());
       !over() && !deadline.passed(); limit *= 2) {
    for (auto& search : searches) {
      for (const auto& [probe, share] : kProbes) {
        if (over() || deadline.passed()) break;
        int64_t cap = lo;
        if (fit_only) {
          if (probe != Probe::bottom) continue;
          cap = *capacity;
        } else if (probe != Probe::bottom) {
          const int64_t gap = hi - 1 - lo;
          cap = hi - 1 - (probe == Probe::middle ? gap / 2 : std::min(step, gap / 2));
          if (cap <= lo) continue;  // the bottom probe asked that already
        }
        // A plan takes one node per buffer at least: the share is of the backtracking beyond.
        const auto nodes = problem.items.size() + static_cast<uint64_t>(limit * share);
        const Outcome o = search->decide(cap, nodes, deadline);
        if (probe == Probe::top)
          step = o == Outcome::found ? std::max<int64_t>(1, 2 * step) : step / 2;
        if (o == Outcome::found) {
          best.algorithm = "exact";
          best.offsets = search->offsets();
          hi = arena_bytes(buffers, best.offsets);
        } else if (o == Outcome::exhausted) {
          lo = std::max(lo, cap + 1);
        }
      }
    }
  }
  for (const auto& search : searches) best.search_nodes += search->nodes();
  best.optimal = lo >= hi;
  best.proven_bound_bytes = std::min(lo, hi);
  return best;
}

}  // namespace footprint::plan::detail
