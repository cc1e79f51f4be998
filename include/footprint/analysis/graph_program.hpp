#pragma once
// A model's graph as a MemoryProgram: one tensor per value with its bytes under the given dim
// bindings and its category, one step per node in the chosen order, views and in-place from the
// op registry, compile-time constants counted as weights, subgraphs analysed per branch.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "footprint/analysis/memory_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/graph/graph.hpp"

namespace footprint::analysis {

struct GraphProgram;

// The arena a branch or body runs in, given its graph and its analysed program and timeline:
// what its plan obtains (analysis::subgraph_arena gives a planner's; the runtime answers with the
// arena it planned), so a control-flow node's scratch is the bytes the runtime hands it.
using SubgraphArenaFn =
    std::function<uint64_t(const graph::Graph&, const GraphProgram&, const Timeline&)>;

struct GraphProgramOptions {
  InputsPolicy inputs = InputsPolicy::caller;
  DimBindings dims;                  // values for named dims; unbound ones default to 1
  std::vector<graph::NodeId> order;  // empty: graph::topo_order
  // Empty: a subgraph's scratch is its lower bound, and every figure that includes it is a
  // lower bound too (GraphProgram::warnings says so).
  SubgraphArenaFn subgraph_arena;
};

// One branch or body of a control-flow node, analysed on its own.
struct SubgraphMemory {
  std::string node;
  std::string attribute;
  uint64_t lower_bound_bytes = 0;
  uint64_t total_peak_bytes = 0;
  uint64_t arena_bytes = 0;  // the node's scratch for it: planned, or the lower bound
  bool planned = false;      // arena_bytes came from GraphProgramOptions::subgraph_arena
};

// A tensor whose size is an upper bound (ProgramTensor::bound_by).
struct BoundedTensor {
  std::string tensor;  // "node/attribute: tensor" inside a branch or body
  std::string bound_by;
};

struct GraphProgram {
  MemoryProgram program;
  std::vector<graph::NodeId> order;       // every node, in the order they run or fold
  std::vector<graph::NodeId> step_nodes;  // the node behind each of program.steps
  std::vector<std::string> unbound_dims;  // named dims that defaulted to 1
  std::vector<std::string> warnings;
  std::vector<SubgraphMemory> subgraphs;
  // Tensors sized by their bound, in value order (their branches' and bodies' included, named
  // "node/attribute: tensor"): every figure they reach is "at most".
  std::vector<BoundedTensor> bounded;
  size_t constant_nodes = 0;  // folded into weights: they run once when the model is prepared
  // Weights the kernels keep in layouts of their own, on the heap beside the plan (OpSchema::
  // packed): what `run` measures as packed_weights_bytes.
  uint64_t packed_bytes = 0;
  std::vector<uint64_t> step_packed;  // the same per step (program.steps' order)
  // Per step: where its branches' or body's arena starts in its workspace, after the kernel's
  // own scratch (a Loop's carried values), 64-byte aligned; 0 for a step without subgraphs.
  std::vector<uint64_t> step_subgraph_offset;
};

// Throws footprint::Error naming the first tensor whose size is neither known nor bounded (its
// producer, the dim, and what would fix it): no figure is ever computed from a size taken as 0.
GraphProgram build_program(const graph::Graph& g, const GraphProgramOptions& options = {});

}  // namespace footprint::analysis
