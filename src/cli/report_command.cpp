// `footprint report MODEL|TRACE.json -o REPORT.html [--dim N=V]... [--inputs caller|donated]
//  [--order stored|memory] [--algo NAME] [--time-limit S] [--json]`
//
// One self-contained HTML page: the timeline by category with the lower bound and the planned
// arena, the arena layout, what is alive at the peak and why, a per-op summary and, for models,
// the stored order beside the memory-aware one. The arena is planned exactly as `footprint plan`
// plans it (analysis::arena_buffers, then a validated plan).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "footprint/analysis/memory_order.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/analysis/trace_format.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/input_files.hpp"
#include "footprint/onnx/writer.hpp"
#include "footprint/plan/planner.hpp"
#include "footprint/report/analysis_report.hpp"
#include "footprint/report/html_report.hpp"
#include "footprint/report/model_summary_report.hpp"
#include "footprint/runtime/random_inputs.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/tensor.hpp"
#include "model_program.hpp"
#include "report_page.hpp"

namespace footprint::cli {
namespace {

// A program in one order, simulated.
struct OrderedRun {
  analysis::GraphProgram program;
  analysis::Timeline timeline;
};

// Everything the page refers to; the report holds pointers into it.
struct ReportInputs {
  std::optional<ModelProgram> model;
  std::optional<analysis::Trace> trace;
  std::optional<OrderedRun> memory;  // models: the memory-aware order, when it differs
  const analysis::MemoryProgram* program = nullptr;
  const analysis::Timeline* timeline = nullptr;
  analysis::Timeline trace_timeline;
  plan::Plan plan;
};

bool is_trace(const std::string& path) {
  return std::filesystem::path(path).extension() == ".json";
}

void warn_unbound(const ModelProgram& m) {
  for (const auto& d : m.program.unbound_dims) {
    std::fprintf(stderr, "footprint: warning: dim %s is unbound; using 1 (set --dim %s=V)\n",
                 d.c_str(), d.c_str());
  }
}

// The model in its stored order and in the memory-aware order (the search never returns an
// order worse than the stored one; when it finds nothing better the two are the same).
report::OrderComparison load_model(const ReportOptions& o, ModelProgram&& program, ReportInputs& in,
                                   report::HtmlReport& r) {
  in.model = std::move(program);
  const ModelProgram& m = *in.model;
  warn_unbound(m);
  const analysis::MemoryOrder mo = analysis::memory_order(m.graph, m.options);
  report::OrderComparison c;
  c.stored_program = &m.program.program;
  c.stored = &m.timeline;
  c.stored_nodes = m.program.order;
  c.method = mo.method;
  c.exact = mo.exact;
  if (mo.order != m.program.order) {
    analysis::GraphProgramOptions options = m.options;
    options.order = mo.order;
    in.memory.emplace();
    in.memory->program = analysis::build_program(m.graph, options);
    in.memory->timeline = analysis::simulate(in.memory->program.program);
  }
  const OrderedRun* memory = in.memory ? &*in.memory : nullptr;
  c.memory_program = memory ? &memory->program.program : c.stored_program;
  c.memory = memory ? &memory->timeline : c.stored;
  c.memory_nodes = memory ? memory->program.order : c.stored_nodes;
  const bool use_memory = o.order == "memory";
  in.program = use_memory ? c.memory_program : c.stored_program;
  in.timeline = use_memory ? c.memory : c.stored;
  r.kind = "model";
  r.order = o.order;
  r.dims = m.options.dims;
  for (const auto& d : m.program.unbound_dims) r.dims[d] = 1;
  r.warnings = m.inference.warnings;
  r.warnings.insert(r.warnings.end(), m.program.warnings.begin(), m.program.warnings.end());
  if (!m.program.bounded.empty()) {
    r.warnings.push_back(std::to_string(m.program.bounded.size()) +
                         " tensors have sizes known only when running: the figures count them at "
                         "their bounds (upper bounds)");
    for (const std::string& b : report::bound_lines(m.program.bounded)) r.warnings.push_back(b);
  }
  return c;
}

void load_trace(const ReportOptions& o, analysis::Trace&& trace, ReportInputs& in,
                report::HtmlReport& r) {
  if (!o.dims.empty() || !o.shapes.empty() || !o.data_dir.empty()) {
    throw UsageError("--dim, --shape and --data-dir apply to models; a trace has concrete sizes");
  }
  if (o.order != "stored") {
    throw UsageError("--order memory applies to models; a trace has its own order");
  }
  in.trace = std::move(trace);
  in.trace_timeline = analysis::simulate(in.trace->program);
  in.program = &in.trace->program;
  in.timeline = &in.trace_timeline;
  r.kind = "trace";
  r.order = "trace";
  r.inputs_policy =
      in.trace->program.inputs == analysis::InputsPolicy::donated ? "donated" : "caller";
}

nlohmann::json summary_json(const ReportOptions& o, const report::HtmlReport& r,
                            const nlohmann::json& data, size_t html_bytes) {
  const analysis::Timeline& t = *r.timeline;
  nlohmann::json j = {
      {"input", o.input},
      {"output", o.output},
      {"html_bytes", html_bytes},
      {"kind", r.kind},
      {"order", r.order},
      {"inputs", r.inputs_policy},
      {"steps", t.steps.size()},
      {"points_drawn", data["timeline"]["x"].size()},
      {"buffers", t.buffers.size()},
      {"buffers_drawn", data["layout"]["lo"].size()},
      {"total_peak_bytes", t.total_peak_bytes},
      {"peak_step", t.peak_step},
      {"lower_bound_bytes", t.lower_bound_bytes},
      {"lower_bound_arena_bytes", t.lower_bound_arena_bytes},
      {"arena_bytes", r.plan->arena_bytes},
      {"algorithm", r.plan->algorithm},
  };
  if (r.kind == "model") j["model"] = o.input;
  if (r.orders) {
    j["orders"] = {{"differ", r.orders->stored_nodes != r.orders->memory_nodes},
                   {"method", r.orders->method},
                   {"stored_lower_bound_bytes", r.orders->stored->lower_bound_bytes},
                   {"memory_lower_bound_bytes", r.orders->memory->lower_bound_bytes}};
  }
  return j;
}

std::string summary_text(const nlohmann::json& j) {
  using report::human_bytes;
  std::string text = fmt::format("report      {} ({})\n", j["output"].get<std::string>(),
                                 human_bytes(j["html_bytes"].get<uint64_t>()));
  text +=
      fmt::format("timeline    {} steps ({} drawn), peak {} at step {}\n", j["steps"].get<size_t>(),
                  j["points_drawn"].get<size_t>(),
                  human_bytes(j["total_peak_bytes"].get<uint64_t>()), j["peak_step"].get<int>());
  text += fmt::format(
      "arena       {} buffers ({} drawn), {} by {}, lower bound {}\n", j["buffers"].get<size_t>(),
      j["buffers_drawn"].get<size_t>(), human_bytes(j["arena_bytes"].get<uint64_t>()),
      j["algorithm"].get<std::string>(), human_bytes(j["lower_bound_arena_bytes"].get<uint64_t>()));
  if (j.contains("orders")) {
    const nlohmann::json& orders = j["orders"];
    text += orders["differ"].get<bool>()
                ? fmt::format("orders      lower bound {} stored, {} memory-aware ({})\n",
                              human_bytes(orders["stored_lower_bound_bytes"].get<uint64_t>()),
                              human_bytes(orders["memory_lower_bound_bytes"].get<uint64_t>()),
                              orders["method"].get<std::string>())
                : std::string("orders      the memory-aware search kept the stored order\n");
  }
  return text;
}

// --run: runs the model once (--data-dir's inputs, else seeded random ones; one thread, the
// report's order and dims)
// and draws what it held after each step: the heap the runtime allocated since it was created
// (graph, evaluated constants, kernel state, arena, inputs, outputs) plus the weights it reads in
// place from the model's bytes.
void add_measurement(const ReportOptions& o, const ModelProgram& m, report::HtmlReport& r) {
  runtime::SessionOptions so;
  so.threads = 1;
  so.order = o.order;
  so.dims = m.options.dims;
  so.fuse = m.fuse;  // the graph the report drew
  const auto before = heap::snapshot().current_bytes;
  runtime::Session session(*m.model, so);
  std::vector<runtime::Tensor> inputs;
  if (!o.data_dir.empty()) {
    for (const auto& f : graph::numbered_tensor_files(o.data_dir, "input"))
      inputs.push_back(runtime::read_tensor_file(f));
  } else {
    inputs = runtime::random_inputs(session.inputs(), m.options.dims, 1);
  }
  (void)session.run(inputs);
  const std::vector<uint64_t>& after_step = session.last_run().step_heap_bytes;
  if (after_step.empty()) {
    std::fprintf(stderr,
                 "footprint: warning: this build does not count the heap; --run draws "
                 "nothing\n");
    return;
  }
  // Preparing with the inputs' extents may fold more shape arithmetic than the analysis under
  // named dims does: steps are matched by name, and a step the run did not execute shows what
  // the run held after the step before it.
  std::unordered_map<std::string, uint64_t> by_name;
  const std::vector<std::string> names = session.step_names();
  for (size_t i = 0; i < names.size() && i < after_step.size(); ++i)
    by_name[names[i]] = after_step[i];
  const uint64_t mapped = session.prepared().mapped_weights_bytes;
  uint64_t last = before;
  for (const analysis::StepMemory& step : r.timeline->steps) {
    if (auto it = by_name.find(step.node); it != by_name.end()) last = it->second;
    r.measured.push_back((last > before ? last - before : 0) + mapped);
  }
  r.measured_label = "heap the run holds + weights read in place";
}

// The page for what `in` and `r` hold (a model or a trace), planned, measured with --run, and
// written; returns the summary `report --json` prints.
nlohmann::json finish_report(const ReportOptions& o, ReportInputs& in, report::HtmlReport& r) {
  r.program = in.program;
  r.timeline = in.timeline;
  plan::PlanOptions options;
  options.time_limit_s = o.time_limit_s;
  in.plan = plan::plan_buffers(analysis::arena_buffers(*in.timeline, *in.program), o.algo, options);
  r.plan = &in.plan;
  if (o.run) {
    if (!in.model) throw UsageError("--run applies to models; a trace was not run by footprint");
    add_measurement(o, *in.model, r);
  }

  const nlohmann::json data = report::report_data(r);
  const std::string html = report::render_page(data);
  onnx::write_file_atomically(o.output, [&](std::ostream& out) {
    out.write(html.data(), static_cast<std::streamsize>(html.size()));
  });
  return summary_json(o, r, data, html.size());
}

void run_report(const ReportOptions& o, bool inputs_given) {
  refuse_overwriting(o.output, files_read(o.input, o.data_dir), "-o");
  nlohmann::json summary;
  if (is_trace(o.input)) {
    analysis::Trace trace = analysis::read_trace_file(o.input);
    if (inputs_given) trace.program.inputs = policy_of(o.inputs);
    summary = write_report(o, std::move(trace));
  } else {
    summary = write_report(o, load_model_program({.path = o.input,
                                                  .dims = o.dims,
                                                  .shapes = o.shapes,
                                                  .data_dir = o.data_dir,
                                                  .inputs = o.inputs,
                                                  .order = "stored",
                                                  .planner = o.algo,
                                                  .fuse = !o.no_fuse,
                                                  .carry_float32 = !o.keep_16bit}));
  }
  if (o.json) {
    std::printf("%s\n", summary.dump(2).c_str());
  } else {
    std::printf("%s", summary_text(summary).c_str());
  }
}

}  // namespace

nlohmann::json write_report(const ReportOptions& o, ModelProgram&& stored) {
  ReportInputs in;
  report::HtmlReport r;
  r.title = o.input;
  r.inputs_policy = o.inputs;
  r.orders = load_model(o, std::move(stored), in, r);
  return finish_report(o, in, r);
}

nlohmann::json write_report(const ReportOptions& o, analysis::Trace&& trace) {
  ReportInputs in;
  report::HtmlReport r;
  r.title = o.input;
  r.inputs_policy = o.inputs;
  load_trace(o, std::move(trace), in, r);
  return finish_report(o, in, r);
}

void add_report_command(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write a self-contained HTML memory report: the timeline by category with the lower bound "
      "and the planned arena, the arena layout, what is alive at the peak and why, per-op "
      "figures, and the stored vs the memory-aware order.");
  cmd->add_option("INPUT", opts->input, "ONNX model, or a JSON trace (docs/TRACE_FORMAT.md)")
      ->required();
  cmd->add_option("-o,--output", opts->output, "The HTML file to write")->required();
  // One value per --dim, so `--dim N=8 MODEL -o OUT` leaves MODEL to the positional.
  cmd->add_option("--dim", opts->dims,
                  std::string("Model: bind a named dim, --dim N=8 (repeatable)") + kRebatchHelp)
      ->allow_extra_args(false);
  cmd->add_option("--shape", opts->shapes, std::string("Model: ") + kShapeHelp)
      ->allow_extra_args(false);
  cmd->add_option("--data-dir", opts->data_dir, std::string("Model: ") + kDataDirHelp);
  auto* inputs = cmd->add_option("--inputs", opts->inputs,
                                 "caller (inputs held by the caller, default) or donated")
                     ->check(CLI::IsMember({"caller", "donated"}));
  cmd->add_flag("--no-fuse", opts->no_fuse, kNoFuseHelp);
  cmd->add_flag("--keep-16bit", opts->keep_16bit, kKeep16bitHelp);
  cmd->add_option("--order", opts->order,
                  "Model: the order the timeline and layout show, stored (default) or memory")
      ->check(CLI::IsMember({"stored", "memory"}));
  std::vector<std::string> names;
  for (const std::string_view n : plan::planner_names()) names.emplace_back(n);
  cmd->add_option("--algo", opts->algo, "Planner of the arena layout (default auto)")
      ->check(CLI::IsMember(names));
  cmd->add_option("--time-limit", opts->time_limit_s,
                  "Seconds the searching planners (anneal, exact, auto) may spend")
      ->check(positive_seconds());
  cmd->add_flag("--run", opts->run,
                "Model: run it once (random inputs, one thread) and draw what it held after each "
                "step over the prediction");
  cmd->add_flag("--json", opts->json, "Print one JSON object on stdout");
  cmd->callback([opts, inputs] { run_report(*opts, inputs->count() > 0); });
}

}  // namespace footprint::cli
