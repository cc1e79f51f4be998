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
//
// On training traces the free space at one time is in a thousand pieces, and the covers path of
// a query spreads them over ~17 nodes: merging those was most of a greedy placement's time. So
// the union of a path's top part, from the root down to the node kCachedBelow levels above the
// leaves, is kept per such node and merged again only after a buffer was added to one of its
// nodes, by adding what the log says was added since. So a query merges one union with a few
// small runs. The kept unions and the log are bounded (a few spans a buffer; beyond that a
// union is made for the query and not kept, and the log is forgotten), so memory stays linear
// in n.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "footprint/plan/buffer.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {

class TimeIndex {
 public:
  // What the index may keep beside its trees, in spans: kept path unions and the log.
  struct Limits {
    size_t kept_spans;
    size_t logged_spans;
  };
  static Limits default_limits(size_t buffers);  // a few spans a buffer

  explicit TimeIndex(std::span<const Buffer> buffers)  // buffers outlive the index
      : TimeIndex(buffers, default_limits(buffers.size())) {}
  TimeIndex(std::span<const Buffer> buffers, Limits limits);

  // Buffer `i` (which takes space) now takes bytes [offset, offset + size).
  void add(uint32_t i, Span taken);

  // Sets `out` to spans whose union is the space taken by the placed buffers that meet
  // buffers[i] in time, sorted by begin (spans may overlap). The nodes' unions are sorted
  // already, so they are merged pairwise rather than sorted: O(k log nodes) for k spans.
  void taken_meeting(uint32_t i, std::vector<Span>& out);

  // choose_offset (placement.hpp) for buffers[i] among the space taken by the placed buffers
  // it meets, read from the index without merging it into one list.
  int64_t choose_offset(uint32_t i, Fit fit);

 private:
  // The space taken by the placed buffers that meet buffers[i], as two runs sorted by begin:
  // the kept path union (returned) and small_, the rest merged.
  const std::vector<Span>& gather(uint32_t i);
  // The union of covers_ on the path from the root to node `top` (a node kCachedBelow levels
  // above the leaves, or the root), merged again if a node on it changed since.
  const std::vector<Span>& path_union(uint32_t top);

  std::span<const Buffer> buffers_;
  uint32_t leaves_ = 1;       // a power of two >= the number of sections
  uint32_t cache_shift_ = 0;  // leaf >> cache_shift_ is the node whose path union is kept
  std::vector<uint32_t> first_;
  std::vector<uint32_t> end_;
  std::vector<std::vector<Span>> covers_;  // by node: the union, sorted by begin
  std::vector<std::vector<Span>> starts_;
  std::vector<Span> scratch_;   // the merges' working space, kept to save allocations
  std::vector<size_t> bounds_;  // where each node's run begins in the output
  std::vector<Span> small_;     // a query's runs below its kept path union, merged
  std::vector<Span> work_;      // a path union made again
  // The kept path unions, by top node, each made (or brought up to date) at made_at_ (0: not
  // kept). What was added to the covers of the nodes above them since is in log_, stamped by
  // the same counter; a log older than log_floor_ was forgotten.
  struct Logged {
    uint64_t stamp;
    Span span;
  };
  std::vector<std::vector<Span>> path_unions_;
  std::vector<uint64_t> made_at_;
  std::vector<std::vector<Logged>> log_;  // by node, for the nodes at or above the top nodes
  uint64_t clock_ = 0;
  uint64_t log_floor_ = 0;
  size_t kept_spans_ = 0;  // capacity of the kept unions, bounded by kept_limit_
  size_t kept_limit_ = 0;
  size_t logged_ = 0;
  size_t log_limit_ = 0;
};

}  // namespace footprint::plan::detail
