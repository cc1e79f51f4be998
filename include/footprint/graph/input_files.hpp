#pragma once
// A model's input extents as tensor files give them: `--data-dir DIR` of analyze, plan and
// report reads DIR's input_0.pb, input_1.pb, ... (the ONNX backend tests' layout, what `run
// --data-dir` feeds the model) so that the prediction is made for the inputs the run will get.
//
//   const auto files = graph::numbered_tensor_files(dir, "input");
//   graph::InputShapes shapes = graph::input_shapes_from_files(model, files);
//
// Each file is mapped and only its header read; the data stays on disk.
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "footprint/graph/model.hpp"
#include "footprint/graph/prepare_graph.hpp"
#include "footprint/graph/shape_inference.hpp"

namespace footprint::graph {

// DIR/STEM_0.pb, DIR/STEM_1.pb, ... up to the first number missing.
std::vector<std::filesystem::path> numbered_tensor_files(const std::filesystem::path& dir,
                                                         std::string_view stem);

// Each file's extents for the input it feeds: the one its tensor names, or (unnamed) the next
// input in the graph's order no file names, as the runtime matches the tensors it is handed.
// Throws footprint::Error naming the file for a tensor that names no input, an input given
// twice, more files than inputs, or an element type other than the input's declared one.
// With `values`, also the value of each small integer or bool tensor among them (at most
// KnownValue::kMaxElements elements), for an extent that depends on an input's values.
InputShapes input_shapes_from_files(const Model& model,
                                    std::span<const std::filesystem::path> files,
                                    InputValues* values = nullptr);

}  // namespace footprint::graph
