// `footprint plan MODEL.onnx|TRACE.json|BUFFERS.csv [--dim N=V]... [--inputs caller|donated]
//  [--order stored|memory] [--algo NAME] [--time-limit S] [--capacity BYTES] [--seed N]
//  [-o OUT.csv] [--json]`
//
// Plans a model's or a trace's arena (its activations and workspace, from the analysis timeline)
// or a buffer list (MiniMalloc's CSV) with one of the planners. Every plan printed or written
// has passed the validator: plan_buffers() throws rather than return an invalid plan.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/analysis/trace_format.hpp"
#include "footprint/core/error.hpp"
#include "footprint/plan/buffer_csv.hpp"
#include "footprint/plan/planner.hpp"
#include "footprint/plan/timeline_buffers.hpp"
#include "footprint/report/analysis_report.hpp"
#include "footprint/report/model_summary_report.hpp"
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
  std::string inputs = "caller";
  bool inputs_given = false;  // a trace keeps its own "arguments" unless --inputs is given
  std::string order = "stored";
};

// Where a model's buffers came from, for the report.
struct ModelFacts {
  std::string order;
  uint64_t lower_bound_bytes = 0;
  uint64_t lower_bound_arena_bytes = 0;
  std::optional<uint64_t> stored_lower_bound_bytes;
  std::vector<analysis::BoundedTensor> bounded;  // data-dependent sizes, planned at their bounds
};

bool is_model_path(const std::string& path) {
  return std::filesystem::path(path).extension() == ".onnx";
}

bool is_trace_path(const std::string& path) {
  return std::filesystem::path(path).extension() == ".json";
}

nlohmann::json to_json(const PlanCommandOptions& o, const plan::Plan& p, size_t buffers,
                       const std::optional<ModelFacts>& model) {
  nlohmann::json j = {
      {"input", o.input},
      {"algo", o.algo},
      {"algorithm", p.algorithm},
      {"arena_bytes", p.arena_bytes},
      {"lower_bound_bytes", p.lower_bound_bytes},
      {"ratio", p.lower_bound_bytes > 0
                    ? static_cast<double>(p.arena_bytes) / static_cast<double>(p.lower_bound_bytes)
                    : 1.0},
      {"proven_bound_bytes", p.proven_bound_bytes},
      {"proven_ratio", p.proven_bound_bytes > 0 ? static_cast<double>(p.arena_bytes) /
                                                      static_cast<double>(p.proven_bound_bytes)
                                                : 1.0},
      {"buffers", buffers},
      {"solve_ms", p.solve_ms},
      {"optimal", p.optimal},
      {"search_nodes", p.search_nodes},
      {"cut_short", p.cut_short},
  };
  if (o.time_limit_s) j["time_limit_s"] = *o.time_limit_s;
  if (o.capacity_bytes) {
    j["capacity_bytes"] = *o.capacity_bytes;
    j["fits"] = p.arena_bytes <= *o.capacity_bytes;
  }
  if (!o.output.empty()) j["output"] = o.output;
  if (model) {
    j["model"] = o.input;
    j["order"] = model->order;
    j["inputs"] = o.inputs;
    j["timeline_lower_bound_bytes"] = model->lower_bound_bytes;
    j["timeline_lower_bound_arena_bytes"] = model->lower_bound_arena_bytes;
    if (model->stored_lower_bound_bytes) {
      j["stored_lower_bound_bytes"] = *model->stored_lower_bound_bytes;
    }
    j["bounded_tensors"] = model->bounded.size();
  }
  return j;
}

std::string to_text(const PlanCommandOptions& o, const plan::Plan& p, size_t buffers,
                    const std::optional<ModelFacts>& model) {
  std::string text =
      fmt::format("plan        {}: {} buffers, {} ({})\n", o.input, buffers, o.algo, p.algorithm);
  if (model) {
    text += fmt::format("order       {} (lower bound {} B", model->order, model->lower_bound_bytes);
    if (model->stored_lower_bound_bytes) {
      text += fmt::format("; stored order {} B", *model->stored_lower_bound_bytes);
    }
    text += ")\n";
  }
  text += fmt::format("arena       {} B ({})", p.arena_bytes, report::human_bytes(p.arena_bytes));
  text += fmt::format("   lower bound {} B", p.lower_bound_bytes);
  if (p.lower_bound_bytes > 0) {
    text += fmt::format("   ratio {:.4f}", static_cast<double>(p.arena_bytes) /
                                               static_cast<double>(p.lower_bound_bytes));
  }
  if (p.proven_bound_bytes > p.lower_bound_bytes) {
    text +=
        fmt::format("   proven bound {} B (ratio {:.4f})", p.proven_bound_bytes,
                    static_cast<double>(p.arena_bytes) / static_cast<double>(p.proven_bound_bytes));
  }
  text += p.optimal ? "   optimal\n" : "\n";
  if (model && !model->bounded.empty()) {
    // The plan is exact for the bounds; a run uses at most what it places.
    text +=
        fmt::format("bounded     {} tensors of data-dependent size are planned at their bounds:\n",
                    model->bounded.size());
    for (const std::string& b : report::bound_lines(model->bounded))
      text += "              " + b + "\n";
  }
  if (o.capacity_bytes) {
    text += fmt::format("capacity    {} B: {}\n", *o.capacity_bytes,
                        p.arena_bytes <= *o.capacity_bytes ? "fits" : "does not fit");
  }
  text += fmt::format("solved in   {:.1f} ms", p.solve_ms);
  if (p.search_nodes > 0) text += fmt::format(" ({} search nodes)", p.search_nodes);
  if (p.cut_short) text += "; cut short by the time limit: the best plan found by then";
  if (!o.output.empty()) text += "\nwritten to  " + o.output;
  return text;
}

// The model's arena buffers under the chosen order, with warnings on stderr as analyze prints.
std::vector<plan::Buffer> model_buffers(const PlanCommandOptions& o, ModelFacts& facts) {
  const ModelProgram m = load_model_program({.path = o.input,
                                             .dims = o.dims,
                                             .shapes = o.shapes,
                                             .inputs = o.inputs,
                                             .order = o.order,
                                             .planner = o.algo});
  for (const auto& d : m.program.unbound_dims) {
    std::fprintf(stderr, "footprint: warning: dim %s is unbound; using 1 (set --dim %s=V)\n",
                 d.c_str(), d.c_str());
  }
  // A newer opset is never silent, here as in analyze (an unknown size already failed).
  for (const auto* list : {&m.inference.warnings, &m.program.warnings}) {
    for (const std::string& w : *list) std::fprintf(stderr, "footprint: warning: %s\n", w.c_str());
  }
  facts.order = m.order;
  facts.lower_bound_bytes = m.timeline.lower_bound_bytes;
  facts.lower_bound_arena_bytes = m.timeline.lower_bound_arena_bytes;
  facts.stored_lower_bound_bytes = m.stored_lower_bound_bytes;
  facts.bounded = m.program.bounded;
  return plan::arena_buffers(m.timeline, m.program.program);
}

// A trace's arena buffers (docs/TRACE_FORMAT.md), in the trace's own order.
std::vector<plan::Buffer> trace_buffers(const PlanCommandOptions& o, ModelFacts& facts) {
  if (!o.dims.empty() || !o.shapes.empty() || o.order != "stored") {
    throw UsageError(
        "--dim, --shape and --order apply to models; a trace has its own sizes and order");
  }
  analysis::Trace trace = analysis::read_trace_file(o.input);
  if (o.inputs_given) trace.program.inputs = policy_of(o.inputs);
  const analysis::Timeline t = analysis::simulate(trace.program);
  facts.order = "trace";
  facts.lower_bound_bytes = t.lower_bound_bytes;
  facts.lower_bound_arena_bytes = t.lower_bound_arena_bytes;
  return plan::arena_buffers(t, trace.program);
}

void run_plan(const PlanCommandOptions& o) {
  std::optional<ModelFacts> facts;
  std::vector<plan::Buffer> buffers;
  if (is_model_path(o.input)) {
    facts.emplace();
    buffers = model_buffers(o, *facts);
  } else if (is_trace_path(o.input)) {
    facts.emplace();
    buffers = trace_buffers(o, *facts);
  } else {
    if (!o.dims.empty() || !o.shapes.empty() || o.order != "stored") {
      throw UsageError(
          "--dim, --shape and --order apply to models; a buffer list has fixed lifetimes");
    }
    buffers = plan::read_buffers_csv(o.input);
  }
  plan::PlanOptions options;
  options.time_limit_s = o.time_limit_s;
  options.capacity_bytes = o.capacity_bytes;
  options.seed = o.seed;
  const plan::Plan p = plan::plan_buffers(buffers, o.algo, options);
  if (!o.output.empty()) plan::write_plan_csv(o.output, buffers, p.offsets);
  if (o.json) {
    std::printf("%s\n", to_json(o, p, buffers.size(), facts).dump(2).c_str());
  } else {
    std::printf("%s\n", to_text(o, p, buffers.size(), facts).c_str());
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
  auto* inputs = cmd->add_option("--inputs", opts->inputs,
                                 "Model or trace: caller (inputs held by the caller; a model's "
                                 "default) or donated (a trace's default is its own)")
                     ->check(CLI::IsMember({"caller", "donated"}));
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
