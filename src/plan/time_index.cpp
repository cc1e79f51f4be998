#include "time_index.hpp"

#include <algorithm>
#include <bit>

#include "sections.hpp"

namespace footprint::plan::detail {
namespace {

// Adds `s` to a sorted union of disjoint spans, merging what it overlaps or touches.
void unite(std::vector<Span>& spans, Span s) {
  // The first span that ends at or after s.begin: everything before it stays as it is.
  auto first = std::lower_bound(spans.begin(), spans.end(), s.begin,
                                [](const Span& x, int64_t at) { return x.end < at; });
  auto last = first;
  while (last != spans.end() && last->begin <= s.end) {
    s.begin = std::min(s.begin, last->begin);
    s.end = std::max(s.end, last->end);
    ++last;
  }
  if (first == last) {
    spans.insert(first, s);
    return;
  }
  *first = s;
  spans.erase(first + 1, last);
}

// Merges the sorted runs of `spans` (run k is [bounds[k], bounds[k+1])) into one sorted run,
// a round of pairwise merges at a time.
void merge_runs(std::vector<Span>& spans, std::vector<size_t>& bounds, std::vector<Span>& scratch) {
  const auto by_begin = [](const Span& x, const Span& y) { return x.begin < y.begin; };
  while (bounds.size() > 2) {
    scratch.resize(spans.size());
    size_t kept = 0;
    for (size_t k = 0; k + 1 < bounds.size(); k += 2) {
      const auto first = spans.begin() + static_cast<std::ptrdiff_t>(bounds[k]);
      const auto middle = spans.begin() + static_cast<std::ptrdiff_t>(bounds[k + 1]);
      const auto last = k + 2 < bounds.size()
                            ? spans.begin() + static_cast<std::ptrdiff_t>(bounds[k + 2])
                            : middle;
      std::merge(first, middle, middle, last,
                 scratch.begin() + static_cast<std::ptrdiff_t>(bounds[k]), by_begin);
      bounds[kept++] = bounds[k];
    }
    bounds[kept++] = spans.size();
    bounds.resize(kept);
    spans.swap(scratch);
  }
}

}  // namespace

TimeIndex::TimeIndex(std::span<const Buffer> buffers)
    : first_(buffers.size(), 0), end_(buffers.size(), 0) {
  const Sections sections(buffers);
  leaves_ = std::bit_ceil(static_cast<uint32_t>(std::max<size_t>(1, sections.count())));
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0) continue;
    first_[i] = static_cast<uint32_t>(sections.first(buffers[i]));
    end_[i] = static_cast<uint32_t>(sections.end(buffers[i]));
  }
  covers_.resize(2 * static_cast<size_t>(leaves_));
  starts_.resize(2 * static_cast<size_t>(leaves_));
}

void TimeIndex::add(uint32_t i, Span taken) {
  for (uint32_t l = first_[i] + leaves_, r = end_[i] + leaves_; l < r; l >>= 1, r >>= 1) {
    if (l & 1) unite(covers_[l++], taken);
    if (r & 1) unite(covers_[--r], taken);
  }
  for (uint32_t node = first_[i] + leaves_; node >= 1; node >>= 1) unite(starts_[node], taken);
}

void TimeIndex::taken_meeting(uint32_t i, std::vector<Span>& out) {
  out.clear();
  std::vector<size_t>& bounds = bounds_;
  bounds.assign(1, 0);
  auto append = [&](const std::vector<Span>& run) {
    if (run.empty()) return;
    out.insert(out.end(), run.begin(), run.end());
    bounds.push_back(out.size());
  };
  for (uint32_t node = first_[i] + leaves_; node >= 1; node >>= 1) append(covers_[node]);
  for (uint32_t l = first_[i] + 1 + leaves_, r = end_[i] + leaves_; l < r; l >>= 1, r >>= 1) {
    if (l & 1) append(starts_[l++]);
    if (r & 1) append(starts_[--r]);
  }
  merge_runs(out, bounds, scratch_);
}

}  // namespace footprint::plan::detail
