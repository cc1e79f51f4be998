// `footprint fit` as a user runs it: the answer agrees with `analyze` at it and one above, the
// budget's units, and the errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace footprint {
namespace {

uint64_t total_peak_at(int64_t n) {
  const CliRun r =
      run("analyze --json --dim N=" + std::to_string(n) + " " + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out)["bytes"]["total_peak"].get<uint64_t>();
}

TEST(FitCommand, TheAnswerFitsAndOneMoreDoesNot) {
  const uint64_t budget = total_peak_at(37);  // the example model's peak grows with N
  const CliRun r = run("fit --json --budget " + std::to_string(budget) + " --solve N " +
                       FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const int64_t n = j["largest"];
  EXPECT_GE(n, 37);
  EXPECT_EQ(j["bytes_at_largest"], total_peak_at(n));
  EXPECT_LE(j["bytes_at_largest"].get<uint64_t>(), budget);
  EXPECT_EQ(j["above"], n + 1);
  EXPECT_EQ(j["bytes_above"], total_peak_at(n + 1));
  EXPECT_GT(j["bytes_above"].get<uint64_t>(), budget);
  EXPECT_EQ(j["figure"], "total peak");
  EXPECT_LT(j["probes"].size(), 30u);

  const CliRun text =
      run("fit --budget 1MiB --solve N --figure arena " + std::string(FOOTPRINT_EXAMPLE_MODEL));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("budget       1048576 B (1.0 MiB) for the arena lower bound"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("over the budget"), std::string::npos) << text.out;
}

TEST(FitCommand, BadUsageAndNothingFits) {
  const std::string model = FOOTPRINT_EXAMPLE_MODEL;
  for (const char* budget : {"'64 parsecs'", "-1", "1.3B", "MiB", "1e6", "64mb", "'64 '"}) {
    const CliRun r = run("fit --budget " + std::string(budget) + " --solve N " + model);
    EXPECT_EQ(r.exit_code, 2) << budget << ": " << r.err;
    EXPECT_NE(r.err.find("is not a byte count"), std::string::npos) << r.err;
  }
  EXPECT_EQ(run("fit --budget 1.5KiB --solve N --dim N=2 " + model).exit_code, 2);
  // SI units are powers of 1000, as a card's "24 GB" is; the IEC ones powers of 1024.
  for (const auto& [budget, bytes] :
       {std::pair{"'64 MB'", "64000000 B"}, std::pair{"0.5GB", "500000000 B"},
        std::pair{"'2 GiB'", "2147483648 B"}}) {
    const CliRun si = run("fit --budget " + std::string(budget) + " --solve N " + model);
    EXPECT_EQ(si.exit_code, 0) << budget << ": " << si.err;
    EXPECT_NE(si.out.find("budget       " + std::string(bytes)), std::string::npos) << si.out;
  }
  EXPECT_EQ(run("fit --budget 1GiB " + model).exit_code, 2) << "--solve is required";
  const CliRun stranger = run("fit --budget 1GiB --solve seq " + model);
  EXPECT_EQ(stranger.exit_code, 2) << stranger.err;
  EXPECT_NE(stranger.err.find("--solve seq: no input of the model has a dim of that name (it "
                              "names N)"),
            std::string::npos)
      << stranger.err;
  const CliRun none = run("fit --budget 100 --solve N " + model);
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.out.find("fit          none: at N=1 the total peak is already"), std::string::npos)
      << none.out;
}

}  // namespace
}  // namespace footprint
