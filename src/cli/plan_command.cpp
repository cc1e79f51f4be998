// `footprint plan MODEL.onnx|TRACE.json|BUFFERS.csv [--dim N=V]... [--inputs caller|donated]
//  [--order stored|memory] [--algo NAME] [--time-limit S] [--capacity BYTES] [--seed N]
//  [-o OUT.csv] [--json]`
//
// Plans a model's or a trace's arena (its activations and workspace, from the analysis timeline)
// or a buffer list (MiniMalloc's CSV) with one of the planners. Every plan printed or written
// has passed the validator: plan_buffers() throws rather than return an invalid plan.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/analysis/trace_format.hpp"
#include "footprint/core/error.hpp"
#include "footprint/plan/buffer_csv.hpp"
#include "footprint/plan/planner.hpp"
#include "footprint/report/plan_report.hpp"
#include "model_program.hpp"

namespace footprint::cli {
namespace {

struct PlanCommandOptions {
  std::string input;
  std::string algo = "auto";
  std::optional<double> time_limit_s;
  std::optional<int64_t> capacity_bytes;
  uint64_t seed = 1;
  std::string output;
  bool json = false;
  std::vector<std::string> dims;    // models only
  std::vector<std::string> shapes;  // models only
  std::string data_dir;             // models only
  std::string inputs = "caller";
  bool inputs_given = false;  // a trace keeps its own "arguments" unless --inputs is given
  std::string order = "stored";
  bool no_fuse = false;
  bool keep_16bit = false;
};

using report::PlanSource;

bool is_model_path(const std::string& path) {
  return std::filesystem::path(path).extension() == ".onnx";
}

bool is_trace_path(const std::string& path) {
  return std::filesystem::path(path).extension() == ".json";
}

// The model's arena buffers under the chosen order, with warnings on stderr as analyze prints.
std::vector<plan::Buffer> model_buffers(const PlanCommandOptions& o, PlanSource& facts) {
  const ModelProgram m = load_model_program({.path = o.input,
                                             .dims = o.dims,
                                             .shapes = o.shapes,
                                             .data_dir = o.data_dir,
                                             .inputs = o.inputs,
                                             .order = o.order,
                                             .planner = o.algo,
                                             .fuse = !o.no_fuse,
                                             .carry_float32 = !o.keep_16bit});
  for (const auto& d : m.program.unbound_dims) {
    std::fprintf(stderr, "footprint: warning: dim %s is unbound; using 1 (set --dim %s=V)\n",
                 d.c_str(), d.c_str());
  }
  // A newer opset is never silent, here as in analyze (an unknown size already failed).
  for (const auto* list : {&m.inference.warnings, &m.program.warnings}) {
    for (const std::string& w : *list) std::fprintf(stderr, "footprint: warning: %s\n", w.c_str());
  }
  facts.order = m.order;
  facts.inputs_policy = o.inputs;
  facts.lower_bound_bytes = m.timeline.lower_bound_bytes;
  facts.lower_bound_arena_bytes = m.timeline.lower_bound_arena_bytes;
  facts.stored_lower_bound_bytes = m.stored_lower_bound_bytes;
  facts.bounded = m.program.bounded;
  return analysis::arena_buffers(m.timeline, m.program.program);
}

// A trace's arena buffers (docs/TRACE_FORMAT.md), in the trace's own order.
std::vector<plan::Buffer> trace_buffers(const PlanCommandOptions& o, PlanSource& facts) {
  if (!o.dims.empty() || !o.shapes.empty() || !o.data_dir.empty() || o.order != "stored") {
    throw UsageError(
        "--dim, --shape, --data-dir and --order apply to models; a trace has its own sizes and "
        "order");
  }
  analysis::Trace trace = analysis::read_trace_file(o.input);
  if (o.inputs_given) trace.program.inputs = policy_of(o.inputs);
  const analysis::Timeline t = analysis::simulate(trace.program);
  facts.order = "trace";
  facts.inputs_policy = o.inputs;
  facts.lower_bound_bytes = t.lower_bound_bytes;
  facts.lower_bound_arena_bytes = t.lower_bound_arena_bytes;
  return analysis::arena_buffers(t, trace.program);
}

void run_plan(const PlanCommandOptions& o) {
  if (!o.output.empty()) refuse_overwriting(o.output, files_read(o.input, o.data_dir), "-o");
  std::optional<PlanSource> facts;
  std::vector<plan::Buffer> buffers;
  if (is_model_path(o.input)) {
    facts.emplace();
    buffers = model_buffers(o, *facts);
  } else if (is_trace_path(o.input)) {
    facts.emplace();
    buffers = trace_buffers(o, *facts);
  } else {
    if (!o.dims.empty() || !o.shapes.empty() || !o.data_dir.empty() || o.order != "stored") {
      throw UsageError(
          "--dim, --shape, --data-dir and --order apply to models; a buffer list has fixed "
          "lifetimes");
    }
    buffers = plan::read_buffers_csv(o.input);
  }
  plan::PlanOptions options;
  options.time_limit_s = o.time_limit_s;
  options.capacity_bytes = o.capacity_bytes;
  options.seed = o.seed;
  const plan::Plan p = plan::plan_buffers(buffers, o.algo, options);
  if (!o.output.empty()) plan::write_plan_csv(o.output, buffers, p.offsets);
  report::PlanReport r;
  r.input = o.input;
  r.algo = o.algo;
  r.plan = &p;
  r.buffers = buffers.size();
  r.time_limit_s = o.time_limit_s;
  r.capacity_bytes = o.capacity_bytes;
  r.output = o.output;
  r.source = std::move(facts);
  if (o.json) {
    std::printf("%s\n", report::plan_json(r).dump(2).c_str());
  } else {
    std::printf("%s\n", report::plan_text(r).c_str());
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto opts = std::make_shared<PlanCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Give every buffer an offset in the smallest arena (a validated plan).");
  cmd->add_option("INPUT", opts->input,
                  "ONNX model or JSON trace (its activations and workspace), or a buffer list: "
                  "CSV with a "
                  "header id,lower,upper,size (MiniMalloc's format; lifetimes are half-open "
                  "[lower, upper))")
      ->required();
  cmd->add_option("--dim", opts->dims,
                  std::string("Model: bind a named dim, --dim N=8 (repeatable)") + kRebatchHelp);
  cmd->add_option("--shape", opts->shapes, std::string("Model: ") + kShapeHelp);
  cmd->add_option("--data-dir", opts->data_dir, std::string("Model: ") + kDataDirHelp);
  auto* inputs = cmd->add_option("--inputs", opts->inputs,
                                 "Model or trace: caller (inputs held by the caller; a model's "
                                 "default) or donated (a trace's default is its own)")
                     ->check(CLI::IsMember({"caller", "donated"}));
  cmd->add_flag("--no-fuse", opts->no_fuse, kNoFuseHelp);
  cmd->add_flag("--keep-16bit", opts->keep_16bit, kKeep16bitHelp);
  cmd->add_option("--order", opts->order,
                  "Model: node order, stored (default) or memory (searched for a lower bound)")
      ->check(CLI::IsMember({"stored", "memory"}));
  std::vector<std::string> names;
  for (const std::string_view n : plan::planner_names()) names.emplace_back(n);
  cmd->add_option("--algo", opts->algo, "Planner (default auto)")->check(CLI::IsMember(names));
  cmd->add_option(
         "--time-limit", opts->time_limit_s,
         "Seconds any planner may spend (default: anneal 1, exact 10, auto 5, the heuristics "
         "unlimited); it returns the best plan by then and says if it was cut short")
      ->check(positive_seconds());
  cmd->add_option("--capacity", opts->capacity_bytes,
                  "Bytes available: the searches stop at the first plan that fits")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", opts->seed, "Seed of the annealing search (default 1)");
  cmd->add_option("-o,--output", opts->output, "Write the plan as CSV: id,lower,upper,size,offset");
  cmd->add_flag("--json", opts->json, "Print one JSON object on stdout");
  cmd->callback([opts, inputs] {
    opts->inputs_given = inputs->count() > 0;
    run_plan(*opts);
  });
}

}  // namespace footprint::cli
