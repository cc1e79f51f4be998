// A lower bound above max-live where a small search can prove one.
//
// Max-live is the weighted clique bound of the interval graph: tight for the bytes live at one
// time, blind to the fact that a buffer keeps one offset for its whole life. Any plan of all the
// buffers is a plan of any subset, and cutting a lifetime shorter only removes conflicts, so the
// optimum of "the buffers met by a window of time, their lifetimes cut to it" bounds the whole.
// Around the busiest sections such a window holds a few dozen buffers, few enough for the exact
// search to refute heights above max-live; the best refuted height (plus one) is the bound.
//
// The windows grow around each of the busiest few sections, doubling their reach while they stay
// small, each search given an equal share of the time: cheap, and only ever raising the bound.
#include <algorithm>
#include <numeric>

#include "algorithms.hpp"
#include "sections.hpp"

namespace footprint::plan::detail {
namespace {

constexpr size_t kCenters = 3;         // busiest sections looked around
constexpr size_t kWindowBuffers = 96;  // beyond this many buffers a window stops growing
// Beyond this many buffers the busiest sections are crowded far past kWindowBuffers (the bound
// would only spend its share finding that out).
constexpr size_t kInstanceLimit = 100'000;

struct Covered {
  uint32_t first;
  uint32_t end;
};

// The buffers meeting sections [first, end), lifetimes cut to the window's times; none when more
// than kWindowBuffers do.
std::vector<Buffer> window(std::span<const Buffer> buffers, std::span<const Covered> covered,
                           const Sections& sections, size_t first, size_t end) {
  std::vector<Buffer> out;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.size == 0 || covered[i].end <= first || covered[i].first >= end) continue;
    if (out.size() == kWindowBuffers) return {};
    Buffer cut = b;
    cut.lower = std::max(b.lower, sections.point(first));
    cut.upper = std::min(b.upper, sections.point(end));
    out.push_back(std::move(cut));
  }
  return out;
}

}  // namespace

int64_t window_lower_bound(std::span<const Buffer> buffers, int64_t max_live,
                           const Deadline& deadline) {
  if (buffers.size() > kInstanceLimit || deadline.passed()) return max_live;
  const Sections sections(buffers);
  const size_t count = sections.count();
  if (count == 0) return max_live;
  std::vector<Covered> covered(buffers.size(), {0, 0});
  std::vector<int64_t> live(count + 1, 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    if (b.size == 0) continue;
    covered[i] = {static_cast<uint32_t>(sections.first(b)), static_cast<uint32_t>(sections.end(b))};
    live[covered[i].first] += b.size;
    live[covered[i].end] -= b.size;
  }
  std::partial_sum(live.begin(), live.end(), live.begin());
  std::vector<uint32_t> busiest(count);
  std::iota(busiest.begin(), busiest.end(), 0);
  const size_t centers = std::min(kCenters, count);
  std::partial_sort(busiest.begin(), busiest.begin() + static_cast<std::ptrdiff_t>(centers),
                    busiest.end(), [&](uint32_t a, uint32_t b) { return live[a] > live[b]; });

  int64_t bound = max_live;
  for (size_t c = 0; c < centers && !deadline.passed(); ++c) {
    const size_t center = busiest[c];
    std::vector<Buffer> previous;
    for (size_t reach = 1;; reach *= 2) {
      const size_t first = center >= reach ? center - reach : 0;
      const size_t end = std::min(count, center + reach + 1);
      if (deadline.passed()) return bound;
      std::vector<Buffer> w = window(buffers, covered, sections, first, end);
      if (w.empty() || w.size() == previous.size()) break;
      const double share = deadline.seconds_left() / static_cast<double>(2 * (centers - c));
      const Deadline part = deadline.within(share);
      const Plan start = plan_heap_simulation(w, part);
      const Plan searched = plan_exact(w, start, part, std::nullopt);
      bound = std::max(bound, searched.proven_bound_bytes);
      if (deadline.passed() || (first == 0 && end == count)) break;
      previous = std::move(w);
    }
  }
  return bound;
}

}  // namespace footprint::plan::detail
