// `footprint fold MODEL -o OUT.onnx [--max-fold-bytes B] [--external-data] [--threads T]
//  [--json]`: evaluates the model's constant subgraphs once and writes them as initializers,
// reporting what folding cost in heap and resident memory.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "flags.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/fold.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/report/fold_report.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/process_memory.hpp"

namespace footprint::cli {
namespace {

struct FoldCommandOptions {
  std::string model;
  std::string output;
  uint64_t max_fold_bytes = UINT64_MAX;
  bool external_data = false;
  int threads = 1;
  bool json = false;
};

void fold(const FoldCommandOptions& o) {
  if (o.output.empty()) throw UsageError("fold needs -o OUT.onnx");
  const heap::Stats before = heap::snapshot();
  heap::reset_peak();
  const auto t0 = std::chrono::steady_clock::now();
  const graph::Model model = graph::load_model(o.model);
  runtime::set_intra_op_threads(o.threads);
  report::FoldRun r;
  r.fold = graph::fold_model(
      model.onnx(), runtime::op_registry(), o.output,
      {.max_fold_bytes = o.max_fold_bytes, .external_data = o.external_data, .threads = o.threads});
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.peak_heap_bytes = heap::snapshot().peak_bytes - before.current_bytes;
  const auto mem = runtime::read_process_memory();
  r.peak_rss_bytes = mem ? mem->peak_rss_bytes : 0;
  r.model = o.model;
  r.output = o.output;
  r.external_data = o.external_data;
  if (o.json) {
    std::printf("%s\n", report::fold_json(r).dump(2).c_str());
  } else {
    std::printf("%s", report::fold_text(r).c_str());
  }
}

}  // namespace

void add_fold_command(CLI::App& app) {
  auto opts = std::make_shared<FoldCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fold", "Evaluate a model's constant subgraphs once and write them as initializers.");
  cmd->add_option("MODEL", opts->model, "ONNX model")->required();
  cmd->add_option("-o,--output", opts->output, "The folded model")->required();
  cmd->add_option("--max-fold-bytes", opts->max_fold_bytes,
                  "Leave constants larger than this computed at run time");
  cmd->add_flag("--external-data", opts->external_data,
                "Write folded initializers to OUT.onnx.data, each 64-byte aligned");
  cmd->add_option("--threads", opts->threads, "Intra-op threads (default 1)")
      ->check(thread_count());
  cmd->add_flag("--json", opts->json, "Print JSON");
  cmd->callback([opts] { fold(*opts); });
}

}  // namespace footprint::cli
