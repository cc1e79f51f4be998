#pragma once
// What `analyze` and `plan` share for a model: parse --dim / --inputs / --order, load, infer
// shapes, pick the node order and simulate it.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"

namespace footprint::cli {

struct ModelArgs {
  std::string path;
  std::vector<std::string> dims;  // "N=8"
  std::string inputs = "caller";  // caller | donated
  std::string order = "stored";   // stored | memory
};

// What binding the inputs' extents before inference did (graph::bind_input_extents).
struct SpecializedInputs {
  bool concrete = false;               // every input got extents; inference ran on numbers
  std::vector<std::string> defaulted;  // named input dims no --dim bound: taken as 1
};

struct ModelProgram {
  std::unique_ptr<onnx::Model> model;  // the graph refers into it
  graph::Graph graph;
  graph::ShapeInferenceReport inference;
  SpecializedInputs inputs;
  analysis::GraphProgramOptions options;
  analysis::GraphProgram program;
  analysis::Timeline timeline;
  std::string order;                                 // "stored" or "memory"
  std::optional<uint64_t> stored_lower_bound_bytes;  // set with --order memory
};

// Appended to the --dim / --sweep help of every command that binds dims (graph::rebatch_if_bound).
inline constexpr const char* kRebatchHelp =
    "; binding batch on a model stored with a fixed batch (inputs [1,...]) re-batches it";

// "N=8" -> ("N", 8); malformed text is a usage error naming the flag.
std::pair<std::string, std::string> split_binding(const std::string& text, const char* flag);
int64_t parse_dim_value(const std::string& text, const char* flag);
analysis::InputsPolicy policy_of(const std::string& s);

ModelProgram load_model_program(const ModelArgs& args);

// The timeline of the same model, order and inputs policy at other dims, its shapes inferred
// anew there (a sweep's points).
analysis::Timeline timeline_at(const ModelProgram& m, const DimBindings& dims);

}  // namespace footprint::cli
