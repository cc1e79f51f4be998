// `footprint run MODEL [--input NAME=FILE.pb]... [--data-dir DIR] [--repeat N] [--threads T]
//  [--dim N=V]... [--seed S] [-o OUT_DIR] [--profile] [--json]`: runs the model inside its plan and
//  sets
// the prediction beside what the counting allocator and the OS measured.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/bench/percentile.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/input_files.hpp"
#include "footprint/graph/lower_sequences.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/report/run_report.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/output_check.hpp"
#include "footprint/runtime/process_memory.hpp"
#include "footprint/runtime/random_inputs.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/shape_check.hpp"
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
  bool no_fuse = false;
  bool keep_16bit = false;
  double rtol = 1e-3;
  bool rtol_given = false;
  double atol = 1e-5;
  // Without --atol, a float output's atol is at least this share of its largest expected
  // magnitude (runtime::check_outputs); an --atol given is used as it is.
  double atol_of_peak = 1e-4;
  bool json = false;
  bool profile = false;
  bool check_shapes = false;
};

// Each step's median over the timed runs; samples[r * steps + s] is step s of run r, in ns.
report::RunProfile profile_of(const runtime::Session& session, const std::vector<double>& samples,
                              size_t runs) {
  report::RunProfile p;
  p.runs = runs;
  const std::vector<std::string> names = session.step_names();
  const std::vector<std::string> ops = session.step_ops();
  std::vector<double> step(runs);
  for (size_t s = 0; s < names.size(); ++s) {
    for (size_t r = 0; r < runs; ++r) step[r] = samples[r * names.size() + s] / 1e6;
    p.steps.push_back({names[s], ops[s], bench::percentile(step, 0.5)});
  }
  return p;
}

std::vector<runtime::Tensor> read_inputs(const RunCommandOptions& o,
                                         const runtime::Session& session, const DimBindings& dims,
                                         std::string& source) {
  std::vector<runtime::Tensor> inputs;
  const std::vector<runtime::Session::InputInfo> declared = session.inputs();
  // Before any file is read: a map's bytes read as a TensorProto would be a tensor of absurd
  // extents. A sequence or an optional is read as what it is declared (its elements).
  const bool given = !o.data_dir.empty() || !o.inputs.empty();
  for (const runtime::Session::InputInfo& in : declared) {
    if (in.not_a_tensor.empty()) continue;
    const char* article = in.not_a_tensor[0] == 'o' ? "an " : "a ";
    if (in.not_a_tensor != "sequence" && in.not_a_tensor != "optional") {
      throw Error(o.model + ": input " + in_quotes(in.name) + " is declared " + article +
                  in.not_a_tensor +
                  "; footprint runs tensors, sequences and optionals of tensors (maps and sparse "
                  "tensors are not supported yet)");
    }
    if (!given) {
      const bool optional = in.not_a_tensor == "optional";
      throw UsageError(
          o.model + ": input " + in_quotes(in.name) + " is declared " + article + in.not_a_tensor +
          (optional ? ", which a random input would have to guess holds a tensor or not"
                    : ", of no length a random input could take") +
          "; give it with --data-dir, or with --input '" +
          (optional ? in.name + "=FILE.pb'"
                    : graph::element_name(in.name, 0) + "=FILE.pb' per element"));
    }
  }
  if (!o.data_dir.empty()) {
    const auto files = graph::numbered_tensor_files(o.data_dir, "input");
    // A model without inputs takes none: the folder holds its reference outputs only.
    if (files.empty() && !declared.empty()) throw Error(o.data_dir + ": no input_0.pb");
    std::vector<runtime::DeclaredValue> kinds;
    kinds.reserve(declared.size());
    for (const auto& d : declared) kinds.push_back({d.name, d.not_a_tensor});
    inputs = runtime::read_value_files(files, kinds);
    source = o.data_dir;
  }
  for (const std::string& spec : o.inputs) {
    const auto [name, file] = split_binding(spec, "--input");
    const std::string& input = name;  // (a structured binding no lambda may capture)
    const auto in = std::find_if(declared.begin(), declared.end(),
                                 [&](const auto& d) { return d.name == input; });
    if (in != declared.end() && !in->not_a_tensor.empty()) {
      for (runtime::Tensor& t : runtime::read_value_file(file, in->not_a_tensor, name)) {
        inputs.push_back(std::move(t));
      }
    } else {
      runtime::Tensor t = runtime::read_tensor_file(file);
      t.set_name(name);
      inputs.push_back(std::move(t));
    }
    source = "files";
  }
  if (inputs.empty() && o.data_dir.empty()) {
    inputs = runtime::random_inputs(declared, dims, o.seed);
    source = "random (seed " + std::to_string(o.seed) + ")";
  }
  return inputs;
}

// The output check's defaults for a graph that stores activations in fewer digits than float32
// (runtime::PreparedStats::computes_in): an output computed as its model says then differs from
// another runtime's by that type's roundings, not float32's (onnxruntime runs a float16 graph in
// float32, its Cast pairs removed), while a wrong kernel's errors stay of the outputs' own size.
// rule: nullptr for float32 graphs, whose defaults are the flags' own.
struct Tolerance {
  double rtol = 0;
  double atol_of_peak = 0;
  const char* rule = nullptr;
};

Tolerance default_tolerance(DType computes_in) {
  switch (computes_in) {
    case DType::float16:
      return {1e-2, 5e-3, "a float16 graph's"};
    case DType::bfloat16:
      return {8e-2, 4e-2, "a bfloat16 graph's"};
    case DType::int8:
      return {1e-2, 1e-2, "a quantized graph's"};
    default:
      return {};
  }
}

// What `analyze` predicts at this run's dims and input extents, value by value, against the run.
runtime::ShapeCheck check_shapes(const RunCommandOptions& o, const graph::Model& model,
                                 const runtime::Session& session,
                                 const std::vector<runtime::Tensor>& inputs) {
  analysis::ModelProgramOptions options;
  options.dims = session.prepared().dims;
  for (const runtime::Tensor& t : inputs) options.shapes.emplace(t.name(), t.dims());
  options.order = o.order;
  options.fuse = !o.no_fuse;
  options.carry_float32 = !o.keep_16bit;
  options.subgraph_arena = analysis::subgraph_arena(o.planner);
  // The model already loaded, not read again: it outlives the program, so the pointer owns
  // nothing.
  const std::shared_ptr<const graph::Model> loaded(&model, [](const graph::Model*) {});
  const analysis::ModelProgram predicted =
      analysis::build_model_program(loaded, runtime::op_registry(), options);
  return runtime::check_shapes(predicted, session);
}

void run_model(const RunCommandOptions& o) {
  if (o.repeat < 1) throw UsageError("--repeat must be at least 1");
  DimBindings dims;
  for (const std::string& d : o.dims) {
    const auto [name, value] = split_binding(d, "--dim");
    dims[name] = parse_dim_value(value, "--dim");
  }
  report::RunReport r;
  const heap::Stats before_load = heap::snapshot();
  heap::reset_peak();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const graph::Model model = graph::load_model(o.model);
  r.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  r.load_peak_heap_bytes = heap::snapshot().peak_bytes - before_load.current_bytes;
  runtime::Session session(model, {.threads = o.threads,
                                   .planner = o.planner,
                                   .order = o.order,
                                   .dims = dims,
                                   .profile = o.profile,
                                   .fuse = !o.no_fuse,
                                   .carry_float32 = !o.keep_16bit});
  const std::vector<runtime::Tensor> inputs = read_inputs(o, session, dims, r.input_source);
  if (!o.output_dir.empty()) {  // before the runs, which -o would otherwise waste
    for (const runtime::Session::OutputInfo& out : session.outputs()) {
      if (!out.not_a_tensor.empty()) {
        throw UsageError("-o: output " + in_quotes(out.name) + " is declared a" +
                         (out.not_a_tensor[0] == 'o' ? "n " : " ") + out.not_a_tensor +
                         ", which footprint does not write as a .pb yet");
      }
    }
  }
  const auto t1 = Clock::now();
  session.prepare(inputs);
  r.prepare_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  r.prepared = session.prepared();
  if (!r.prepared.rebatched.empty())
    std::fprintf(stderr, "footprint: %s\n", r.prepared.rebatched.c_str());
  r.after_prepare = runtime::read_process_memory();
  // Sized before the first run, so that profiling allocates nothing between runs.
  std::vector<double> step_samples(o.profile ? session.prepared().steps * o.repeat : 0);
  r.outputs = session.run(inputs);
  r.first_run = session.last_run();
  // Later runs write into the outputs the run before returned, as a serving loop would: their
  // pages are not allocated and faulted in again on every run.
  std::vector<runtime::Tensor> later_outputs;
  for (int i = 0; i < o.warmup; ++i) session.run(inputs, later_outputs);
  std::vector<double> latencies;
  for (int i = 0; i < o.repeat; ++i) {
    session.run(inputs, later_outputs);
    latencies.push_back(session.last_run().latency_ms);
    const std::vector<uint64_t>& ns = session.last_run().step_ns;
    for (size_t s = 0; s < ns.size(); ++s) {
      step_samples[static_cast<size_t>(i) * ns.size() + s] = static_cast<double>(ns[s]);
    }
  }
  if (o.profile) r.profile = profile_of(session, step_samples, static_cast<size_t>(o.repeat));
  r.latency_ms.min = *std::min_element(latencies.begin(), latencies.end());
  r.latency_ms.median = bench::percentile(latencies, 0.5);
  r.latency_ms.p90 = bench::percentile(latencies, 0.9);
  r.latency_ms.runs = latencies.size();
  r.last_run = session.last_run();
  r.end = runtime::read_process_memory();
  double rtol = o.rtol;
  double atol_of_peak = o.atol_of_peak;
  if (const Tolerance t = default_tolerance(session.prepared().computes_in); t.rule != nullptr) {
    if (!o.rtol_given) rtol = t.rtol;
    if (atol_of_peak > 0) atol_of_peak = t.atol_of_peak;  // not when --atol was given
    if (!o.rtol_given || o.atol_of_peak > 0) r.tolerance_rule = t.rule;
  }
  if (!o.data_dir.empty()) {
    const auto expected = graph::numbered_tensor_files(o.data_dir, "output");
    if (!expected.empty()) {
      // A sequence's expected elements, or an optional's tensor, by the names the run gives them.
      std::vector<runtime::DeclaredValue> declared;
      for (const auto& d : session.outputs()) declared.push_back({d.name, d.not_a_tensor});
      const std::vector<runtime::Tensor> want = runtime::read_value_files(expected, declared);
      r.check = runtime::check_outputs(r.outputs, want, rtol, o.atol, atol_of_peak);
    }
  }
  if (!o.output_dir.empty()) {
    make_output_folder(o.output_dir);
    for (size_t i = 0; i < r.outputs.size(); ++i)
      r.output_files.push_back(
          (fs::path(o.output_dir) / ("output_" + std::to_string(i) + ".pb")).string());
    // Every name checked before the first is written: -o DIR may be --data-dir itself.
    std::vector<InputFile> read = files_read(o.model, o.data_dir);
    for (const std::string& spec : o.inputs)
      read.push_back({split_binding(spec, "--input").second, "an --input file"});
    for (const std::string& f : r.output_files) refuse_overwriting(f, read, "-o");
    for (size_t i = 0; i < r.outputs.size(); ++i)
      runtime::write_tensor_file(r.output_files[i], r.outputs[i]);
  }
  if (o.check_shapes) r.shape_check = check_shapes(o, model, session, inputs);
  // Filled only now: an allocation before the runs (the model's path) would shift the heap's
  // layout and so the usable sizes the counting allocator measures, by a few bytes.
  r.model = o.model;
  r.threads = o.threads;
  r.rtol = rtol;
  r.atol = o.atol;
  r.atol_of_peak = atol_of_peak;
  if (o.json) {
    std::printf("%s\n", report::run_json(r).dump(2).c_str());
  } else {
    std::printf("%s", report::run_text(r).c_str());
  }
  if (r.check && !r.check->match) {
    throw Error("outputs differ from " + o.data_dir + ": " + r.check->problem);
  }
  if (r.shape_check && !r.shape_check->difference.empty()) {
    throw Error("--check-shapes: " + r.shape_check->difference);
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
  cmd->add_flag("--no-fuse", opts->no_fuse, kNoFuseHelp);
  cmd->add_flag("--keep-16bit", opts->keep_16bit, kKeep16bitHelp);
  cmd->add_option("--order", opts->order, "Node order: stored (default) or memory")
      ->check(CLI::IsMember({"stored", "memory"}));
  cmd->add_option("--rtol", opts->rtol,
                  "Relative tolerance of the output check (default 1e-3; 1e-2 where the graph "
                  "stores activations as float16 or 8-bit integers, 8e-2 as bfloat16)")
      ->each([opts](const std::string&) { opts->rtol_given = true; });
  cmd->add_option("--atol", opts->atol,
                  "Absolute tolerance of the output check (default 1e-5, or 1e-4 of an output's "
                  "largest expected magnitude where that is larger, which is what two correct "
                  "float32 runs differ by on large outputs: 5e-3 of it in a float16 graph, 1e-2 "
                  "in a quantized one, 4e-2 in a bfloat16 one; a value given is used as it is)")
      ->each([opts](const std::string&) { opts->atol_of_peak = 0; });
  cmd->add_flag("--profile", opts->profile,
                "Time every step of the timed runs: median time per op type and the dearest "
                "steps");
  cmd->add_flag("--check-shapes", opts->check_shapes,
                "After the runs, compare every value's dtype, extents and bytes as `analyze` "
                "predicts them (at the dims and input extents this run bound) with what the run "
                "gave its tensor; the first difference is an error naming the value");
  cmd->add_flag("--json", opts->json, "Print JSON");
  cmd->callback([opts] { run_model(*opts); });
}

}  // namespace footprint::cli
