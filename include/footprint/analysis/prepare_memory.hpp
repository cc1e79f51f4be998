#pragma once
// What preparing a model holds on the heap besides the plan, predicted from the graph: weights
// copied because the model stores them misaligned or as typed fields, constants computed once,
// and the kernels' packed weights, each allocated and released in the order the runtime's
// preparation does (runtime::GraphRunner tallies the same buffers as it goes, so the two
// compare exactly). A lower bound of the heap preparing takes: oneDNN's primitives and JIT
// code, the graph's and the plan's own records and a kernel's scratch while it evaluates a
// constant come on top (`run` measures the whole with the counting allocator).
//
//   GraphProgram p = build_program(g, options);
//   Timeline t = build_timeline(p.program);
//   PrepareMemory m = predict_prepare(g, p, t);   // m.peak_bytes: declared buffers' peak
#include <algorithm>
#include <cstdint>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/graph/graph.hpp"

namespace footprint::analysis {

// Bytes held now and at most so far, as buffers are allocated and released.
struct HeapTally {
  uint64_t now = 0;
  uint64_t peak = 0;
  void add(uint64_t bytes) {
    now += bytes;
    peak = std::max(peak, now);
  }
  void drop(uint64_t bytes) { now -= std::min(now, bytes); }
};

struct PrepareMemory {
  uint64_t copied_weights_bytes = 0;  // initializers not readable in place (alignment, typed)
  uint64_t constants_bytes = 0;       // computed constants, every one allocated
  uint64_t packed_bytes = 0;          // the kernels' packed weights
  // Of those buffers together: the most held at once while preparing, and what stays held.
  uint64_t peak_bytes = 0;
  uint64_t kept_bytes = 0;
};

// The main graph's buffers (a branch's or body's are prepared with their node, not counted).
PrepareMemory predict_prepare(const graph::Graph& g, const GraphProgram& p, const Timeline& t);

}  // namespace footprint::analysis
