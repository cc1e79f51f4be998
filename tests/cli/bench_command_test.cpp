// `footprint bench`: records with parameter representations and memory figures, models as memos
// loaded once and released after their last benchmark, both output formats, one-line errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"
#include "footprint/bench/record_io.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/version.hpp"

namespace footprint {
namespace {

namespace fs = std::filesystem;

TEST(BenchCommand, WritesJsonlRecordsWithRepresentations) {
  testing::TempDir dir;
  const auto out = dir.path() / "runs.jsonl";
  const CliRun r = run(std::string("bench --repeat 2 --dim N=1,2 --out ") + out.string() + " " +
                       FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("median ms"), std::string::npos);
  const auto runs = bench::read_runs(out);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].records.size(), 2u);
  const bench::Record& rec = runs[0].records[1];
  EXPECT_EQ(rec.wall_ms.size(), 2u);
  ASSERT_EQ(rec.params.size(), 3u);
  EXPECT_EQ(rec.params[0].type, "model");
  EXPECT_EQ(rec.params[0].source, FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(rec.params[0].hash.size(), 32u);
  EXPECT_EQ(rec.params[0].bytes, fs::file_size(FOOTPRINT_EXAMPLE_MODEL));
  EXPECT_EQ(rec.params[2].name, "N");
  EXPECT_EQ(rec.params[2].value, "2");
  EXPECT_GT(rec.predicted_peak_bytes, 0u);
  if (heap::available()) {  // the CLI links the same counter as this test
    EXPECT_GT(rec.peak_heap_bytes, 0u);
  }
  EXPECT_GT(rec.peak_rss_bytes, 0u);
  EXPECT_FALSE(runs[0].context.compiler.empty());
  EXPECT_EQ(runs[0].context.footprint_version, footprint::kVersion);
}

TEST(BenchCommand, EachModelIsLoadedOnceAndEvictedAfterItsLastBenchmark) {
  testing::TempDir dir;
  for (const char* m : {"a", "b"}) {
    fs::create_directories(dir.path() / m);
    fs::copy_file(FOOTPRINT_EXAMPLE_MODEL, dir.path() / m / "model.onnx");
  }
  const std::string models =
      (dir.path() / "a/model.onnx").string() + " " + (dir.path() / "b/model.onnx").string();
  const CliRun r = run("bench --json --repeat 1 --dim N=1,2 " + models);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["records"].size(), 4u);
  EXPECT_EQ(j["context"]["memo_creations"], 6);  // 2 models + 4 sessions (model x N)
  EXPECT_EQ(j["context"]["memo_evictions"], 6);
  EXPECT_EQ(j["records"][0]["name"], "run/a[model=a,threads=1,N=1]");
  EXPECT_EQ(j["records"][3]["name"], "run/b[model=b,threads=1,N=2]");
  const CliRun kept = run("bench --json --no-evict --repeat 1 " + models);
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(nlohmann::json::parse(kept.out)["context"]["memo_evictions"], 0);
}

TEST(BenchCommand, GoogleBenchmarkFormat) {
  testing::TempDir dir;
  const auto out = dir.path() / "gb.json";
  const CliRun r = run(std::string("bench -q --repeat 3 --format gbench --out ") + out.string() +
                       " " + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  ASSERT_TRUE(j.contains("context"));
  ASSERT_EQ(j["benchmarks"].size(), 6u);  // 3 iterations + mean, median, stddev
  for (const char* k : {"run_type", "iterations", "real_time", "cpu_time", "time_unit",
                        "max_bytes_used", "allocs_per_iter", "net_heap_growth"})
    EXPECT_TRUE(j["benchmarks"][0].contains(k)) << k;
}

TEST(BenchCommand, DimsAModelDoesNotNameAreNoted) {
  const CliRun r = run(std::string("bench -q --repeat 1 --dim BATCH=2 ") + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no input dim named BATCH"), std::string::npos) << r.err;
}

TEST(BenchCommand, BatchReBatchesAModelStoredAtBatchOne) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto model = testing::shared_dir() / "models" / "light" / "bvlc_alexnet" / "model.onnx";
  const CliRun r = run("bench --json --repeat 1 --dim batch=1,2 " + model.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("re-batched: leading dim of 1 input and 1 Reshape made 'batch'"),
            std::string::npos)
      << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["records"].size(), 2u);
  // One memo'd model, a prepared session per batch: the larger batch predicts more.
  EXPECT_LT(j["records"][0]["memory"]["predicted_peak_bytes"].get<uint64_t>(),
            j["records"][1]["memory"]["predicted_peak_bytes"].get<uint64_t>());
}

TEST(BenchCommand, ErrorsAreOneLine) {
  const CliRun missing = run("bench /nonexistent/model.onnx");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("footprint: error: ", 0), 0u) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1);
  EXPECT_EQ(run(std::string("bench --repeat 0 ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  EXPECT_EQ(run(std::string("bench --threads 0 ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  EXPECT_EQ(run(std::string("bench --dim N=x ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  EXPECT_EQ(run(std::string("bench --format csv ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
}

// One thread range for every subcommand, checked before libgomp sees the count.
TEST(BenchCommand, FlagValuesOutsideTheirRangesAreUsageErrors) {
  const std::string model = FOOTPRINT_EXAMPLE_MODEL;
  const CliRun threads = run("bench --threads 1,10000 " + model);
  EXPECT_EQ(threads.exit_code, 2);
  EXPECT_NE(threads.err.find("'10000' is not a thread count in 1..256"), std::string::npos)
      << threads.err;
  EXPECT_EQ(run("run --threads 10000 " + model).exit_code, 2);
  EXPECT_EQ(run("fold --threads 257 " + model + " -o x.onnx").exit_code, 2);
  const CliRun warmup = run("bench --warmup -1 " + model);
  EXPECT_EQ(warmup.exit_code, 2);
  EXPECT_NE(warmup.err.find("--warmup"), std::string::npos) << warmup.err;
  EXPECT_EQ(run("run --warmup -1 " + model).exit_code, 2);
  for (const char* limit : {"nan", "inf", "-1", "0"}) {
    const CliRun plan = run("plan --time-limit " + std::string(limit) + " " + model);
    EXPECT_EQ(plan.exit_code, 2) << limit;
    EXPECT_NE(plan.err.find("not a finite number of seconds above 0"), std::string::npos)
        << plan.err;
  }
}

}  // namespace
}  // namespace footprint

namespace footprint {
namespace {

TEST(HistoryCommand, ShowsSavedRunsOfAModel) {
  testing::TempDir dir;
  const auto db = (dir.path() / "runs.sqlite").string();
  for (int i = 0; i < 2; ++i) {
    const CliRun r =
        run(std::string("bench -q --repeat 1 --db ") + db + " " + FOOTPRINT_EXAMPLE_MODEL);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const CliRun h = run("history --json --db " + db + " --model tiny_cnn");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const auto j = nlohmann::json::parse(h.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["model"], FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_GT(j["rows"][1]["predicted_peak_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(nlohmann::json::parse(run("history --json --db " + db + " --model nothing").out)["rows"]
                .size(),
            0u);
  const CliRun missing = run("history --db " + (dir.path() / "none.sqlite").string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "none.sqlite"));
  EXPECT_EQ(run("history").exit_code, 2);
}

}  // namespace
}  // namespace footprint
