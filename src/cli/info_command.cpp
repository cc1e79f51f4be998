// `footprint info MODEL [--json] [--load mmap|read]`
#include <chrono>
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "footprint/analysis/model_summary.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/core/user_files.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/topo_order.hpp"
#include "footprint/report/model_summary_report.hpp"
#include "footprint/runtime/process_memory.hpp"

namespace footprint::cli {
namespace {

struct InfoOptions {
  std::string model;
  bool json = false;
  std::string load = "mmap";
};

onnx::ModelSource open_source(const InfoOptions& o) {
  if (o.load == "mmap") return onnx::ModelSource::map_file(o.model);
  // "read": the whole file in an owned buffer, as a loader without mmap would have it.
  std::vector<std::byte> bytes = read_file_bytes(o.model);
  const std::filesystem::path path(o.model);
  return onnx::ModelSource::adopt(std::move(bytes), o.model,
                                  path.parent_path().empty() ? "." : path.parent_path());
}

void run_info(const InfoOptions& o) {
  const auto heap_before = heap::snapshot();
  heap::reset_peak();
  const auto start = std::chrono::steady_clock::now();
  const graph::Model model = graph::load_model(open_source(o));
  graph::Graph g = model.graph(graph::OpRegistry::builtin());
  (void)graph::topo_order(g);  // a cycle or dangling input is reported here
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const auto heap_after = heap::snapshot();
  const analysis::ModelSummary summary = analysis::summarize(model, g);
  report::LoadFigures load;
  load.source = o.load;
  load.ms = load_ms;
  if (heap::available()) {
    load.heap_peak_bytes = heap_after.peak_bytes - heap_before.current_bytes;
    load.heap_retained_bytes = heap_after.current_bytes - heap_before.current_bytes;
  }
  load.process = runtime::read_process_memory();
  if (o.json) {
    std::printf("%s\n", report::to_json(summary, load).dump(2).c_str());
  } else {
    std::printf("%s\n", report::to_text(summary, load).c_str());
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Show a model's inputs, outputs, opsets, ops and where its weight bytes live.");
  cmd->add_option("MODEL", opts->model, "ONNX model file")->required();
  cmd->add_flag("--json", opts->json, "Print one JSON object on stdout");
  cmd->add_option("--load", opts->load,
                  "How to bring the file into memory: mmap (zero-copy, default) or read "
                  "(an owned buffer)")
      ->check(CLI::IsMember({"mmap", "read"}));
  cmd->callback([opts] { run_info(*opts); });
}

}  // namespace footprint::cli
