#pragma once
// Type and shape inference over a graph: every value gets a dtype and a (possibly symbolic)
// shape, small shape-like tensors get known contents, and compile-time constants are marked.
//
//   auto g = graph::Graph::from_onnx(model);
//   const auto report = graph::infer_shapes(g);
//   g.value(id).shape.to_string();   // "[N,64,floor((H-1)/2)+1,floor((W-1)/2)+1]"
//   report.ops_without_inference;    // ops whose outputs kept their declared types
//
// Nodes are visited in graph::topo_order. Each output's inferred type is merged with the type the
// model declares for it (value_info, graph outputs): the more specific dim wins (a concrete one
// over a symbolic one, an inferred expression over a declared name or unknown); two concrete dims
// that differ are an error naming the node. Graph inputs keep their declared dims. Subgraphs (If
// branches, Loop and Scan bodies) are inferred when their node is, with the enclosing values
// visible.
//
// Constants: initializers, Constant, and what deterministic ops compute from constants only
// (ConstantOfShape of a Constant shape, Shape of a static tensor, shape arithmetic on those) get
// Value::constant. Value::known holds the contents only when small (KnownValue::kMaxElements), so
// a 500 MB ConstantOfShape weight is marked constant without ever being materialised.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

struct ShapeInferenceOptions {
  // A node whose hook fails (an invalid model) becomes a warning and keeps its declared output
  // types, instead of an error. Contradictions with declared types stay errors.
  bool errors_as_warnings = false;
};

struct ShapeWarning {
  std::string graph;  // the (sub)graph's name
  NodeId node = -1;   // in that graph
  std::string op;     // "Op" or "domain:Op"
  std::string message;
};

struct ShapeInferenceReport {
  // One line per warning, naming the graph and node: "graph 'main': node 'x' (Foo): ...".
  std::vector<std::string> warnings;
  // The same warnings as data.
  std::vector<ShapeWarning> node_warnings;
  // Ops whose outputs kept their declared types (unknown to the registry or without an infer
  // hook), "Op" or "domain:Op", sorted, each once.
  std::vector<std::string> ops_without_inference;
  size_t nodes_inferred = 0;  // subgraph nodes included, once per inference of their graph
};

// Whole inputs' extents by input name.
using InputShapes = std::map<std::string, std::vector<int64_t>, std::less<>>;

ShapeInferenceReport infer_shapes(Graph& g, const ShapeInferenceOptions& options = {});

}  // namespace footprint::graph
