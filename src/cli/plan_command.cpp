// `footprint plan BUFFERS.csv [--algo NAME] [--time-limit S] [--capacity BYTES] [--seed N]
//  [-o OUT.csv] [--json]`
//
// Plans a buffer list (MiniMalloc's CSV) with one of the planners. Every plan printed or written
// has passed the validator: plan_buffers() throws rather than return an invalid plan.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "commands.hpp"
#include "footprint/core/error.hpp"
#include "footprint/plan/buffer_csv.hpp"
#include "footprint/plan/planner.hpp"
#include "footprint/report/model_summary_report.hpp"

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
};

bool is_model_path(const std::string& path) {
  return std::filesystem::path(path).extension() == ".onnx";
}

nlohmann::json to_json(const PlanCommandOptions& o, const plan::Plan& p, size_t buffers) {
  nlohmann::json j = {
      {"input", o.input},
      {"algo", o.algo},
      {"algorithm", p.algorithm},
      {"arena_bytes", p.arena_bytes},
      {"lower_bound_bytes", p.lower_bound_bytes},
      {"ratio", p.lower_bound_bytes > 0
                    ? static_cast<double>(p.arena_bytes) / static_cast<double>(p.lower_bound_bytes)
                    : 1.0},
      {"buffers", buffers},
      {"solve_ms", p.solve_ms},
      {"optimal", p.optimal},
      {"search_nodes", p.search_nodes},
  };
  if (o.time_limit_s) j["time_limit_s"] = *o.time_limit_s;
  if (o.capacity_bytes) {
    j["capacity_bytes"] = *o.capacity_bytes;
    j["fits"] = p.arena_bytes <= *o.capacity_bytes;
  }
  if (!o.output.empty()) j["output"] = o.output;
  return j;
}

std::string to_text(const PlanCommandOptions& o, const plan::Plan& p, size_t buffers) {
  std::string text =
      fmt::format("plan        {}: {} buffers, {} ({})\n", o.input, buffers, o.algo, p.algorithm);
  text += fmt::format("arena       {} B ({})", p.arena_bytes, report::human_bytes(p.arena_bytes));
  text += fmt::format("   lower bound {} B", p.lower_bound_bytes);
  if (p.lower_bound_bytes > 0) {
    text += fmt::format("   ratio {:.4f}", static_cast<double>(p.arena_bytes) /
                                               static_cast<double>(p.lower_bound_bytes));
  }
  text += p.optimal ? "   optimal\n" : "\n";
  if (o.capacity_bytes) {
    text += fmt::format("capacity    {} B: {}\n", *o.capacity_bytes,
                        p.arena_bytes <= *o.capacity_bytes ? "fits" : "does not fit");
  }
  text += fmt::format("solved in   {:.1f} ms", p.solve_ms);
  if (p.search_nodes > 0) text += fmt::format(" ({} search nodes)", p.search_nodes);
  if (!o.output.empty()) text += "\nwritten to  " + o.output;
  return text;
}

void run_plan(const PlanCommandOptions& o) {
  if (is_model_path(o.input)) {
    throw UsageError(o.input +
                     ": planning a model's activations arrives with the analysis layer; for now "
                     "`footprint plan` takes a buffer list (CSV: id,lower,upper,size)");
  }
  const std::vector<plan::Buffer> buffers = plan::read_buffers_csv(o.input);
  plan::PlanOptions options;
  options.time_limit_s = o.time_limit_s;
  options.capacity_bytes = o.capacity_bytes;
  options.seed = o.seed;
  const plan::Plan p = plan::plan_buffers(buffers, o.algo, options);
  if (!o.output.empty()) plan::write_plan_csv(o.output, buffers, p.offsets);
  if (o.json) {
    std::printf("%s\n", to_json(o, p, buffers.size()).dump(2).c_str());
  } else {
    std::printf("%s\n", to_text(o, p, buffers.size()).c_str());
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto opts = std::make_shared<PlanCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Give every buffer an offset in the smallest arena (a validated plan).");
  cmd->add_option("BUFFERS", opts->input,
                  "Buffer list: CSV with a header id,lower,upper,size (MiniMalloc's format; "
                  "lifetimes are half-open [lower, upper))")
      ->required();
  std::vector<std::string> names;
  for (const std::string_view n : plan::planner_names()) names.emplace_back(n);
  cmd->add_option("--algo", opts->algo, "Planner (default auto)")->check(CLI::IsMember(names));
  cmd->add_option("--time-limit", opts->time_limit_s,
                  "Seconds the searching planners (anneal, exact, auto) may spend")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--capacity", opts->capacity_bytes,
                  "Bytes available: the searches stop at the first plan that fits")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", opts->seed, "Seed of the annealing search (default 1)");
  cmd->add_option("-o,--output", opts->output, "Write the plan as CSV: id,lower,upper,size,offset");
  cmd->add_flag("--json", opts->json, "Print one JSON object on stdout");
  cmd->callback([opts] { run_plan(*opts); });
}

}  // namespace footprint::cli
