// `footprint analyze MODEL|TRACE.json [--dim N=V]... [--sweep N=V1,V2,...] [--inputs
// caller|donated]
//  [--order stored|memory] [--json]`
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "footprint/analysis/dim_sweep.hpp"
#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/analysis/trace_format.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/report/analysis_report.hpp"
#include "model_program.hpp"

namespace footprint::cli {
namespace {

struct AnalyzeOptions {
  std::string input;
  std::vector<std::string> dims;
  std::vector<std::string> shapes;
  std::string data_dir;
  std::string sweep;
  std::string inputs = "caller";
  std::string order = "stored";
  bool no_fuse = false;
  bool keep_16bit = false;
  bool json = false;
};

void print_warnings(const report::AnalysisReport& r) {
  for (const auto& d : r.unbound_dims) {
    std::fprintf(stderr, "footprint: warning: dim %s is unbound; using 1 (set --dim %s=V)\n",
                 d.c_str(), d.c_str());
  }
  for (const auto& w : r.warnings) std::fprintf(stderr, "footprint: warning: %s\n", w.c_str());
}

void emit(const report::AnalysisReport& r, bool json) {
  print_warnings(r);
  if (json) {
    std::printf("%s\n", report::to_json(r).dump(2).c_str());
  } else {
    std::printf("%s", report::to_text(r).c_str());
  }
}

void analyze_trace(const AnalyzeOptions& o, bool inputs_given) {
  if (!o.dims.empty() || !o.shapes.empty() || !o.data_dir.empty() || !o.sweep.empty()) {
    throw UsageError(
        "--dim, --shape, --data-dir and --sweep apply to models; a trace has concrete sizes");
  }
  analysis::Trace trace = analysis::read_trace_file(o.input);
  if (inputs_given) trace.program.inputs = policy_of(o.inputs);
  if (o.order != "stored")
    throw UsageError("--order memory applies to models; a trace has its own order");
  const analysis::Timeline t = analysis::simulate(trace.program);
  report::AnalysisReport r;
  r.model = o.input;
  r.order = "trace";
  r.inputs_policy = trace.program.inputs == analysis::InputsPolicy::donated ? "donated" : "caller";
  r.timeline = &t;
  emit(r, o.json);
}

std::pair<std::string, std::vector<int64_t>> parse_sweep(const std::string& sweep) {
  std::pair<std::string, std::vector<int64_t>> out;
  if (sweep.empty()) return out;
  const auto [name, list] = split_binding(sweep, "--sweep");
  out.first = name;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    out.second.push_back(parse_dim_value(item, "--sweep"));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void analyze_model(const AnalyzeOptions& o) {
  const auto [sweep_dim, sweep_values] = parse_sweep(o.sweep);
  // The main report of a sweep is at its first value, unless --dim binds the dim itself.
  std::vector<std::string> dims = o.dims;
  const std::string sweep_prefix = sweep_dim + "=";
  const bool sweep_bound = std::any_of(dims.begin(), dims.end(), [&](const std::string& d) {
    return d.rfind(sweep_prefix, 0) == 0;
  });
  if (!sweep_dim.empty() && !sweep_values.empty() && !sweep_bound) {
    dims.push_back(sweep_dim + "=" + std::to_string(sweep_values.front()));
  }
  const ModelProgram m = load_model_program({.path = o.input,
                                             .dims = dims,
                                             .shapes = o.shapes,
                                             .data_dir = o.data_dir,
                                             .inputs = o.inputs,
                                             .order = o.order,
                                             .fuse = !o.no_fuse,
                                             .carry_float32 = !o.keep_16bit});
  report::AnalysisReport r = report::analysis_report(m, o.input);
  if (!sweep_dim.empty()) r.sweep = analysis::sweep_model(m, sweep_dim, sweep_values);
  emit(r, o.json);
}

bool is_trace(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

}  // namespace

void add_analyze_command(CLI::App& app) {
  auto opts = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Predict a model's (or a JSON trace's) memory: per-step timeline, lower bound, peak, and "
      "what is alive at the peak and why.");
  cmd->add_option("MODEL", opts->input, "ONNX model, or a JSON trace (docs/TRACE_FORMAT.md)")
      ->required();
  cmd->add_option(
      "--dim", opts->dims,
      std::string("Bind a named dim: --dim N=8 (repeatable; unbound dims are 1)") + kRebatchHelp);
  cmd->add_option("--shape", opts->shapes, kShapeHelp);
  cmd->add_option("--data-dir", opts->data_dir, kDataDirHelp);
  cmd->add_option(
      "--sweep", opts->sweep,
      std::string("Peak for each value of one dim, with slope and intercept: --sweep N=1,8,32") +
          kRebatchHelp);
  auto* inputs = cmd->add_option("--inputs", opts->inputs,
                                 "caller: the caller holds inputs for the whole run (default); "
                                 "donated: inputs are freed after their last use")
                     ->check(CLI::IsMember({"caller", "donated"}));
  cmd->add_flag("--no-fuse", opts->no_fuse, kNoFuseHelp);
  cmd->add_flag("--keep-16bit", opts->keep_16bit, kKeep16bitHelp);
  cmd->add_option("--order", opts->order,
                  "Node order: stored (the model's topological order) or memory (searched for a "
                  "lower lower bound; never worse than stored)")
      ->check(CLI::IsMember({"stored", "memory"}));
  cmd->add_flag("--json", opts->json, "Print one JSON object on stdout");
  cmd->callback([opts, inputs] {
    if (is_trace(opts->input)) {
      analyze_trace(*opts, inputs->count() > 0);
    } else {
      analyze_model(*opts);
    }
  });
}

}  // namespace footprint::cli
