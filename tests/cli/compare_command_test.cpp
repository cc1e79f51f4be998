// `footprint compare`: exit 1 with one line when a threshold fails, 0 when the runs agree, over
// JSONL and Google Benchmark JSON.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"
#include "footprint/bench/record_io.hpp"

namespace footprint {
namespace {

// A run of one benchmark whose times are `ms` with a little deterministic jitter.
bench::RunRecords synthetic(double ms, uint64_t peak_heap) {
  bench::RunRecords run;
  run.context.run_id = "synthetic";
  bench::Record r;
  r.name = r.family = "run/model";
  for (int i = 0; i < 10; ++i) {
    r.wall_ms.push_back(ms * (1 + 0.002 * (i % 5)));
    r.cpu_ms.push_back(ms);
  }
  r.wall = bench::summarize(r.wall_ms);
  r.cpu = bench::summarize(r.cpu_ms);
  r.peak_heap_bytes = peak_heap;
  run.records.push_back(r);
  return run;
}

struct Files {
  testing::TempDir dir;
  std::string write(const std::string& name, const bench::RunRecords& run) {
    const auto p = dir.path() / name;
    bench::append_jsonl(p, run);
    return p.string();
  }
};

const char* kGates = " --fail-on time:5% --fail-on peak_heap:1%";

TEST(CompareCommand, SameBuildPasses) {
  Files f;
  const auto a = f.write("a.jsonl", synthetic(10, 1000000));
  const auto b = f.write("b.jsonl", synthetic(10, 1000000));
  const CliRun r = run("compare " + a + " " + b + kGates);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("run/model"), std::string::npos);
}

TEST(CompareCommand, TenPercentSlowdownFails) {
  Files f;
  const auto a = f.write("a.jsonl", synthetic(10, 1000000));
  const auto b = f.write("b.jsonl", synthetic(11, 1000000));
  const CliRun r = run("compare --json " + a + " " + b + kGates);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("footprint: error: 1 threshold(s) failed, first: run/model time", 0), 0u)
      << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["failed"], true);
}

TEST(CompareCommand, FivePercentMemoryGrowthFails) {
  Files f;
  const auto a = f.write("a.jsonl", synthetic(10, 1000000));
  const auto b = f.write("b.jsonl", synthetic(10, 1050000));
  const CliRun r = run("compare " + a + " " + b + kGates);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("peak_heap +5.00%"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos);
}

TEST(CompareCommand, ReadsGoogleBenchmarkJson) {
  Files f;
  const auto a = f.dir.path() / "a.json";
  std::ofstream(a) << bench::to_gbench_json(synthetic(10, 1000000));
  const auto b = f.write("b.jsonl", synthetic(11, 1000000));
  EXPECT_EQ(run("compare " + a.string() + " " + b + kGates).exit_code, 1);
  EXPECT_EQ(run("compare " + a.string() + " " + a.string() + kGates).exit_code, 0);
}

TEST(CompareCommand, UsageAndInputErrors) {
  Files f;
  const auto a = f.write("a.jsonl", synthetic(10, 1000000));
  const CliRun bad_gate = run("compare " + a + " " + a + " --fail-on speed:5%");
  EXPECT_EQ(bad_gate.exit_code, 2);
  EXPECT_EQ(bad_gate.err.rfind("footprint: error: --fail-on speed:5%", 0), 0u) << bad_gate.err;
  const CliRun missing = run("compare " + a + " /nonexistent.jsonl");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("footprint: error: ", 0), 0u);
}

}  // namespace
}  // namespace footprint
