// Records on disk: JSONL round trips, Google Benchmark JSON carries its fields and reads back.
#include "footprint/bench/record_io.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

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
  // Without a memory manager Google Benchmark writes no memory figures: none is read as 0.
  EXPECT_EQ(runs[0].records[0].absent,
            (std::set<std::string>{"allocations", "net_heap", "peak_heap", "peak_rss",
                                   "predicted_peak"}));
}

TEST(RecordIo, OwnRecordsCarryEveryFigureAndMissingOnesAreMarked) {
  testing::TempDir dir;
  const auto path = dir.path() / "runs.jsonl";
  append_jsonl(path, sample_run());
  const auto runs = read_runs(path);  // held: a range-for over a temporary's member dangles
  for (const Record& r : runs[0].records) EXPECT_TRUE(r.absent.empty()) << r.name;
  const auto partial = dir.path() / "partial.jsonl";
  std::ofstream(partial) << R"({"type":"benchmark","name":"b","memory":{"peak_heap_bytes":7}})"
                         << "\n";
  const Record r = read_runs(partial)[0].records[0];
  EXPECT_EQ(r.peak_heap_bytes, 7u);
  EXPECT_EQ(r.absent,
            (std::set<std::string>{"allocations", "net_heap", "peak_rss", "predicted_peak"}));
  // Written again (JSONL and Google Benchmark JSON), a missing figure stays missing, not 0.
  RunRecords again;
  again.records.push_back(r);
  again.records[0].wall_ms = again.records[0].cpu_ms = {1.0};  // one iteration entry
  const auto copy = dir.path() / "copy.jsonl";
  append_jsonl(copy, again);
  EXPECT_EQ(read_runs(copy)[0].records[0].absent, r.absent);
  const auto gb = dir.path() / "copy.json";
  std::ofstream(gb) << to_gbench_json(again);
  const Record from_gb = read_runs(gb)[0].records[0];
  EXPECT_EQ(from_gb.absent, r.absent);
  EXPECT_EQ(from_gb.peak_heap_bytes, 7u);
}

// A figure that is there but is no count (negative, fractional, a string) or a time that is no
// duration is an error naming the key and line, not a wrapped or truncated number.
TEST(RecordIo, FiguresThatAreNoCountsAreErrors) {
  testing::TempDir dir;
  const auto path = dir.path() / "bad.jsonl";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("memory":{"peak_heap_bytes":-5})", R"("peak_heap_bytes" is -5, not a count)"},
      {R"("memory":{"allocations":2.5})", R"("allocations" is 2.5, not a count)"},
      {R"("memory":{"peak_rss_bytes":"big"})", R"("peak_rss_bytes" is "big", not a count)"},
      {R"("memory":{"net_heap_bytes":1e300})", R"("net_heap_bytes" is 1e+300, not a whole)"},
      {R"("wall_ms":{"samples":[1.0,-2.0]})", R"("wall_ms" is -2.0, not a duration)"},
  };
  for (const auto& [fields, message] : cases) {
    std::ofstream(path) << R"({"type":"benchmark","name":"b",)" << fields << "}\n";
    try {
      (void)read_runs(path);
      ADD_FAILURE() << fields << " was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("line 1: " + message), std::string::npos) << e.what();
    }
  }
}

TEST(RecordIo, AGoogleBenchmarkIterationNeedsItsTimeUnit) {
  testing::TempDir dir;
  const auto path = dir.path() / "gb.json";
  std::ofstream(path) << R"({"benchmarks":[{"name":"BM_a","run_type":"iteration",
     "real_time":2000,"cpu_time":1900}]})";
  try {
    (void)read_runs(path);
    FAIL() << "read without a time_unit";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ": benchmark 'BM_a': an iteration without a \"time_unit\"");
  }
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
