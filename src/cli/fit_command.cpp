// `footprint fit MODEL --budget BYTES --solve DIM [--figure total|activations] [--dim N=V]...
// [--shape ..] [--data-dir DIR] [--inputs ..] [--order ..] [--max V] [--json]`: the largest
// value of DIM whose predicted figure fits the budget (analysis/dim_fit.hpp).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "footprint/analysis/dim_fit.hpp"
#include "footprint/core/error.hpp"
#include "footprint/report/fit_report.hpp"
#include "model_program.hpp"

namespace footprint::cli {
namespace {

struct FitOptions {
  std::string input;
  std::string budget;
  std::string solve;
  std::string figure = "total";
  std::vector<std::string> dims;
  std::vector<std::string> shapes;
  std::string data_dir;
  std::string inputs = "caller";
  std::string order = "stored";
  bool no_fuse = false;
  bool keep_16bit = false;
  int64_t low = 1;
  int64_t max = int64_t{1} << 40;
  bool json = false;
};

void run_fit(const FitOptions& o) {
  const uint64_t budget = parse_bytes(o.budget, "--budget");
  const std::string prefix = o.solve + "=";
  for (const std::string& d : o.dims) {
    if (d.rfind(prefix, 0) == 0) throw UsageError("--dim " + d + ": " + o.solve + " is solved for");
  }
  if (o.max < o.low) throw UsageError("--max is below --min");
  std::vector<std::string> dims = o.dims;
  dims.push_back(prefix + std::to_string(o.low));
  const ModelProgram m = load_model_program({.path = o.input,
                                             .dims = dims,
                                             .shapes = o.shapes,
                                             .data_dir = o.data_dir,
                                             .inputs = o.inputs,
                                             .order = o.order,
                                             .fuse = !o.no_fuse,
                                             .carry_float32 = !o.keep_16bit});
  analysis::check_fit_dim(m, o.solve);
  const analysis::FitFigure figure = o.figure == "activations"
                                         ? analysis::FitFigure::activations_peak
                                     : o.figure == "arena" ? analysis::FitFigure::arena
                                                           : analysis::FitFigure::total_peak;
  const analysis::DimFit f = analysis::fit_dim(
      [&](int64_t v) {
        DimBindings at = m.options.dims;
        at[o.solve] = v;
        return analysis::timeline_at(m, at);
      },
      o.solve, figure, budget, o.low, o.max);
  if (o.json) {
    std::printf("%s\n", report::fit_json(o.input, f).dump(2).c_str());
  } else {
    std::printf("%s", report::fit_text(o.input, f).c_str());
  }
  if (!f.largest) {
    throw Error("nothing fits: " + o.solve + "=" + std::to_string(o.low) +
                (f.bytes_above ? " is over the budget" : " is refused: " + f.refused));
  }
}

}  // namespace

void add_fit_command(CLI::App& app) {
  auto opts = std::make_shared<FitOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fit",
      "The largest value of one dim (batch, sequence or past length) whose predicted peak fits a "
      "budget: exact predictions at O(log answer) values, doubling then bisecting.");
  cmd->add_option("MODEL", opts->input, "ONNX model")->required();
  cmd->add_option("--budget", opts->budget, "Bytes available: 67108864, 64MiB, 1.5GiB")->required();
  cmd->add_option("--solve", opts->solve, "The dim to solve for (a named dim of the model)")
      ->required();
  cmd->add_option("--figure", opts->figure,
                  "total: the total peak, weights included (default); activations: the "
                  "activations' peak alone; arena: the smallest arena for activations and "
                  "workspace (64-byte buffers), what run obtains where its plan is optimal")
      ->check(CLI::IsMember({"total", "activations", "arena"}));
  cmd->add_option("--dim", opts->dims,
                  std::string("Bind another named dim: --dim batch=1 (repeatable)") + kRebatchHelp);
  cmd->add_option("--shape", opts->shapes, kShapeHelp);
  cmd->add_option("--data-dir", opts->data_dir, kDataDirHelp);
  cmd->add_option("--inputs", opts->inputs, "caller (default) or donated")
      ->check(CLI::IsMember({"caller", "donated"}));
  cmd->add_flag("--no-fuse", opts->no_fuse, kNoFuseHelp);
  cmd->add_flag("--keep-16bit", opts->keep_16bit, kKeep16bitHelp);
  cmd->add_option("--order", opts->order, "Node order: stored (default) or memory")
      ->check(CLI::IsMember({"stored", "memory"}));
  cmd->add_option("--min", opts->low, "The smallest value to consider (default 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max", opts->max, "The largest value to try (default 2^40)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", opts->json, "Print one JSON object on stdout");
  cmd->callback([opts] { run_fit(*opts); });
}

}  // namespace footprint::cli
