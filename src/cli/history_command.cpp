// `footprint history --db runs.sqlite [--model M] [--json]`: every saved benchmark of a model,
// oldest first, so a trend (or the run that broke it) is one command away.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "footprint/bench/sqlite_store.hpp"
#include "footprint/core/error.hpp"
#include "footprint/report/model_summary_report.hpp"

namespace footprint::cli {
namespace {

struct HistoryCommandOptions {
  std::string db;
  std::string model;
  bool json = false;
};

nlohmann::json to_json(const bench::HistoryRow& h) {
  nlohmann::json j = {{"run_id", h.run_id},
                      {"date", h.date},
                      {"git_commit", h.git_commit},
                      {"benchmark", h.benchmark},
                      {"model", h.model},
                      {"repetitions", h.repetitions},
                      {"wall_median_ms", h.wall_median_ms},
                      {"wall_min_ms", h.wall_min_ms},
                      {"peak_heap_bytes", h.peak_heap_bytes},
                      {"peak_rss_bytes", h.peak_rss_bytes},
                      {"predicted_peak_bytes", h.predicted_peak_bytes}};
  if (!h.error.empty()) j["error"] = h.error;
  return j;
}

void run_history(const HistoryCommandOptions& o) {
  // Reading must not create a database where there was none.
  if (!std::filesystem::exists(o.db)) throw Error(o.db + ": no such file");
  const bench::SqliteStore store(o.db);
  const auto rows = store.history(o.model);
  if (o.json) {
    nlohmann::json j = {{"db", o.db}, {"rows", nlohmann::json::array()}};
    for (const auto& h : rows) j["rows"].push_back(to_json(h));
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  using report::human_bytes;
  std::printf("%-20s %-10s %-44s %10s %11s %11s %11s\n", "date", "commit", "benchmark", "median ms",
              "peak heap", "peak RSS", "predicted");
  for (const auto& h : rows) {
    const std::string line =
        h.error.empty()
            ? fmt::format("{:>10.3f} {:>11} {:>11} {:>11}", h.wall_median_ms,
                          human_bytes(h.peak_heap_bytes), human_bytes(h.peak_rss_bytes),
                          h.predicted_peak_bytes ? human_bytes(h.predicted_peak_bytes) : "-")
            : "FAILED: " + h.error;
    std::printf("%-20s %-10s %-44s %s\n", h.date.c_str(), h.git_commit.substr(0, 10).c_str(),
                h.benchmark.c_str(), line.c_str());
  }
}

}  // namespace

void add_history_command(CLI::App& app) {
  auto opts = std::make_shared<HistoryCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "history",
      "Show saved benchmark runs from a SQLite file (footprint bench --db), oldest first.");
  cmd->add_option("--db", opts->db, "The SQLite file")->required();
  cmd->add_option("--model", opts->model,
                  "Only benchmarks whose model path contains this text (e.g. vgg19)");
  cmd->add_flag("--json", opts->json, "Print JSON");
  cmd->callback([opts] { run_history(*opts); });
}

}  // namespace footprint::cli
