#pragma once
// A shared model's graph with its inputs bound to the extents of the test data beside it
// (input_0.pb, ...), as `footprint run --data-dir` binds them: the shapes its run has, which a
// model with dims that exist only at run time (a speech model's sequence) needs to be sized.
#include <filesystem>
#include <string>
#include <vector>

#include "footprint/graph/bind_inputs.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/tensor_file.hpp"

namespace footprint::testing {

inline void bind_shared_inputs(graph::Graph& g, const std::filesystem::path& model) {
  graph::InputShapes shapes;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const auto pb = model.parent_path() / ("input_" + std::to_string(i) + ".pb");
    if (!std::filesystem::exists(pb)) continue;
    const onnx::TensorFile t = onnx::TensorFile::load_file(pb);
    const auto& dims = t.tensor().dims;
    shapes[g.value(g.inputs()[i]).name] = std::vector<int64_t>(dims.begin(), dims.end());
  }
  std::vector<std::string> defaulted;
  graph::bind_input_extents(g, {}, defaulted, shapes);
}

}  // namespace footprint::testing
