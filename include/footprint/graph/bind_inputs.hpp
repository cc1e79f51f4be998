#pragma once
// Giving the graph's inputs their extents before inference from their declared dims, so that
// inference works on numbers: what analysis predicts for (graph::prepare_graph's bind step, unless
// a run binds its own tensors there: graph::InputBinder).
#include <string>
#include <vector>

#include "footprint/core/shape.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/shape_inference.hpp"

namespace footprint::graph {

// Gives every graph input the extents its declared dims take under `dims`, as the runtime does
// with the tensors it is handed, so that infer_shapes then works on numbers: Slice bounds and
// Expand shapes read from Shape, If conditions on dims, output-only dim names (a KV cache's
// past + seq) all become concrete, and analysis predicts the shapes the runtime will see.
// Named dims missing from `dims` take 1 and are appended to `defaulted` (once each).
//
//   auto g = graph::Graph::from_onnx(model, runtime::op_registry());
//   if (graph::bind_input_extents(g, {{"batch", 1}, {"seq", 128}}, defaulted)) ...
//   graph::infer_shapes(g);   // every value's shape is now static where the runtime's would be
//
// `shapes` gives whole inputs their extents (`--shape audio=1x16000`): what binds an input whose
// dims have no name (dim {}, common in exported speech models). Its named dims take the given
// extents for every other input too. Throws UsageError for a shape that names no input, has
// another rank, contradicts a declared extent, or binds a dim against `dims`.
//
// Returns false, leaving the graph as it was, when an input has a dim without a name (dim {})
// or an unknown rank that `shapes` does not give: nothing binds it.
bool bind_input_extents(Graph& g, const DimBindings& dims, std::vector<std::string>& defaulted,
                        const InputShapes& shapes = {});

}  // namespace footprint::graph
