// `best-fit`: XLA's two ways of placing buffers, keeping the best plan.
//
// The heap simulation replays the lifetimes as a program would: allocation and free events in
// time order (frees first at equal times, larger allocations first), each allocation going to
// the smallest free gap of the arena at that moment, else on top. O(n log n), so it is what
// `auto` falls back on for millions of buffers. Fixed-offset buffers are taken as reserved for
// the whole run here; the global orders below place around them exactly.
//
// The global orders (XLA's GlobalDecreasingSizeBestFitHeap) see whole lifetimes at once: buffers
// in decreasing size ("spatial") or decreasing lifetime ("temporal") order, each into the
// smallest gap left by the buffers it meets in time.
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
  int64_t allocate(int64_t size, int64_t alignment) {
    for (auto it = gaps_.lower_bound({size, 0}); it != gaps_.end(); ++it) {
      const auto [length, begin] = *it;
      const int64_t at = align_up(begin, alignment);
      if (at + size > begin + length) continue;  // the alignment padding does not fit
      gaps_.erase(it);
      add_gap(begin, at);
      add_gap(at + size, begin + length);
      live_.emplace(at, at + size);
      return at;
    }
    const int64_t old_top = top();
    const int64_t at = align_up(old_top, alignment);
    add_gap(old_top, at);
    live_.emplace(at, at + size);
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
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::vector<Span> merged;
  for (const Span& s : spans) {
    if (!merged.empty() && s.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, s.end);
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

Plan global_best_fit(std::span<const Buffer> buffers, bool by_size) {
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
  p.offsets = place_in_order(buffers, order, Fit::tightest);
  return p;
}

}  // namespace

Plan plan_heap_simulation(std::span<const Buffer> buffers) {
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
  for (const Event& e : events) {
    if (e.alloc) {
      p.offsets[e.index] = heap.allocate(e.size, buffers[e.index].alignment);
    } else {
      heap.release(p.offsets[e.index]);
    }
  }
  return p;
}

Plan plan_best_fit(std::span<const Buffer> buffers) {
  Plan best = plan_heap_simulation(buffers);
  if (buffers.size() > kGlobalBestFitLimit) return best;
  int64_t best_arena = arena_bytes(buffers, best.offsets);
  for (const bool by_size : {true, false}) {
    Plan p = global_best_fit(buffers, by_size);
    const int64_t arena = arena_bytes(buffers, p.offsets);
    if (arena < best_arena) {
      best = std::move(p);
      best_arena = arena;
    }
  }
  return best;
}

}  // namespace footprint::plan::detail
