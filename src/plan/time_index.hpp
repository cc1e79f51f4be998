#pragma once
// The space taken by the buffers placed so far, found by time: the spans of the placed buffers
// that meet a given buffer, as a few sorted unions rather than one span per buffer.
//
// A placed buffer j meets the queried b = [f, e) (in sections, sections.hpp) either because it
// covers f, or because it starts inside (f, e); never both.
//   * "covers": a segment tree over the sections; j's span goes to the O(log S) canonical nodes
//     of [first(j), end(j)), so the nodes on the path from leaf f to the root hold exactly the
//     buffers covering f. The union of a path's top part (from the root down to a node serving
//     64 sections or more) is kept per such node and brought up to date from a log of what was
//     added above it, so a query reads one long union and a few small ones.
//   * "starts inside (f, e)": the canonical nodes of [f+1, e), read three ways by height:
//       - near the leaves, nothing is stored: the buffers starting in a few sections are a slice
//         of the buffers sorted by first section, and the query reads the placed ones' spans
//         (an update there would cost a cache miss a level for a handful of spans);
//       - in the middle, a node keeps the union of the spans of the buffers starting in it;
//       - near the root, a node keeps the union of every buffer alive anywhere in it ("any
//         time"), which is exact for a node inside (f, e) and nearly solid: a query over a long
//         lifetime gets few gaps from one union, where the unions of the buffers starting there
//         leave hundreds for the next to fill.
// All three together answer in O(log S) unions a query, and a query over a long lifetime is
// answered by taking the runs out of the free gaps one by one (free_space.hpp), the solid ones
// first. Kept path unions and the log are bounded (a few spans a buffer; beyond that a union is
// made for the query and not kept, and the log is forgotten), so memory stays linear in n.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "footprint/plan/buffer.hpp"
#include "free_space.hpp"
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
  // buffers[i] in time, sorted by begin (spans may overlap).
  void taken_meeting(uint32_t i, std::vector<Span>& out);

  // choose_offset (placement.hpp) for buffers[i] among the space taken by the placed buffers
  // it meets, read from the index without merging it into one list.
  int64_t choose_offset(uint32_t i, Fit fit);

 private:
  // The runs (sorted, disjoint unions) whose union with the kept path union (returned) is the
  // space taken by the placed buffers meeting buffers[i]; the runs are in runs_.
  const std::vector<Span>& gather(uint32_t i);
  // The union of covers_ on the path from the root to node `top` (a node kCachedBelow levels
  // above the leaves, or the root), merged again if a node on it changed since.
  const std::vector<Span>& path_union(uint32_t top);
  // The placed buffers' spans starting in sections [first, end), as one sorted disjoint run.
  std::span<const Span> starting_in(uint32_t first, uint32_t end, std::vector<Span>& run) const;
  void add_anytime(uint32_t node, uint32_t lo, uint32_t hi, uint32_t first, uint32_t end,
                   Span taken);
  bool keeps_starts(uint32_t node) const { return node >= anytime_.size() && node < starts_end_; }

  std::span<const Buffer> buffers_;
  uint32_t leaves_ = 1;       // a power of two >= the number of sections
  uint32_t cache_shift_ = 0;  // leaf >> cache_shift_ is the node whose path union is kept
  std::vector<uint32_t> first_;
  std::vector<uint32_t> end_;
  std::vector<std::vector<Span>> covers_;   // by node: the union, sorted by begin
  std::vector<std::vector<Span>> starts_;   // by node, for the middle heights
  std::vector<std::vector<Span>> anytime_;  // by node, for the nodes near the root
  uint32_t starts_end_ = 0;                 // nodes from here on are near the leaves
  // The buffers by first section: those starting in section k are slots
  // [by_first_[k], by_first_[k + 1]), and a slot's span once its buffer is placed ({0, 0} before).
  std::vector<uint32_t> by_first_;
  std::vector<uint32_t> slot_;
  std::vector<Span> slot_span_;

  // A query's working space, kept to save allocations.
  std::vector<std::span<const Span>> runs_;
  size_t solid_runs_ = 0;   // the first runs_ are its "any time" unions, the highest node's first
  std::vector<Span> left_;  // its runs near the leaves
  std::vector<Span> right_;
  std::vector<Span> scratch_;
  std::vector<size_t> bounds_;
  std::vector<Span> small_;  // its runs but the path union, merged
  std::vector<Span> work_;   // a path union made again
  FreeGaps free_;

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
