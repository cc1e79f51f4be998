#include "time_index.hpp"

#include <bit>

namespace footprint::plan::detail {
namespace {

// Sizes the lists from the number of entries each node will get, counted by `for_nodes`.
template <class ForNodes>
void size_lists(std::vector<uint32_t>& begin, std::vector<uint32_t>& fill,
                std::vector<uint32_t>& entries, size_t nodes, ForNodes&& for_nodes) {
  begin.assign(nodes + 1, 0);
  fill.assign(nodes, 0);
  for_nodes([&](uint32_t node) { ++begin[node + 1]; });
  for (size_t k = 0; k < nodes; ++k) begin[k + 1] += begin[k];
  entries.resize(begin[nodes]);
}

}  // namespace

template <class Each>
void TimeIndex::cover_nodes(uint32_t i, Each&& each) const {
  for (uint32_t l = first_[i] + leaves_, r = end_[i] + leaves_; l < r; l >>= 1, r >>= 1) {
    if (l & 1) each(l++);
    if (r & 1) each(--r);
  }
}

template <class Each>
void TimeIndex::start_nodes(uint32_t i, Each&& each) const {
  for (uint32_t node = first_[i] + leaves_; node >= 1; node >>= 1) each(node);
}

TimeIndex::TimeIndex(std::span<const Buffer> buffers)
    : first_(buffers.size(), 0), end_(buffers.size(), 0) {
  const Sections sections(buffers);
  leaves_ = std::bit_ceil(static_cast<uint32_t>(std::max<size_t>(1, sections.count())));
  std::vector<uint32_t> taking;  // the buffers that take space
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0) continue;
    first_[i] = static_cast<uint32_t>(sections.first(buffers[i]));
    end_[i] = static_cast<uint32_t>(sections.end(buffers[i]));
    taking.push_back(i);
  }
  const size_t nodes = 2 * static_cast<size_t>(leaves_);
  size_lists(covers_.begin, covers_.fill, covers_.entries, nodes, [&](auto count) {
    for (const uint32_t i : taking) cover_nodes(i, count);
  });
  size_lists(starts_.begin, starts_.fill, starts_.entries, nodes, [&](auto count) {
    for (const uint32_t i : taking) start_nodes(i, count);
  });
}

void TimeIndex::add(uint32_t i) {
  auto push = [i](Lists& lists) {
    return
        [&lists, i](uint32_t node) { lists.entries[lists.begin[node] + lists.fill[node]++] = i; };
  };
  cover_nodes(i, push(covers_));
  start_nodes(i, push(starts_));
}

}  // namespace footprint::plan::detail
