#include "model_program.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "flags.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/input_files.hpp"
#include "footprint/runtime/op_kernels.hpp"

namespace footprint::cli {

std::vector<InputFile> files_read(const std::string& model, const std::string& data_dir) {
  std::vector<InputFile> files{{model, "the input"}};
  if (!data_dir.empty()) {
    for (auto& f : graph::numbered_tensor_files(data_dir, "input"))
      files.push_back({std::move(f), "an input of --data-dir"});
    for (auto& f : graph::numbered_tensor_files(data_dir, "output"))
      files.push_back({std::move(f), "a reference output of --data-dir"});
  }
  return files;
}

std::pair<std::string, std::string> split_binding(const std::string& text, const char* flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw UsageError(std::string(flag) + " expects NAME=VALUE, got " + in_quotes(text));
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

int64_t parse_dim_value(const std::string& text, const char* flag) {
  const std::optional<int64_t> v = parse_int64(text);
  if (!v || *v < 0) {
    throw UsageError(std::string(flag) + ": " + in_quotes(text) + " is not a non-negative integer");
  }
  return *v;
}

std::pair<std::string, std::vector<int64_t>> parse_shape(const std::string& text) {
  const auto [name, dims] = split_binding(text, "--shape");
  std::vector<int64_t> extents;
  size_t start = 0;
  while (true) {
    const size_t x = dims.find('x', start);
    extents.push_back(parse_dim_value(dims.substr(start, x - start), "--shape"));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return {name, extents};
}

analysis::InputsPolicy policy_of(const std::string& s) {
  return s == "donated" ? analysis::InputsPolicy::donated : analysis::InputsPolicy::caller;
}

ModelProgram load_model_program(const ModelArgs& args) {
  analysis::ModelProgramOptions options;
  options.inputs = policy_of(args.inputs);
  options.order = args.order;
  options.subgraph_arena = analysis::subgraph_arena(args.planner);
  options.fuse = args.fuse;
  options.carry_float32 = args.carry_float32;
  for (const std::string& d : args.dims) {
    const auto [name, value] = split_binding(d, "--dim");
    options.dims[name] = parse_dim_value(value, "--dim");
  }
  for (const std::string& s : args.shapes) {
    auto [name, extents] = parse_shape(s);
    if (!options.shapes.emplace(name, std::move(extents)).second)
      throw UsageError("--shape " + name + " is given twice");
  }
  auto model = std::make_shared<const graph::Model>(graph::load_model(args.path));
  if (!args.data_dir.empty()) {
    const auto files = graph::numbered_tensor_files(args.data_dir, "input");
    if (files.empty()) throw Error(args.data_dir + ": no input_0.pb");
    for (auto& [name, extents] : graph::input_shapes_from_files(*model, files, &options.values)) {
      if (!options.shapes.emplace(name, std::move(extents)).second)
        throw UsageError("input " + in_quotes(name) + " is given by --shape and by --data-dir");
    }
  }
  // The runtime's registry: the kernels' workspace is part of the prediction, sized for one
  // thread as `footprint run` runs by default.
  runtime::set_intra_op_threads(1);
  ModelProgram m = analysis::build_model_program(std::move(model), runtime::op_registry(), options);
  if (!m.rebatched.empty()) std::fprintf(stderr, "footprint: %s\n", m.rebatched.c_str());
  return m;
}

}  // namespace footprint::cli
