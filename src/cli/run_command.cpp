// `footprint run MODEL [--input NAME=FILE.pb]... [--data-dir DIR] [--repeat N] [--threads T]
//  [--dim N=V]... [--seed S] [-o OUT_DIR] [--json]`: runs the model inside its plan and sets
// the prediction beside what the counting allocator and the OS measured.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "footprint/bench/percentile.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/report/model_summary_report.hpp"
#include "footprint/runtime/output_check.hpp"
#include "footprint/runtime/process_memory.hpp"
#include "footprint/runtime/random_inputs.hpp"
#include "footprint/runtime/session.hpp"
#include "model_program.hpp"

namespace footprint::cli {
namespace {

namespace fs = std::filesystem;

// -o OUT_DIR names a folder of outputs: it is made when missing, but, as for every -o, its parent
// must exist (footprint creates no parent folders).
void make_output_folder(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  if (fs::exists(dir, ec)) throw Error(dir.string() + ": exists and is not a folder");
  if (!fs::create_directory(dir, ec)) {
    throw Error(dir.string() + ": cannot create the folder: " + ec.message() +
                " (footprint creates no parent folders)");
  }
}

struct RunCommandOptions {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE.pb
  std::string data_dir;
  std::vector<std::string> dims;
  int repeat = 10;
  int warmup = 1;
  int threads = 1;
  uint64_t seed = 1;
  std::string output_dir;
  std::string planner = "auto";
  std::string order = "stored";
  double rtol = 1e-3;
  double atol = 1e-5;
  bool json = false;
};

std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& stem) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / (stem + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<runtime::Tensor> read_inputs(const RunCommandOptions& o,
                                         const runtime::Session& session, const DimBindings& dims,
                                         std::string& source) {
  std::vector<runtime::Tensor> inputs;
  if (!o.data_dir.empty()) {
    const auto files = numbered_files(o.data_dir, "input");
    if (files.empty()) throw Error(o.data_dir + ": no input_0.pb");
    for (const auto& f : files) inputs.push_back(runtime::read_tensor_file(f));
    source = o.data_dir;
  }
  for (const std::string& spec : o.inputs) {
    const auto [name, file] = split_binding(spec, "--input");
    runtime::Tensor t = runtime::read_tensor_file(file);
    t.set_name(name);
    inputs.push_back(std::move(t));
    source = "files";
  }
  if (inputs.empty()) {
    inputs = runtime::random_inputs(session.inputs(), dims, o.seed);
    source = "random (seed " + std::to_string(o.seed) + ")";
  }
  return inputs;
}

struct RunResult {
  runtime::PreparedStats prepared;
  runtime::RunStats first_run;
  runtime::RunStats last_run;
  std::vector<double> latencies;
  std::vector<runtime::Tensor> outputs;
  std::vector<std::string> output_files;
  std::optional<runtime::OutputCheck> check;
  uint64_t load_peak_heap_bytes = 0;
  double load_ms = 0;
  double prepare_ms = 0;
  std::optional<runtime::ProcessMemory> after_prepare;
  std::optional<runtime::ProcessMemory> end;
  std::string input_source;
};

nlohmann::json to_json(const RunCommandOptions& o, const RunResult& r) {
  using nlohmann::json;
  const auto& p = r.prepared;
  const uint64_t predicted_run = p.planned_arena_bytes + p.outputs_bytes;
  json outputs = json::array();
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    json item = {{"name", r.outputs[i].name()},
                 {"shape", r.outputs[i].dims()},
                 {"dtype", std::string(dtype_name(r.outputs[i].dtype()))}};
    if (i < r.output_files.size()) item["file"] = r.output_files[i];
    outputs.push_back(std::move(item));
  }
  json j = {
      {"model", o.model},
      {"inputs", r.input_source},
      {"threads", o.threads},
      {"dims", p.dims},
      {"rebatched", p.rebatched},
      {"predicted",
       {{"arena_bytes", p.planned_arena_bytes},
        {"lower_bound_bytes", p.lower_bound_bytes},
        {"activations_peak_bytes", p.activations_peak_bytes},
        {"workspace_peak_bytes", p.workspace_peak_bytes},
        {"outputs_bytes", p.outputs_bytes},
        {"weights_bytes", p.weights_bytes},
        {"run_heap_bytes", predicted_run},
        {"total_peak_bytes", p.total_peak_bytes},
        {"planner", p.planner}}},
      {"measured",
       {{"arena_bytes", r.first_run.arena_bytes},
        {"peak_heap_bytes", r.first_run.peak_heap_bytes},
        {"run_overhead_bytes",
         static_cast<int64_t>(r.first_run.peak_heap_bytes) - static_cast<int64_t>(predicted_run)},
        {"last_run_peak_heap_bytes", r.last_run.peak_heap_bytes},
        {"last_run_overhead_bytes",
         static_cast<int64_t>(r.last_run.peak_heap_bytes) - static_cast<int64_t>(p.outputs_bytes)},
        {"load_peak_heap_bytes", r.load_peak_heap_bytes},
        {"prepare_peak_heap_bytes", p.prepare_peak_heap_bytes},
        {"constant_bytes", p.constant_bytes},
        {"packed_weights_bytes", p.packed_weights_bytes},
        {"released_constant_bytes", p.released_constant_bytes},
        {"released_mapped_bytes", p.released_mapped_bytes}}},
      {"latency_ms",
       {{"min", *std::min_element(r.latencies.begin(), r.latencies.end())},
        {"median", bench::percentile(r.latencies, 0.5)},
        {"p90", bench::percentile(r.latencies, 0.9)},
        {"runs", r.latencies.size()}}},
      {"outputs", outputs},
      {"load_ms", r.load_ms},
      {"prepare_ms", r.prepare_ms},
  };
  if (r.end) {
    j["measured"]["peak_rss_bytes"] = r.end->peak_rss_bytes;
    j["measured"]["private_bytes"] = r.end->private_bytes;
    j["measured"]["file_backed_bytes"] = r.end->file_backed_bytes;
  }
  if (r.after_prepare)
    j["measured"]["peak_rss_after_prepare_bytes"] = r.after_prepare->peak_rss_bytes;
  if (r.check) {
    j["match"] = r.check->match;
    j["max_abs_error"] = r.check->max_abs_error;
    j["max_rel_error"] = r.check->max_rel_error;
    j["rtol"] = o.rtol;
    j["atol"] = o.atol;
    if (!r.check->problem.empty()) j["mismatch"] = r.check->problem;
  }
  return j;
}

std::string to_text(const RunCommandOptions& o, const RunResult& r) {
  using report::human_bytes;
  const auto& p = r.prepared;
  const uint64_t predicted_run = p.planned_arena_bytes + p.outputs_bytes;
  std::string t = fmt::format("model        {}   (inputs: {}, threads {})\n", o.model,
                              r.input_source, o.threads);
  t += fmt::format("load         {:.1f} ms, prepare {:.1f} ms\n", r.load_ms, r.prepare_ms);
  t += fmt::format("steps        {} per run, {} constant nodes evaluated when preparing\n", p.steps,
                   p.constant_nodes);
  t += fmt::format("arena        planned {} B ({}), obtained {} B   [{}; lower bound {} B]\n",
                   p.planned_arena_bytes, human_bytes(p.planned_arena_bytes),
                   r.first_run.arena_bytes, p.planner, p.lower_bound_bytes);
  t += fmt::format(
      "run heap     first run: predicted {} (arena + outputs), measured {} (+{} B); later runs "
      "(arena kept): +{} B over the outputs\n",
      human_bytes(predicted_run), human_bytes(r.first_run.peak_heap_bytes),
      static_cast<int64_t>(r.first_run.peak_heap_bytes) - static_cast<int64_t>(predicted_run),
      static_cast<int64_t>(r.last_run.peak_heap_bytes) - static_cast<int64_t>(p.outputs_bytes));
  t += fmt::format("weights      {} ({} computed when preparing)\n", human_bytes(p.weights_bytes),
                   human_bytes(p.constant_bytes));
  if (p.packed_weights_bytes > 0) {
    t += fmt::format(
        "packed       {} of convolution weights in oneDNN's blocked layouts (originals released: "
        "{} from the heap, {} of mapped pages)\n",
        human_bytes(p.packed_weights_bytes), human_bytes(p.released_constant_bytes),
        human_bytes(p.released_mapped_bytes));
  }
  if (r.end) {
    t += fmt::format("peak RSS     {} (private {}, file-backed {})\n",
                     human_bytes(r.end->peak_rss_bytes), human_bytes(r.end->private_bytes),
                     human_bytes(r.end->file_backed_bytes));
  }
  t += fmt::format("latency      median {:.3f} ms, min {:.3f}, p90 {:.3f} over {} runs\n",
                   bench::percentile(r.latencies, 0.5),
                   *std::min_element(r.latencies.begin(), r.latencies.end()),
                   bench::percentile(r.latencies, 0.9), r.latencies.size());
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    std::string shape;
    for (int64_t d : r.outputs[i].dims()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    t += fmt::format("output       {} {}[{}]{}\n", r.outputs[i].name(),
                     dtype_name(r.outputs[i].dtype()), shape,
                     i < r.output_files.size() ? "  -> " + r.output_files[i] : "");
  }
  if (r.check) {
    t += fmt::format(
        "match        {}   max abs error {:.3g}, max rel error {:.3g} (rtol {}, atol {}){}\n",
        r.check->match ? "yes" : "NO", r.check->max_abs_error, r.check->max_rel_error, o.rtol,
        o.atol, r.check->problem.empty() ? "" : "   " + r.check->problem);
  }
  return t;
}

void run_model(const RunCommandOptions& o) {
  if (o.repeat < 1) throw UsageError("--repeat must be at least 1");
  DimBindings dims;
  for (const std::string& d : o.dims) {
    const auto [name, value] = split_binding(d, "--dim");
    dims[name] = parse_dim_value(value, "--dim");
  }
  RunResult r;
  const heap::Stats before_load = heap::snapshot();
  heap::reset_peak();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const onnx::Model model = onnx::load_file(o.model);
  r.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  r.load_peak_heap_bytes = heap::snapshot().peak_bytes - before_load.current_bytes;
  runtime::Session session(
      model, {.threads = o.threads, .planner = o.planner, .order = o.order, .dims = dims});
  const std::vector<runtime::Tensor> inputs = read_inputs(o, session, dims, r.input_source);
  const auto t1 = Clock::now();
  session.prepare(inputs);
  r.prepare_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  r.prepared = session.prepared();
  if (!r.prepared.rebatched.empty())
    std::fprintf(stderr, "footprint: %s\n", r.prepared.rebatched.c_str());
  r.after_prepare = runtime::read_process_memory();
  r.outputs = session.run(inputs);
  r.first_run = session.last_run();
  for (int i = 0; i < o.warmup; ++i) (void)session.run(inputs);
  for (int i = 0; i < o.repeat; ++i) {
    (void)session.run(inputs);
    r.latencies.push_back(session.last_run().latency_ms);
  }
  r.last_run = session.last_run();
  r.end = runtime::read_process_memory();
  if (!o.data_dir.empty()) {
    const auto expected = numbered_files(o.data_dir, "output");
    if (!expected.empty()) r.check = runtime::check_outputs(r.outputs, expected, o.rtol, o.atol);
  }
  if (!o.output_dir.empty()) {
    make_output_folder(o.output_dir);
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      const fs::path f = fs::path(o.output_dir) / ("output_" + std::to_string(i) + ".pb");
      runtime::write_tensor_file(f, r.outputs[i]);
      r.output_files.push_back(f.string());
    }
  }
  if (o.json) {
    std::printf("%s\n", to_json(o, r).dump(2).c_str());
  } else {
    std::printf("%s", to_text(o, r).c_str());
  }
  if (r.check && !r.check->match) {
    throw Error("outputs differ from " + o.data_dir + ": " + r.check->problem);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run a model inside its plan and measure it: arena, heap, RSS, latency, outputs.");
  cmd->add_option("MODEL", opts->model, "ONNX model")->required();
  cmd->add_option("--input", opts->inputs,
                  "An input from a .pb file, --input NAME=FILE.pb (repeatable)");
  cmd->add_option("--data-dir", opts->data_dir,
                  "A backend-test folder: reads input_*.pb and compares with output_*.pb");
  cmd->add_option(
      "--dim", opts->dims,
      std::string("Bind a named dim for random inputs, --dim N=8 (repeatable; unbound dims "
                  "are 1)") +
          kRebatchHelp);
  cmd->add_option("--repeat", opts->repeat, "Timed runs after the first (default 10)");
  cmd->add_option("--warmup", opts->warmup, "Untimed runs before them (default 1)")
      ->check(at_least(0));
  cmd->add_option("--threads", opts->threads, "Intra-op threads (default 1)")
      ->check(thread_count());
  cmd->add_option("--seed", opts->seed, "Seed of the random inputs (default 1)");
  cmd->add_option("-o,--output-dir", opts->output_dir, "Write outputs as output_<i>.pb here");
  cmd->add_option("--planner", opts->planner, "Arena planner (default auto)");
  cmd->add_option("--order", opts->order, "Node order: stored (default) or memory")
      ->check(CLI::IsMember({"stored", "memory"}));
  cmd->add_option("--rtol", opts->rtol, "Relative tolerance of the output check (default 1e-3)");
  cmd->add_option("--atol", opts->atol, "Absolute tolerance of the output check (default 1e-5)");
  cmd->add_flag("--json", opts->json, "Print JSON");
  cmd->callback([opts] { run_model(*opts); });
}

}  // namespace footprint::cli
