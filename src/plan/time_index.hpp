#pragma once
// The space taken by the buffers placed so far, found by time: the spans of the placed buffers
// that meet a given buffer, as a few sorted unions rather than one span per buffer.
//
// A placed buffer j meets the queried b = [f, e) (in sections, sections.hpp) either because it
// covers f, or because it starts inside (f, e); never both. So there are two segment trees over
// the sections:
//   * "covers": j's span goes to the O(log S) canonical nodes of [first(j), end(j)); the nodes
//     on the path from leaf f to the root hold exactly the buffers covering f;
//   * "starts": j's span goes to leaf first(j) and its ancestors; the canonical nodes of
//     [f+1, e) hold exactly the buffers starting inside.
// A node keeps only the union of its spans (sorted, disjoint), and the union is all a placement
// needs. Greedy packing leaves these unions nearly solid, so a query reads O(log S) nodes of a
// few spans each, where a list of every buffer met would be thousands of spans to sort; placing
// a span costs O(log S) node updates.
#include <cstdint>
#include <span>
#include <vector>

#include "footprint/plan/buffer.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {

class TimeIndex {
 public:
  explicit TimeIndex(std::span<const Buffer> buffers);

  // Buffer `i` (which takes space) now takes bytes [offset, offset + size).
  void add(uint32_t i, Span taken);

  // Sets `out` to spans whose union is the space taken by the placed buffers that meet
  // buffers[i] in time, sorted by begin (spans may overlap). The nodes' unions are sorted
  // already, so they are merged pairwise rather than sorted: O(k log nodes) for k spans.
  void taken_meeting(uint32_t i, std::vector<Span>& out);

 private:
  uint32_t leaves_ = 1;  // a power of two >= the number of sections
  std::vector<uint32_t> first_;
  std::vector<uint32_t> end_;
  std::vector<std::vector<Span>> covers_;  // by node: the union, sorted by begin
  std::vector<std::vector<Span>> starts_;
  std::vector<Span> scratch_;   // the merges' working space, kept to save allocations
  std::vector<size_t> bounds_;  // where each node's run begins in the output
};

}  // namespace footprint::plan::detail
