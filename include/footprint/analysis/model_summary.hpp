#pragma once
// What a model is made of, before anything runs: interface, ops, and where its weight bytes
// live (the data behind `footprint info`).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "footprint/core/dtype.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/model.hpp"

namespace footprint::analysis {

struct TensorSignature {
  std::string name;
  DType dtype = DType::undefined;
  Shape shape;
  std::string type_text;  // "float[1,3,224,224]", "seq(float[?])", ...
};

// Where weight bytes reside while the model is loaded.
struct WeightResidence {
  uint64_t mapped = 0;    // views of a memory-mapped file (model or external data)
  uint64_t borrowed = 0;  // views of caller-owned bytes
  uint64_t heap = 0;      // in an owned buffer, or stored as varints that must be decoded
};

struct ModelSummary {
  std::string model;
  uint64_t file_bytes = 0;
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::vector<std::pair<std::string, int64_t>> opsets;  // domain ("" = ai.onnx), version
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  size_t nodes = 0;                            // in the main graph
  size_t subgraphs = 0;                        // at any depth
  size_t subgraph_nodes = 0;                   // in all subgraphs together
  std::map<std::string, size_t> ops;           // main graph, "domain::Op" outside ai.onnx
  std::map<std::string, size_t> subgraph_ops;  // all subgraphs
  std::vector<std::string> unknown_ops;        // not in the op registry
  size_t initializers = 0;                     // main graph
  uint64_t initializer_bytes = 0;              // all graphs
  size_t constant_nodes = 0;                   // Constant nodes with a tensor value
  uint64_t constant_bytes = 0;
  uint64_t weight_bytes = 0;  // initializer_bytes + constant_bytes
  WeightResidence residence;
  std::vector<std::string> external_files;
  uint64_t tree_bytes = 0;  // the parsed tree in memory
};

ModelSummary summarize(const graph::Model& model, const graph::Graph& g);

std::string type_text(const graph::Value& v);

}  // namespace footprint::analysis
