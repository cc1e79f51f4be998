// `best-fit`: XLA's two ways of placing buffers, keeping the best plan.
//
// The heap simulation replays the lifetimes as a program would: allocation and free events in
// time order (frees first at equal times, larger allocations first), each allocation going to
// the smallest free gap of the arena at that moment, else on top. O(n log n) whatever the
// overlaps. Fixed-offset buffers are taken as reserved for the whole run here; the global
// orders below place around them exactly.
//
// The global orders (XLA's GlobalDecreasingSizeBestFitHeap) see whole lifetimes at once: buffers
// in decreasing size ("spatial") or decreasing lifetime ("temporal") order, each into the
// smallest gap left by the buffers it meets in time (place_in_order: a time index, not a scan).
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "algorithms.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {
namespace {

// The arena at one moment of the simulation: disjoint live spans and the gaps between them,
// indexed by length for the best-fit lookup. Above the top span everything is free.
class Heap {
 public:
  int64_t allocate(const Buffer& b) {
    const int64_t size = b.size;
    for (auto it = gaps_.lower_bound({size, 0}); it != gaps_.end(); ++it) {
      const auto [length, begin] = *it;
      const int64_t at = align_up(begin, b.alignment);  // below the top: fits
      if (at + size > begin + length) continue;         // the alignment padding does not fit
      gaps_.erase(it);
      add_gap(begin, at);
      add_gap(at + size, begin + length);
      live_.emplace(at, at + size);
      return at;
    }
    const int64_t old_top = top();
    const int64_t at = aligned_offset(b, old_top);
    add_gap(old_top, at);
    live_.emplace(at, top_of(b, at));
    return at;
  }

  void release(int64_t begin) {
    const auto it = live_.find(begin);
    const int64_t end = it->second;
    const int64_t below = it == live_.begin() ? 0 : std::prev(it)->second;
    const auto next = live_.erase(it);
    remove_gap(below, begin);
    if (next == live_.end()) return;  // the top comes down to `below`
    remove_gap(end, next->first);
    add_gap(below, next->first);
  }

  // Space nobody may ever use (fixed-offset buffers), spans disjoint.
  void reserve(int64_t begin, int64_t end) {
    const int64_t old_top = top();
    live_.emplace(begin, end);
    add_gap(old_top, begin);
  }

 private:
  int64_t top() const { return live_.empty() ? 0 : std::prev(live_.end())->second; }
  void add_gap(int64_t begin, int64_t end) {
    if (end > begin) gaps_.emplace(end - begin, begin);
  }
  void remove_gap(int64_t begin, int64_t end) {
    if (end > begin) gaps_.erase({end - begin, begin});
  }

  std::map<int64_t, int64_t> live_;             // begin -> end
  std::set<std::pair<int64_t, int64_t>> gaps_;  // (length, begin)
};

// The union of the fixed buffers' spans, in offset order.
std::vector<Span> fixed_spans(std::span<const Buffer> buffers) {
  std::vector<Span> spans;
  for (const Buffer& b : buffers) {
    if (b.fixed_offset && b.size > 0) spans.push_back({*b.fixed_offset, *b.fixed_offset + b.size});
  }
  join(spans);
  return spans;
}

}  // namespace

Plan plan_global_best_fit(std::span<const Buffer> buffers, bool by_size, const Deadline& deadline) {
  auto length = [&](uint32_t i) { return buffers[i].upper - buffers[i].lower; };
  std::vector<uint32_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const auto key_a =
        by_size ? std::pair(buffers[a].size, length(a)) : std::pair(length(a), buffers[a].size);
    const auto key_b =
        by_size ? std::pair(buffers[b].size, length(b)) : std::pair(length(b), buffers[b].size);
    return key_a > key_b;
  });
  Plan p;
  p.algorithm = by_size ? "best-fit(size)" : "best-fit(time)";
  Placement placed = place_in_order(buffers, order, Fit::tightest, deadline);
  p.offsets = std::move(placed.offsets);
  p.cut_short = placed.cut_short;
  return p;
}

Plan plan_heap_simulation(std::span<const Buffer> buffers, const Deadline& deadline) {
  struct Event {
    int64_t time;
    bool alloc;
    int64_t size;
    uint32_t index;
  };
  std::vector<Event> events;
  events.reserve(2 * buffers.size());
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.fixed_offset || b.size == 0) continue;
    events.push_back({b.lower, true, b.size, i});
    events.push_back({b.upper, false, b.size, i});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.alloc != b.alloc) return !a.alloc;
    if (a.size != b.size) return a.size > b.size;
    return a.index < b.index;
  });
  Plan p;
  p.algorithm = "best-fit(heap)";
  p.offsets.assign(buffers.size(), 0);
  Heap heap;
  for (const Span& s : fixed_spans(buffers)) heap.reserve(s.begin, s.end);
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].fixed_offset) p.offsets[i] = *buffers[i].fixed_offset;
  }
  // Past the deadline, the allocations left go above the highest top reached so far, clear of
  // everything placed before; the heap is not consulted again.
  int64_t highest = 0;
  for (const Span& s : fixed_spans(buffers)) highest = std::max(highest, s.end);
  for (size_t k = 0; k < events.size(); ++k) {
    const Event& e = events[k];
    const Buffer& b = buffers[e.index];
    if (!p.cut_short && (k & 255) == 0 && deadline.passed()) p.cut_short = true;
    if (!e.alloc) {
      if (!p.cut_short) heap.release(p.offsets[e.index]);
      continue;
    }
    p.offsets[e.index] = p.cut_short ? aligned_offset(b, highest) : heap.allocate(b);
    highest = std::max(highest, top_of(b, p.offsets[e.index]));
  }
  return p;
}

Plan plan_best_fit(std::span<const Buffer> buffers, const Deadline& deadline) {
  Plan best = plan_heap_simulation(buffers, deadline);
  bool cut_short = best.cut_short;
  int64_t best_arena = arena_bytes(buffers, best.offsets);
  for (const bool by_size : {true, false}) {
    if (cut_short) break;
    Plan p = plan_global_best_fit(buffers, by_size, deadline);
    cut_short = p.cut_short;
    const int64_t arena = arena_bytes(buffers, p.offsets);
    if (arena < best_arena) {
      best = std::move(p);
      best_arena = arena;
    }
  }
  best.cut_short = cut_short;
  return best;
}

}  // namespace footprint::plan::detail
