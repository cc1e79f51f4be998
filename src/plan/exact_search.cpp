#include "exact_search.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <tuple>

#include "sections.hpp"

namespace footprint::plan::detail {
namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The lowest aligned offset >= floor where the item clears its fixed obstacles.
int64_t position(const SearchItem& item, int64_t floor) {
  int64_t at = align_up(floor, item.alignment);
  for (const Span& s : item.obstacles) {
    if (s.end <= at) continue;
    if (s.begin >= at + item.size) break;
    at = align_up(s.end, item.alignment);
  }
  return at;
}

int64_t order_key(const SearchProblem& p, const SearchItem& item, char letter) {
  const int64_t width = item.upper - item.lower;
  switch (letter) {
    case 'W':
      return width;
    case 'Z':
      return item.size;
    case 'A': {
      constexpr int64_t kMax = int64_t{1} << 62;
      return width > kMax / item.size ? kMax : width * item.size;
    }
    case 'T':
      return *std::max_element(p.section_bytes.begin() + item.first_section,
                               p.section_bytes.begin() + item.end_section);
    default:
      return 0;
  }
}

}  // namespace

SearchProblem::SearchProblem(std::span<const Buffer> all) : buffers(all) {
  const Sections sections(all);
  section_bytes.assign(sections.count(), 0);
  std::vector<Buffer> searched;
  for (uint32_t i = 0; i < all.size(); ++i) {
    const Buffer& b = all[i];
    if (b.fixed_offset) {
      fixed_top = std::max(fixed_top, *b.fixed_offset + b.size);
      continue;
    }
    if (b.size == 0) continue;
    SearchItem item{i,
                    b.size,
                    b.alignment,
                    b.lower,
                    b.upper,
                    static_cast<uint32_t>(sections.first(b)),
                    static_cast<uint32_t>(sections.end(b)),
                    {},
                    {}};
    for (const Buffer& f : all) {
      if (f.fixed_offset && conflict(b, f)) {
        item.obstacles.push_back({*f.fixed_offset, *f.fixed_offset + f.size});
      }
    }
    std::sort(item.obstacles.begin(), item.obstacles.end(),
              [](const Span& x, const Span& y) { return x.begin < y.begin; });
    for (uint32_t s = item.first_section; s < item.end_section; ++s) section_bytes[s] += b.size;
    items.push_back(std::move(item));
    searched.push_back(b);
  }
  auto lists = conflict_lists(searched);
  for (size_t k = 0; k < items.size(); ++k) items[k].meets = std::move(lists[k]);
}

CanonicalSearch::CanonicalSearch(const SearchProblem& problem, const SearchOrder& order,
                                 FailedStates& failed, uint64_t salt)
    : problem_(problem), failed_(failed), salt_(mix(salt + 1)), keys_(order.keys) {
  const auto& items = problem.items;
  const size_t n = items.size();
  jitter_.assign(n, 1.0);
  if (order.noise > 0) {
    std::mt19937_64 rng(order.seed);
    std::uniform_real_distribution<double> jitter(1.0 - order.noise, 1.0 + order.noise);
    for (double& j : jitter_) j = jitter(rng);
  }
  // Identical items are interchangeable: they go in input order.
  twin_.assign(n, -1);
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, uint32_t> last_seen;
  for (uint32_t k = 0; k < n; ++k) {
    const auto id = std::tuple(items[k].size, items[k].lower, items[k].upper, items[k].alignment);
    if (const auto it = last_seen.find(id); it != last_seen.end()) {
      twin_[k] = static_cast<int32_t>(it->second);
    }
    last_seen[id] = k;
  }
  rank_.assign(n, 0);
  by_lower_.resize(n);
  std::iota(by_lower_.begin(), by_lower_.end(), 0);
  std::stable_sort(by_lower_.begin(), by_lower_.end(),
                   [&](uint32_t x, uint32_t y) { return items[x].lower < items[y].lower; });
  unplaced_bytes_ = problem.section_bytes;
  stack_top_.assign(problem.section_bytes.size(), 0);
  floor_.assign(n, 0);
  rest_.assign(n, 0);
  at_.assign(n, 0);
  offset_.assign(n, 0);
  placed_.assign(n, 0);
  plan_.assign(problem.buffers.size(), 0);
}

// Ranks the items of lists_[begin, end) by the static order's keys, T taken from the bytes still
// unplaced (as MiniMalloc does for each subproblem); the old ranks go on rank_undo_.
void CanonicalSearch::rank(size_t begin, size_t end) {
  const auto& items = problem_.items;
  ranked_.clear();
  for (size_t i = begin; i < end; ++i) {
    const uint32_t k = lists_[i];
    const SearchItem& item = items[k];
    RankKey key{{}, item.buffer, k};
    for (size_t l = 0; l < keys_.size() && l < key.keys.size(); ++l) {
      int64_t v = 0;
      if (keys_[l] == 'T') {
        v = *std::max_element(unplaced_bytes_.begin() + item.first_section,
                              unplaced_bytes_.begin() + item.end_section);
      } else {
        v = order_key(problem_, item, keys_[l]);
      }
      key.keys[l] = l == 0 ? static_cast<int64_t>(static_cast<double>(v) * jitter_[k]) : v;
    }
    ranked_.push_back(key);
  }
  std::sort(ranked_.begin(), ranked_.end(), [](const RankKey& x, const RankKey& y) {
    return x.keys != y.keys ? x.keys > y.keys : x.buffer < y.buffer;
  });
  for (uint32_t r = 0; r < ranked_.size(); ++r) {
    rank_undo_.push_back({ranked_[r].item, rank_[ranked_[r].item]});
    rank_[ranked_[r].item] = r;
  }
}

void CanonicalSearch::unrank(size_t mark) {
  while (rank_undo_.size() > mark) {
    rank_[rank_undo_.back().first] = rank_undo_.back().second;
    rank_undo_.pop_back();
  }
}

Outcome CanonicalSearch::decide(int64_t cap, uint64_t node_limit, const Deadline& deadline) {
  if (problem_.fixed_top > cap) return Outcome::exhausted;
  cap_ = cap;
  deadline_ = &deadline;
  stop_at_ = nodes_ + node_limit;
  stopped_ = false;
  last_ = {};
  lists_.assign(by_lower_.begin(), by_lower_.end());
  rank(0, lists_.size());
  const bool found = solve(0, lists_.size());
  unrank(0);
  if (found) {
    save_plan();
    undo_to(0);
  }
  lists_.clear();
  if (found) return Outcome::found;
  return stopped_ ? Outcome::stopped : Outcome::exhausted;
}

bool CanonicalSearch::out_of_budget() {
  if (stopped_) return true;
  ++nodes_;
  if (nodes_ >= stop_at_ || ((nodes_ & 255) == 0 && deadline_->passed())) stopped_ = true;
  return stopped_;
}

bool CanonicalSearch::fail(uint64_t key) {
  if (!stopped_) failed_.insert(key, cap_);
  return false;
}

// Places every item of lists_[begin, end) (unplaced, by lower) at height <= cap_. On success
// they stay placed; on failure the state is as it was.
bool CanonicalSearch::solve(size_t begin, size_t end) {
  if (begin == end) return true;
  if (out_of_budget()) return false;
  const auto& items = problem_.items;
  int64_t below = kNone;  // dominance: the next offset stays below this
  uint64_t key = mix(static_cast<uint64_t>(last_.offset) ^ 0x6A09E667F3BCC909ULL);
  bool tie_bites = false;
  for (size_t i = begin; i < end; ++i) {
    const uint32_t k = lists_[i];
    const SearchItem& item = items[k];
    rest_[k] = position(item, floor_[k]);
    at_[k] = rest_[k] >= last_.offset ? rest_[k] : position(item, last_.offset);
    if (at_[k] + item.size > cap_) return false;
    below = std::min(below, rest_[k] + item.size);
    key += mix(mix(k + 1) ^ static_cast<uint64_t>(rest_[k]));
    tie_bites |= last_.placed && rest_[k] == last_.offset && rank_[k] < rank_[last_.item];
  }
  if (tie_bites) key ^= mix(salt_ ^ last_.item);
  if (failed_.failed(key, cap_)) return false;
  if (!sections_can_fit(begin, end)) return fail(key);

  // Groups of items that never meet in time are solved apart.
  std::vector<size_t> cuts;
  int64_t reach = items[lists_[begin]].upper;
  for (size_t i = begin + 1; i < end; ++i) {
    const SearchItem& item = items[lists_[i]];
    if (item.lower >= reach) cuts.push_back(i);
    reach = std::max(reach, item.upper);
  }
  if (!cuts.empty()) return solve_groups(begin, end, cuts, key);
  return branch(begin, end, key, below, cap_ - most_unplaced_bytes(begin, end));
}

// highest_next: the next offset must leave room for the most unplaced bytes of a section.
bool CanonicalSearch::branch(size_t begin, size_t end, uint64_t key, int64_t below,
                             int64_t highest_next) {
  const size_t first = candidates_.size();
  for (size_t i = begin; i < end; ++i) {
    const uint32_t k = lists_[i];
    const int64_t at = rest_[k];
    if (at < last_.offset) continue;  // it would float: it waits for something to rest on
    if (at > highest_next || at >= below) continue;
    if (last_.placed && at == last_.offset && rank_[k] < rank_[last_.item]) continue;
    if (twin_[k] >= 0 && !placed_[twin_[k]]) continue;
    candidates_.push_back({at, rank_[k], k});
  }
  // Lowest first (the least space left dead), then the order's rank.
  std::sort(candidates_.begin() + static_cast<std::ptrdiff_t>(first), candidates_.end(),
            [](const Candidate& x, const Candidate& y) {
              return x.at != y.at ? x.at < y.at : x.rank < y.rank;
            });
  const size_t last = candidates_.size();
  const Last saved = last_;
  bool found = false;
  for (size_t n = first; n < last && !found; ++n) {
    const Candidate c = candidates_[n];
    const size_t mark = log_.size();
    place(c.item, c.at);
    last_ = {c.at, c.item, true};
    const size_t child = lists_.size();
    for (size_t i = begin; i < end; ++i) {
      const uint32_t j = lists_[i];
      if (j != c.item) lists_.push_back(j);
    }
    found = solve(child, lists_.size());
    lists_.resize(child);
    last_ = saved;
    if (!found) undo_to(mark);
    if (stopped_) break;
  }
  candidates_.resize(first);
  return found || fail(key);
}

// Each group from scratch (its own canonical order), the tightest first: one failure fails
// them all, and the groups already solved need no other solution.
bool CanonicalSearch::solve_groups(size_t begin, size_t end, std::span<const size_t> cuts,
                                   uint64_t key) {
  std::vector<std::tuple<int64_t, size_t, size_t>> groups;  // (slack, begin, end)
  size_t from = begin;
  for (size_t g = 0; g <= cuts.size(); ++g) {
    const size_t to = g < cuts.size() ? cuts[g] : end;
    groups.emplace_back(cap_ - most_unplaced_bytes(from, to), from, to);
    from = to;
  }
  std::sort(groups.begin(), groups.end());
  const size_t mark = log_.size();
  const Last saved = last_;
  for (const auto& [slack, from_i, to_i] : groups) {
    const size_t child = lists_.size();
    for (size_t i = from_i; i < to_i; ++i) {
      const uint32_t j = lists_[i];
      lists_.push_back(j);
    }
    last_ = {};
    const size_t rank_mark = rank_undo_.size();
    rank(child, lists_.size());
    const bool done = solve(child, lists_.size());
    unrank(rank_mark);
    lists_.resize(child);
    last_ = saved;
    if (!done) {
      undo_to(mark);
      return fail(key);
    }
  }
  return true;
}

// Each section must stack its unplaced items, each at or above at_[]: a one-machine schedule
// with release times, shortest when taken by release. A step in the floor next door can leave a
// section's bottom dead long before the offsets reach it; this sees it at once.
bool CanonicalSearch::sections_can_fit(size_t begin, size_t end) {
  const auto& items = problem_.items;
  jobs_.clear();
  uint32_t first = std::numeric_limits<uint32_t>::max();
  uint32_t last = 0;
  for (size_t i = begin; i < end; ++i) {
    const uint32_t k = lists_[i];
    const SearchItem& item = items[k];
    jobs_.push_back({at_[k], item.size, item.first_section, item.end_section});
    first = std::min(first, item.first_section);
    last = std::max(last, item.end_section);
  }
  std::sort(jobs_.begin(), jobs_.end(), [](const Job& x, const Job& y) { return x.at < y.at; });
  std::fill(stack_top_.begin() + first, stack_top_.begin() + last, 0);
  for (const Job& job : jobs_) {
    for (uint32_t s = job.first_section; s < job.end_section; ++s) {
      stack_top_[s] = std::max(stack_top_[s], job.at) + job.size;
      if (stack_top_[s] > cap_) return false;
    }
  }
  return true;
}

// The most unplaced bytes in one section of the (connected) group lists_[begin, end).
int64_t CanonicalSearch::most_unplaced_bytes(size_t begin, size_t end) const {
  const auto& items = problem_.items;
  uint32_t first = std::numeric_limits<uint32_t>::max();
  uint32_t last = 0;
  for (size_t i = begin; i < end; ++i) {
    first = std::min(first, items[lists_[i]].first_section);
    last = std::max(last, items[lists_[i]].end_section);
  }
  return *std::max_element(unplaced_bytes_.begin() + first, unplaced_bytes_.begin() + last);
}

void CanonicalSearch::place(uint32_t k, int64_t at) {
  const SearchItem& item = problem_.items[k];
  log_.push_back({k, undo_.size()});
  placed_[k] = 1;
  offset_[k] = at;
  const int64_t top = at + item.size;
  for (const uint32_t j : item.meets) {
    if (!placed_[j] && floor_[j] < top) {
      undo_.push_back({j, floor_[j]});
      floor_[j] = top;
    }
  }
  for (uint32_t s = item.first_section; s < item.end_section; ++s) unplaced_bytes_[s] -= item.size;
}

// Takes back the placements made after the log had `mark` entries.
void CanonicalSearch::undo_to(size_t mark) {
  while (log_.size() > mark) {
    const Placement p = log_.back();
    log_.pop_back();
    const SearchItem& item = problem_.items[p.item];
    placed_[p.item] = 0;
    for (uint32_t s = item.first_section; s < item.end_section; ++s) {
      unplaced_bytes_[s] += item.size;
    }
    while (undo_.size() > p.undo_mark) {
      floor_[undo_.back().item] = undo_.back().floor;
      undo_.pop_back();
    }
  }
}

void CanonicalSearch::save_plan() {
  for (uint32_t i = 0; i < problem_.buffers.size(); ++i) {
    plan_[i] = problem_.buffers[i].fixed_offset.value_or(0);
  }
  for (size_t k = 0; k < problem_.items.size(); ++k) plan_[problem_.items[k].buffer] = offset_[k];
}

}  // namespace footprint::plan::detail
