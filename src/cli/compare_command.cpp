// `footprint compare A B [--fail-on METRIC:PCT]... [--json]`: benchmark by benchmark, what
// changed from A (baseline) to B; exit 1 when a threshold fails. A and B are JSONL (the last run
// in each file) or Google Benchmark JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "footprint/bench/compare.hpp"
#include "footprint/bench/record_io.hpp"
#include "footprint/core/error.hpp"

namespace footprint::cli {
namespace {

struct CompareCommandOptions {
  std::string base;
  std::string contender;
  std::vector<std::string> fail_on;
  bool all = false;
  bool json = false;
};

bench::RunRecords last_run(const std::string& path) {
  std::vector<bench::RunRecords> runs = bench::read_runs(path);
  if (runs.back().records.empty()) throw Error(path + ": the last run has no benchmark records");
  return std::move(runs.back());
}

nlohmann::json to_json(const bench::Comparison& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& m : c.changes) {
    nlohmann::json r = {{"benchmark", m.benchmark}, {"metric", m.metric}, {"base", m.base},
                        {"contender", m.contender}, {"change", m.change}, {"failed", m.failed}};
    if (m.p_value) r["p_value"] = *m.p_value;
    if (m.threshold_percent) r["threshold_percent"] = *m.threshold_percent;
    if (!m.note.empty()) r["note"] = m.note;
    rows.push_back(std::move(r));
  }
  return {{"changes", rows},
          {"only_in_base", c.only_in_base},
          {"only_in_contender", c.only_in_contender},
          {"failed", c.failed}};
}

// Times and thresholded metrics by default; --all shows every metric.
bool shown(const bench::MetricChange& m, bool all) {
  return all || m.failed || m.threshold_percent || m.metric == "time" || m.metric == "error";
}

std::string to_text(const bench::Comparison& c, bool all) {
  size_t w = 9;  // the names' column fits the longest name
  for (const auto& m : c.changes) w = std::max(w, m.benchmark.size());
  std::string t = fmt::format("{:<{}} {:<12} {:>14} {:>14} {:>9} {:>8}  {}\n", "benchmark", w,
                              "metric", "base", "contender", "change", "p", "verdict");
  for (const auto& m : c.changes) {
    if (!shown(m, all)) continue;
    const std::string p = m.p_value ? fmt::format("{:.4f}", *m.p_value) : "-";
    std::string verdict = m.failed ? "FAIL" : (m.threshold_percent ? "ok" : "");
    if (m.threshold_percent) verdict += fmt::format(" (limit {}%)", *m.threshold_percent);
    if (!m.note.empty()) verdict += "  " + m.note;
    t += fmt::format("{:<{}} {:<12} {:>14.6g} {:>14.6g} {:>+8.2f}% {:>8}  {}\n", m.benchmark, w,
                     m.metric, m.base, m.contender, m.change * 100, p, verdict);
  }
  for (const auto& n : c.only_in_base) t += "only in base: " + n + "\n";
  for (const auto& n : c.only_in_contender) t += "only in contender: " + n + "\n";
  return t;
}

void run_compare(const CompareCommandOptions& o) {
  std::vector<bench::Threshold> thresholds;
  for (const std::string& spec : o.fail_on) thresholds.push_back(bench::parse_threshold(spec));
  const bench::RunRecords a = last_run(o.base);
  const bench::RunRecords b = last_run(o.contender);
  const bench::Comparison c = bench::compare(a, b, thresholds);
  if (o.json) {
    std::printf("%s\n", to_json(c).dump(2).c_str());
  } else {
    std::printf("%s", to_text(c, o.all).c_str());
  }
  if (c.failed) {
    size_t n = 0;
    std::string first;
    for (const auto& m : c.changes) {
      if (!m.failed) continue;
      if (n++ == 0) first = fmt::format("{} {} {:+.2f}%", m.benchmark, m.metric, m.change * 100);
    }
    throw Error(fmt::format("{} threshold(s) failed, first: {}", n, first));
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto opts = std::make_shared<CompareCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two benchmark runs (JSONL or Google Benchmark JSON); exit 1 when a "
      "--fail-on threshold fails.");
  cmd->add_option("BASE", opts->base, "Baseline records")->required();
  cmd->add_option("CONTENDER", opts->contender, "Records to judge")->required();
  cmd->add_option("--fail-on", opts->fail_on,
                  "METRIC:PCT, e.g. time:5% or peak_heap:1% (repeatable). Metrics: time, cpu, "
                  "peak_heap, net_heap, allocations, peak_rss, predicted_peak");
  cmd->add_flag("--all", opts->all, "Show every metric, not only times and thresholded ones");
  cmd->add_flag("--json", opts->json, "Print JSON");
  cmd->callback([opts] { run_compare(*opts); });
}

}  // namespace footprint::cli
