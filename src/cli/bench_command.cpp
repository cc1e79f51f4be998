// `footprint bench MODEL... [--dim NAME=V1,V2]... [--threads 1,2] [--repeat N] [--tags T,...]
//  [--out runs.jsonl] [--format jsonl|gbench] [--db runs.sqlite] [--no-evict] [--case-rss]
//  [--memo-budget BYTES] [--json]`:
// benchmarks models with time and memory; records keep parameter representations only.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "footprint/bench/model_benchmarks.hpp"
#include "footprint/bench/record_io.hpp"
#include "footprint/bench/runner.hpp"
#include "footprint/bench/sqlite_store.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"
#include "footprint/report/model_summary_report.hpp"
#include "model_program.hpp"

namespace footprint::cli {
namespace {

struct BenchCommandOptions {
  std::vector<std::string> models;
  std::vector<std::string> dims;  // NAME=V1,V2
  std::string threads = "1";
  int repeat = 5;
  int warmup = 1;
  std::vector<std::string> tags;
  std::string out;
  std::string format = "jsonl";
  std::string db;
  bool no_evict = false;
  bool case_rss = false;
  uint64_t memo_budget = 0;
  uint64_t seed = 1;
  bool json = false;
  bool quiet = false;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

bench::ModelBenchOptions model_options(const BenchCommandOptions& o) {
  bench::ModelBenchOptions m;
  for (const std::string& p : o.models) m.models.emplace_back(p);
  for (const std::string& spec : o.dims) {
    const auto [name, values] = split_binding(spec, "--dim");
    bench::DimAxis axis{name, {}};
    for (const std::string& v : split_list(values))
      axis.values.push_back(parse_dim_value(v, "--dim"));
    if (axis.values.empty()) throw UsageError("--dim " + spec + ": no values");
    m.dims.push_back(std::move(axis));
  }
  m.threads.clear();
  for (const std::string& t : split_list(o.threads))
    m.threads.push_back(parse_thread_count(t, "--threads"));
  if (m.threads.empty()) throw UsageError("--threads: no values");
  m.seed = o.seed;
  return m;
}

std::string progress_line(const bench::Record& r, size_t w) {
  using report::human_bytes;
  if (!r.error.empty()) return fmt::format("{:<{}} FAILED: {}\n", r.name, w, r.error);
  return fmt::format("{:<{}} {:>10.3f} {:>10.3f} {:>8.3f} {:>11} {:>11} {:>11}\n", r.name, w,
                     r.wall.median, r.wall.min, r.wall.stddev, human_bytes(r.peak_heap_bytes),
                     human_bytes(r.peak_rss_bytes),
                     r.predicted_peak_bytes ? human_bytes(r.predicted_peak_bytes) : "-");
}

void write_out(const BenchCommandOptions& o, const bench::RunRecords& run,
               bench::SqliteStore* store) {
  if (store != nullptr) store->save(run);
  if (o.out.empty()) return;
  if (o.format == "gbench") {
    write_output_file(o.out, [&](std::ostream& f) { f << bench::to_gbench_json(run); });
  } else {
    bench::append_jsonl(o.out, run);
  }
}

nlohmann::json run_json(const bench::RunRecords& run) {
  // The JSONL lines, gathered into one object: the context and the records.
  std::stringstream lines(bench::to_jsonl(run));
  std::string line;
  nlohmann::json j = {{"records", nlohmann::json::array()}};
  while (std::getline(lines, line)) {
    nlohmann::json item = nlohmann::json::parse(line);
    if (item["type"] == "context") {
      j["context"] = item;
    } else {
      j["records"].push_back(item);
    }
  }
  j["peak_rss_bytes"] = run.peak_rss_bytes;
  return j;
}

// Neither --out nor --db may be one of the models (records appended to a model corrupt it), nor
// read-only: checked before the run, not after it.
void refuse_writing_over_models(const BenchCommandOptions& o) {
  std::vector<InputFile> models;
  for (const std::string& m : o.models) models.push_back({m, "a model"});
  if (!o.out.empty()) refuse_overwriting(o.out, models, "--out");
  // SQLite itself would write a read-only database as root: refused here.
  if (!o.db.empty()) refuse_overwriting(o.db, models, "--db");
}

void run_bench(const BenchCommandOptions& o) {
  if (o.repeat < 1) throw UsageError("--repeat must be at least 1");
  refuse_writing_over_models(o);
  // Opened first: a file that is not a footprint database fails before the run, not after.
  std::unique_ptr<bench::SqliteStore> store;
  if (!o.db.empty()) store = std::make_unique<bench::SqliteStore>(o.db);
  bench::Registry registry;
  for (const std::string& note : bench::add_model_benchmarks(registry, model_options(o)))
    std::fprintf(stderr, "footprint: note: %s\n", note.c_str());
  bench::RunOptions ro;
  ro.repetitions = o.repeat;
  ro.warmup = o.warmup;
  ro.tags = o.tags;
  ro.evict = !o.no_evict;
  ro.memo_budget_bytes = o.memo_budget;
  ro.reset_peak_rss = o.case_rss;
  const bool table = !o.json && !o.quiet;
  if (table) {
    // The names' column fits the longest case name (known before anything runs).
    size_t w = 9;
    for (const auto& c : bench::plan_cases(registry, ro)) w = std::max(w, c.name.size());
    std::printf("%-*s %10s %10s %8s %11s %11s %11s\n", static_cast<int>(w), "benchmark",
                "median ms", "min ms", "stddev", "peak heap", "peak RSS", "predicted");
    std::fflush(stdout);
    ro.on_record = [w](const bench::Record& r) {
      std::printf("%s", progress_line(r, w).c_str());
      std::fflush(stdout);
    };
  }
  const bench::RunRecords run = bench::run(registry, ro);
  write_out(o, run, store.get());
  if (o.json) {
    std::printf("%s\n", run_json(run).dump(2).c_str());
  } else if (table) {
    std::printf("run peak RSS %s; memos created %llu, evicted %llu%s\n",
                report::human_bytes(run.peak_rss_bytes).c_str(),
                static_cast<unsigned long long>(run.memo_creations),
                static_cast<unsigned long long>(run.memo_evictions),
                o.out.empty() ? "" : ("; records -> " + o.out).c_str());
  }
  for (const bench::Record& r : run.records)
    if (!r.error.empty()) throw Error(r.name + ": " + r.error);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto opts = std::make_shared<BenchCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Benchmark models (time and memory); each model is loaded right before its first "
      "benchmark and released after its last. Records keep parameter representations only.");
  cmd->add_option("MODEL", opts->models, "ONNX models")->required();
  cmd->add_option("--dim", opts->dims,
                  std::string("Values of a named input dim, --dim N=1,8 (repeatable; a grid)") +
                      kRebatchHelp)
      ->allow_extra_args(false);
  cmd->add_option("--threads", opts->threads, "Intra-op thread counts, e.g. 1,2 (default 1)");
  cmd->add_option("--repeat", opts->repeat, "Timed runs per benchmark (default 5)");
  cmd->add_option("--warmup", opts->warmup, "Untimed runs before them (default 1)")
      ->check(at_least(0));
  cmd->add_option("--tags", opts->tags, "RunRecords only benchmarks with one of these tags")
      ->delimiter(',');
  cmd->add_option("--out", opts->out, "Write records here (JSONL appends)");
  cmd->add_option("--format", opts->format, "Format of --out: jsonl (default) or gbench")
      ->check(CLI::IsMember({"jsonl", "gbench"}));
  cmd->add_option("--db", opts->db,
                  "Also save the run in this SQLite file (created or migrated; one transaction)");
  cmd->add_flag("--no-evict", opts->no_evict, "Keep every model loaded until the end");
  cmd->add_flag("--case-rss", opts->case_rss,
                "Reset the RSS high-water mark before each benchmark (each record's peak RSS is "
                "its own; /usr/bin/time then no longer sees the whole run's peak)");
  cmd->add_option("--memo-budget", opts->memo_budget,
                  "Bound the bytes of live memos (least recently used evicted first)");
  cmd->add_option("--seed", opts->seed, "Seed of the random inputs (default 1)");
  cmd->add_flag("--json", opts->json, "Print the run as JSON");
  cmd->add_flag("-q,--quiet", opts->quiet, "Print nothing but errors");
  cmd->callback([opts] { run_bench(*opts); });
}

}  // namespace footprint::cli
