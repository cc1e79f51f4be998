#pragma once
// The buffers placed so far, found by time: those that meet a given buffer, in O(log S + k) for
// k answers over S sections of the time axis (sections.hpp), instead of a scan of every placed
// buffer.
//
// A placed buffer j meets the queried b = [f, e) (in sections) either because it covers f, or
// because it starts inside (f, e); never both. So there are two segment trees over the sections:
//   * "covers": j is listed at the O(log S) canonical nodes of [first(j), end(j)); the nodes on
//     the path from leaf f to the root list exactly the buffers covering f, each once;
//   * "starts": j is listed at leaf first(j) and its ancestors; the canonical nodes of [f+1, e)
//     list exactly the buffers starting inside, each once.
// The lists are fixed arrays sized up front (every buffer that takes space is counted), filled as
// buffers are placed. Memory O(n log S).
#include <cstdint>
#include <span>
#include <vector>

#include "footprint/plan/buffer.hpp"
#include "sections.hpp"

namespace footprint::plan::detail {

class TimeIndex {
 public:
  explicit TimeIndex(std::span<const Buffer> buffers);

  // Lists buffer `i` (which takes space) as placed. Each buffer at most once.
  void add(uint32_t i);

  // Calls visit(j) for every buffer j added so far that meets buffers[i] in time.
  template <class Visit>
  void for_each_meeting(uint32_t i, Visit&& visit) const {
    const uint32_t f = first_[i];
    const uint32_t e = end_[i];
    for (uint32_t node = f + leaves_; node >= 1; node >>= 1) visit_list(covers_, node, visit);
    for (uint32_t l = f + 1 + leaves_, r = e + leaves_; l < r; l >>= 1, r >>= 1) {
      if (l & 1) visit_list(starts_, l++, visit);
      if (r & 1) visit_list(starts_, --r, visit);
    }
  }

 private:
  // One list per tree node, as one array: node k's list is entries[begin[k], begin[k] + fill[k]).
  struct Lists {
    std::vector<uint32_t> begin;
    std::vector<uint32_t> fill;
    std::vector<uint32_t> entries;
  };
  template <class Visit>
  static void visit_list(const Lists& lists, uint32_t node, Visit& visit) {
    const uint32_t* p = lists.entries.data() + lists.begin[node];
    for (const uint32_t* end = p + lists.fill[node]; p != end; ++p) visit(*p);
  }
  template <class Each>
  void cover_nodes(uint32_t i, Each&& each) const;
  template <class Each>
  void start_nodes(uint32_t i, Each&& each) const;

  uint32_t leaves_ = 1;  // a power of two >= the number of sections
  std::vector<uint32_t> first_;
  std::vector<uint32_t> end_;
  Lists covers_;
  Lists starts_;
};

}  // namespace footprint::plan::detail
