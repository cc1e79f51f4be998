#include "model_program.hpp"

#include <algorithm>
#include <cstdio>

#include "footprint/analysis/memory_order.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/rebatch.hpp"
#include "footprint/runtime/op_kernels.hpp"

namespace footprint::cli {

std::pair<std::string, std::string> split_binding(const std::string& text, const char* flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw UsageError(std::string(flag) + " expects NAME=VALUE, got " + in_quotes(text));
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

int64_t parse_dim_value(const std::string& text, const char* flag) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v < 0) {
    throw UsageError(std::string(flag) + ": " + in_quotes(text) + " is not a non-negative integer");
  }
  return v;
}

analysis::InputsPolicy policy_of(const std::string& s) {
  return s == "donated" ? analysis::InputsPolicy::donated : analysis::InputsPolicy::caller;
}

namespace {

// The graph analysis works on: the runtime's registry (the kernels' workspace is part of the
// prediction, sized for one thread as `footprint run` runs by default), re-batched when batch is
// bound, and with the inputs' extents bound before inference as the runtime binds them when it
// prepares, so prediction and run infer the same shapes.
graph::Graph graph_at(const onnx::Model& model, const DimBindings& dims, SpecializedInputs& info,
                      graph::ShapeInferenceReport* report) {
  runtime::set_intra_op_threads(1);
  graph::Graph g = graph::Graph::from_onnx(model, runtime::op_registry());
  if (const auto rebatched = graph::rebatch_if_bound(g, dims)) {
    if (report != nullptr) std::fprintf(stderr, "footprint: %s\n", rebatched->note().c_str());
  }
  info.concrete = graph::bind_input_extents(g, dims, info.defaulted);
  graph::ShapeInferenceReport r = graph::infer_shapes(g);
  if (report != nullptr) *report = std::move(r);
  return g;
}

void record_defaulted(const SpecializedInputs& info, analysis::GraphProgram& program) {
  for (const std::string& d : info.defaulted) {
    auto& u = program.unbound_dims;
    if (std::find(u.begin(), u.end(), d) == u.end()) u.push_back(d);
  }
}

}  // namespace

analysis::Timeline timeline_at(const ModelProgram& m, const DimBindings& dims) {
  SpecializedInputs info;
  const graph::Graph g = graph_at(*m.model, dims, info, nullptr);
  analysis::GraphProgramOptions options = m.options;
  options.dims = dims;
  return analysis::simulate(analysis::build_program(g, options).program);
}

ModelProgram load_model_program(const ModelArgs& args) {
  ModelProgram m;
  m.options.inputs = policy_of(args.inputs);
  for (const std::string& d : args.dims) {
    const auto [name, value] = split_binding(d, "--dim");
    m.options.dims[name] = parse_dim_value(value, "--dim");
  }
  m.model = std::make_unique<onnx::Model>(onnx::load_file(args.path));
  m.graph = graph_at(*m.model, m.options.dims, m.inputs, &m.inference);
  m.order = args.order;
  if (args.order == "memory") {
    // The search starts from (and never does worse than) the stored order.
    const analysis::MemoryOrder mo = analysis::memory_order(m.graph, m.options);
    m.stored_lower_bound_bytes = mo.stored_lower_bound_bytes;
    m.options.order = mo.order;
  }
  m.program = analysis::build_program(m.graph, m.options);
  record_defaulted(m.inputs, m.program);
  m.timeline = analysis::simulate(m.program.program);
  return m;
}

}  // namespace footprint::cli
