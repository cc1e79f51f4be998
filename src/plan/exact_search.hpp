#pragma once
// The engine of the `exact` planner: a depth-first search over canonical placements that
// decides "is there a plan of height <= cap?" within a node limit. exact_planner.cpp explains
// the method and drives several of these searches, each in its own static order, as a portfolio.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "deadline.hpp"
#include "footprint/plan/buffer.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {

// What the search knows about one buffer it places (fixed-offset and empty buffers are not
// searched: they keep their offsets, or 0).
struct SearchItem {
  uint32_t buffer;  // index into the buffers
  int64_t size;
  int64_t alignment;
  int64_t lower;
  int64_t upper;
  uint32_t first_section;
  uint32_t end_section;
  std::vector<Span> obstacles;  // fixed buffers it meets in time, by offset
  std::vector<uint32_t> meets;  // items it meets in time
};

// The instance, shared read-only by every search of a portfolio.
struct SearchProblem {
  explicit SearchProblem(std::span<const Buffer> buffers);
  std::span<const Buffer> buffers;
  std::vector<SearchItem> items;
  std::vector<int64_t> section_bytes;  // bytes of items live in each section
  int64_t fixed_top = 0;               // top of the highest fixed-offset buffer
};

// States whose subtrees held no plan of height <= the cap stored with them, shared by the
// searches of a portfolio. A state means the same in every static order unless the tie rule
// bites, and then its key carries the order (exact_planner.cpp). Lossy: a newer entry takes an
// older one's slot, so memory stays fixed however long the search runs.
class FailedStates {
 public:
  explicit FailedStates(size_t log2_slots) : slots_(size_t{1} << log2_slots) {}
  bool failed(uint64_t key, int64_t cap) const {
    const Slot& s = slots_[key & (slots_.size() - 1)];
    return s.key == key && cap <= s.cap;
  }
  void insert(uint64_t key, int64_t cap) { slots_[key & (slots_.size() - 1)] = {key, cap}; }

 private:
  struct Slot {
    uint64_t key = 0;
    int64_t cap = -1;
  };
  std::vector<Slot> slots_;
};

// A static order of the items: letters of keys compared in turn, each descending —
// W lifetime width, A area (size x width), T the largest live total over the item's sections,
// Z size — then the buffers' input order. With noise > 0, the first key of each item is scaled
// by a factor in [1 - noise, 1 + noise] drawn from `seed`: a different order for a restart.
struct SearchOrder {
  std::string keys;
  double noise = 0;
  uint64_t seed = 0;
};

enum class Outcome { found, exhausted, stopped };

class CanonicalSearch {
 public:
  CanonicalSearch(const SearchProblem& problem, const SearchOrder& order, FailedStates& failed,
                  uint64_t salt);

  // Is there a plan of height <= cap? Gives up after `node_limit` more nodes or at the deadline
  // (`stopped`); `exhausted` is a proof that there is none. After `found`, offsets() has it.
  Outcome decide(int64_t cap, uint64_t node_limit, const Deadline& deadline);
  const std::vector<int64_t>& offsets() const { return plan_; }
  uint64_t nodes() const { return nodes_; }

 private:
  bool solve(size_t begin, size_t end);
  bool solve_groups(size_t begin, size_t end, std::span<const size_t> cuts, uint64_t key);
  bool branch(size_t begin, size_t end, uint64_t key, int64_t below, int64_t highest_next);
  bool fail(uint64_t key);
  bool out_of_budget();
  bool sections_can_fit(size_t begin, size_t end);
  int64_t most_unplaced_bytes(size_t begin, size_t end) const;
  void place(uint32_t k, int64_t at);
  void undo_to(size_t mark);
  void save_plan();
  void rank(size_t begin, size_t end);
  void unrank(size_t mark);

  const SearchProblem& problem_;
  FailedStates& failed_;
  uint64_t salt_;               // tells this order's tie-rule states from other orders'
  std::string keys_;            // the static order's letters
  std::vector<double> jitter_;  // per item: the noise on its first key
  std::vector<uint32_t> rank_;  // per item: its position in the current subproblem's order
  std::vector<std::pair<uint32_t, uint32_t>> rank_undo_;
  struct RankKey {
    std::array<int64_t, 4> keys;
    uint32_t buffer;
    uint32_t item;
  };
  std::vector<RankKey> ranked_;     // scratch of rank()
  std::vector<int32_t> twin_;       // the previous item in input order with equal lifetime, size
  std::vector<uint32_t> by_lower_;  // items by lower, the order every item list keeps
  std::vector<int64_t> plan_;

  int64_t cap_ = 0;
  const Deadline* deadline_ = nullptr;
  uint64_t nodes_ = 0;
  uint64_t stop_at_ = 0;
  bool stopped_ = false;

  std::vector<int64_t> unplaced_bytes_;  // per section
  std::vector<int64_t> floor_;           // per item: highest top among the placed items it meets
  std::vector<int64_t> rest_;            // per item: where it would rest now, on what is placed
  std::vector<int64_t> at_;  // per item: the lowest offset it can still take (>= last offset)
  std::vector<int64_t> offset_;
  std::vector<char> placed_;
  struct Last {  // the last placement of the current subproblem: offsets never go below it
    int64_t offset = 0;
    uint32_t item = 0;
    bool placed = false;
  };
  Last last_;

  struct Undo {
    uint32_t item;
    int64_t floor;
  };
  std::vector<Undo> undo_;
  struct Placement {
    uint32_t item;
    size_t undo_mark;
  };
  std::vector<Placement> log_;
  struct Candidate {
    int64_t at;
    uint32_t rank;
    uint32_t item;
  };
  std::vector<Candidate> candidates_;  // a stack: each node's candidates above its parent's
  std::vector<uint32_t> lists_;        // a stack of item lists, each node's above its parent's
  std::vector<int64_t> stack_top_;     // per section, scratch of sections_can_fit()
  struct Job {                         // an unplaced item as sections_can_fit() sees it
    int64_t at;
    int64_t size;
    uint32_t first_section;
    uint32_t end_section;
  };
  std::vector<Job> jobs_;
};

}  // namespace footprint::plan::detail
