#pragma once
// One way to open a model, whatever its format: load_model reads the bytes, chooses the reader by
// what the bytes are (never by the file name or the caller), and returns a graph::Model, from
// which every layer above takes the graph. A new format is a new reader behind load_model, so
// the commands, the runtime, bench and the Python package need no change.
//
//   graph::Model model = graph::load_model("net.onnx");            // mapped, weights in place
//   graph::Graph g = model.graph(runtime::op_registry());          // views into the model
//   runtime::Session s(model);                                     // the model outlives both
//
// ONNX (a ModelProto) is the one format read today. A TensorFlow Lite FlatBuffer (identifier
// "TFL3" at byte 4) is recognised and refused with one line naming the source, not read as a
// protobuf.
#include <filesystem>
#include <string>
#include <vector>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/model_source.hpp"

namespace footprint::graph {

class Model {
 public:
  explicit Model(onnx::Model&& onnx) : onnx_(std::move(onnx)) {}
  Model(Model&&) noexcept = default;
  Model& operator=(Model&&) noexcept = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model() = default;

  // The model's main graph with its nodes bound to `registry`'s rows (Graph::from_onnx): a new
  // graph each call, for passes that rewrite it. Throws footprint::Error naming the node.
  Graph graph(const OpRegistry& registry) const { return Graph::from_onnx(onnx_, registry); }
  // Where the bytes come from: the name errors carry, the size, mapped or not.
  const onnx::ModelSource& source() const { return onnx_.source(); }
  // Every file the model's bytes are read from (onnx::Model::files()).
  std::vector<std::filesystem::path> files() const { return onnx_.files(); }
  // The stored model, for what only ONNX has (its summary, folding into a new .onnx file).
  const onnx::Model& onnx() const { return onnx_; }

 private:
  onnx::Model onnx_;
};

// Throws footprint::Error with one line naming the source: the reader's error for bytes it
// cannot read, or that the format is not supported yet. `options` are the ONNX reader's. The
// source is moved into the model only when loading succeeds.
Model load_model(onnx::ModelSource&& source, const onnx::LoadOptions& options = {});
// The file mapped (onnx::ModelSource::map_file).
Model load_model(const std::filesystem::path& path, const onnx::LoadOptions& options = {});

}  // namespace footprint::graph
