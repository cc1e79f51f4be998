// Records on disk: JSONL round trips, Google Benchmark JSON carries its fields and reads back.
#include "footprint/bench/record_io.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/run_options.hpp"
#include "footprint/bench/runner.hpp"
#include "test_support.hpp"

namespace footprint::bench {
namespace {

RunRecords sample_run() {
  Registry reg;
  reg.add("f", [](State& s) { s.set_counter("k", 2); }).parametrize("n", {1, 2}).tags({"t"});
  return run(reg, test_support::reps(3));
}

TEST(RecordIo, JsonlRoundTripsAndAppends) {
  testing::TempDir dir;
  const auto path = dir.path() / "runs.jsonl";
  const RunRecords a = sample_run();
  append_jsonl(path, a);
  append_jsonl(path, sample_run());
  const auto runs = read_runs(path);
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_EQ(runs[0].records.size(), 2u);
  const Record& r = runs[0].records[1];
  EXPECT_EQ(r.name, "f[n=2]");
  EXPECT_EQ(r.family, "f");
  EXPECT_EQ(r.tags, std::vector<std::string>{"t"});
  EXPECT_EQ(r.params[0].value, "2");
  EXPECT_EQ(r.wall_ms, a.records[1].wall_ms);
  EXPECT_DOUBLE_EQ(r.wall.median, a.records[1].wall.median);
  EXPECT_EQ(r.peak_heap_bytes, a.records[1].peak_heap_bytes);
  EXPECT_EQ(r.counters.at("k"), 2);
  EXPECT_EQ(runs[0].context.run_id, a.context.run_id);
  EXPECT_EQ(runs[0].context.git_commit, a.context.git_commit);
}

TEST(RecordIo, GoogleBenchmarkJsonHasItsFields) {
  const RunRecords a = sample_run();
  const auto j = nlohmann::json::parse(to_gbench_json(a));
  for (const char* k : {"date", "host_name", "num_cpus", "library_build_type"})
    EXPECT_TRUE(j["context"].contains(k)) << k;
  size_t iterations = 0;
  for (const auto& b : j["benchmarks"]) {
    for (const char* k : {"name", "run_name", "run_type", "iterations", "real_time", "cpu_time",
                          "time_unit", "repetitions", "allocs_per_iter", "max_bytes_used"})
      EXPECT_TRUE(b.contains(k)) << k;
    if (b["run_type"] == "iteration") ++iterations;
  }
  EXPECT_EQ(iterations, 6u);  // 2 cases x 3 repetitions, then the aggregates
  testing::TempDir dir;
  const auto path = dir.path() / "gb.json";
  std::ofstream(path) << to_gbench_json(a);
  const auto runs = read_runs(path);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].records.size(), 2u);
  EXPECT_EQ(runs[0].records[0].wall_ms.size(), 3u);
  EXPECT_EQ(runs[0].records[0].peak_heap_bytes, a.records[0].peak_heap_bytes);
}

TEST(RecordIo, ReadsGoogleBenchmarksOwnOutput) {
  testing::TempDir dir;
  const auto path = dir.path() / "gb.json";
  std::ofstream(path) << R"({"context":{"date":"x"},"benchmarks":[
    {"name":"BM_a","run_name":"BM_a","run_type":"iteration","iterations":100,
     "real_time":2000,"cpu_time":1900,"time_unit":"us"},
    {"name":"BM_a_mean","run_name":"BM_a","run_type":"aggregate","aggregate_name":"mean",
     "iterations":1,"real_time":2000,"cpu_time":1900,"time_unit":"us"}]})";
  const auto runs = read_runs(path);
  ASSERT_EQ(runs[0].records.size(), 1u);
  EXPECT_DOUBLE_EQ(runs[0].records[0].wall.median, 2.0);  // ms
}

TEST(RecordIo, BadLinesNameTheFileAndLine) {
  testing::TempDir dir;
  const auto path = dir.path() / "bad.jsonl";
  std::ofstream(path) << "{\"type\":\"context\"}\nnot json\n";
  try {
    (void)read_runs(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace footprint::bench
