// `footprint plan` as a user runs it: the JSON contract, the plan file, exit codes and one-line
// errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_runner.hpp"
#include "footprint/plan/buffer_csv.hpp"
#include "footprint/plan/plan.hpp"
#include "footprint/plan/validate.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

// MiniMalloc's README example: capacity 12 is optimal.
constexpr const char* kExample =
    "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n";

std::filesystem::path write_text(const testing::TempDir& dir, const char* name,
                                 const std::string& text) {
  auto path = dir.path() / name;
  testing::write_file(path, std::as_bytes(std::span(text.data(), text.size())));
  return path;
}

TEST(PlanCommand, JsonFollowsTheContract) {
  testing::TempDir dir;
  const auto in = write_text(dir, "in.csv", kExample);
  const auto out = dir.path() / "out.csv";
  const CliRun r = run("plan --json --algo exact -o " + out.string() + " " + in.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"algo", "arena_bytes", "lower_bound_bytes", "buffers", "solve_ms", "optimal"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["algo"], "exact");
  EXPECT_EQ(j["arena_bytes"], 12);
  EXPECT_EQ(j["lower_bound_bytes"], 12);
  EXPECT_EQ(j["buffers"], 5);
  EXPECT_EQ(j["optimal"], true);
  const auto buffers = plan::read_buffers_csv(in);
  const auto bytes = testing::read_file(out);
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  ASSERT_EQ(text.rfind("id,lower,upper,size,offset\n", 0), 0u) << text;
  // The offsets written are a valid plan of the input.
  std::vector<int64_t> offsets;
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) offsets.push_back(std::stoll(line.substr(line.rfind(',') + 1)));
  EXPECT_FALSE(plan::find_violation(buffers, offsets));
  EXPECT_EQ(plan::arena_bytes(buffers, offsets), 12);
}

// The bound a search proved is printed beside max-live, so the gap is certified: the alignment
// holes of planners_test.cpp (max-live 3, optimum 9).
TEST(PlanCommand, ProvenBoundBesideMaxLive) {
  testing::TempDir dir;
  const auto in = write_text(dir, "holes.csv",
                             "id,lower,upper,size,alignment\na,0,2,1,8\nb,0,2,1,8\nc,1,3,1,1\n");
  const CliRun r = run("plan --json --algo exact " + in.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["lower_bound_bytes"], 3);
  EXPECT_EQ(j["proven_bound_bytes"], 9);
  EXPECT_EQ(j["proven_ratio"], 1.0);
  EXPECT_EQ(j["optimal"], true);
  const CliRun text = run("plan --algo exact " + in.string());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("lower bound 3 B   ratio 3.0000   proven bound 9 B (ratio 1.0000)"),
            std::string::npos)
      << text.out;
}

TEST(PlanCommand, EveryAlgorithmAndTheTextSummary) {
  testing::TempDir dir;
  const auto in = write_text(dir, "in.csv", kExample);
  for (const char* algo :
       {"naive", "greedy-size", "greedy-breadth", "best-fit", "anneal", "exact", "auto"}) {
    const CliRun r = run(std::string("plan --time-limit 0.2 --algo ") + algo + " " + in.string());
    ASSERT_EQ(r.exit_code, 0) << algo << ": " << r.err;
    EXPECT_NE(r.out.find("arena"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("lower bound 12 B"), std::string::npos) << r.out;
  }
  const CliRun fits = run("plan --capacity 16 " + in.string());
  EXPECT_NE(fits.out.find("fits"), std::string::npos) << fits.out;
}

TEST(PlanCommand, BadUsageExitsWithTwo) {
  testing::TempDir dir;
  const auto in = write_text(dir, "in.csv", kExample);
  EXPECT_EQ(run("plan").exit_code, 2);
  EXPECT_EQ(run("plan --algo quantum " + in.string()).exit_code, 2);
  EXPECT_EQ(run("plan --time-limit -1 " + in.string()).exit_code, 2);
  // Model flags on a buffer list are a usage error.
  const CliRun csv_order = run("plan --order memory " + in.string());
  EXPECT_EQ(csv_order.exit_code, 2);
  EXPECT_NE(csv_order.err.find("apply to models"), std::string::npos) << csv_order.err;
}

TEST(PlanCommand, BadInputExitsWithOneAndOneLine) {
  testing::TempDir dir;
  const auto in = write_text(dir, "bad.csv", "id,lower,upper,size\nb1,0,3,4\nb2,3,nine,4\n");
  const CliRun r = run("plan " + in.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("footprint: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("bad.csv:3: column 3 (upper)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_EQ(run("plan " + (dir.path() / "missing.csv").string()).exit_code, 1);
}

}  // namespace
}  // namespace footprint
