#pragma once
// A graph built from hand-assembled wire bytes, with everything it views kept alive beside it.
#include <cstddef>
#include <memory>
#include <vector>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"
#include "onnx/wire_builder.hpp"

namespace footprint::testing {

struct BuiltGraph {
  std::vector<std::byte> bytes;
  std::unique_ptr<onnx::Model> model;  // on the heap: the graph points at it
  graph::Graph graph;
};

// ModelProto{ir 8, opset 13, g} loaded from borrowed bytes named "g.onnx"; shapes inferred on
// request.
inline BuiltGraph build_graph(const Wire& g, bool infer = false) {
  BuiltGraph b;
  b.bytes = model(g).bytes();
  b.model = std::make_unique<onnx::Model>(onnx::load(onnx::ModelSource::borrow(b.bytes, "g.onnx")));
  b.graph = graph::Graph::from_onnx(*b.model, graph::OpRegistry::builtin());
  if (infer) graph::infer_shapes(b.graph);
  return b;
}

}  // namespace footprint::testing
