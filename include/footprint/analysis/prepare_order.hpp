#pragma once
// The order preparing runs in, which the runner follows (runtime/runner/) and
// analysis::predict_prepare replays: the constant nodes in program order, and each step's kernel
// prepared as soon as every constant it reads has been computed (before the first constant node
// when it reads none). A kernel that packs a computed weight so releases it before the next
// weight is computed: preparing holds one computed weight beside the packed ones, not all of
// them (VGG-19 as the light models compute it, 548 MiB of weights: 941 MiB -> 557 MiB).
//
// PrepareReaders says when a constant goes: every constant node and step reading it done, none
// of them needing it itself.
//
//   PrepareOrder order = prepare_order(g, program, timeline.storage);
//   PrepareReaders readers = prepare_readers(g, program, timeline.storage);
//   for (const PrepareOrder::Event& e : order.events) {
//     if (e.is_step) { ... prepare step e.index; readers.step_read(n, replaced, release) ... }
//     else { ... evaluate order.constants[e.index]; readers.constant_read(n, release) ... }
//   }
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/graph/graph.hpp"

namespace footprint::analysis {

struct PrepareOrder {
  struct Event {
    bool is_step = false;
    size_t index = 0;  // into `constants`, or into the program's step_nodes
  };
  std::vector<graph::NodeId> constants;  // the nodes evaluated once, in program order
  std::vector<Event> events;
};

// `storage`: each value's root (Timeline::storage).
PrepareOrder prepare_order(const graph::Graph& g, const GraphProgram& p,
                           std::span<const int> storage);

// Per root value: reads by constant nodes and steps not done yet, and whether something needs
// the tensor itself to the end (a graph output, a subgraph's implicit input, a step reading it
// other than through a packed copy, or a constant no step reads that is not only read while
// preparing).
class PrepareReaders {
 public:
  PrepareReaders(const graph::Graph& g, const GraphProgram& p, std::span<const int> storage);

  // After constant node `n` ran: `release(root)` for each input now read by no one.
  template <class Release>
  void constant_read(const graph::Node& n, Release&& release) {
    for (const graph::ValueId v : n.inputs) {
      if (v != graph::kNoValue) done(root(v), release);
    }
  }

  // After step node `n` was prepared: input i read only through a packed copy where
  // `replaced(i)`; `release(root)` for each input now read by no one.
  template <class Replaced, class Release>
  void step_read(const graph::Node& n, Replaced&& replaced, Release&& release) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == graph::kNoValue) continue;
      const size_t r = root(n.inputs[i]);
      if (!replaced(i)) kept_[r] = 1;
      done(r, release);
    }
  }

  int left(size_t root) const { return left_[root]; }
  bool kept(size_t root) const { return kept_[root] != 0; }

 private:
  size_t root(graph::ValueId v) const { return static_cast<size_t>(storage_[v]); }
  template <class Release>
  void done(size_t r, Release& release) {
    if (--left_[r] == 0 && kept_[r] == 0) release(r);
  }

  std::span<const int> storage_;
  std::vector<int> left_;
  std::vector<char> kept_;
};

}  // namespace footprint::analysis
