// `footprint info` as a user runs it: exit codes, the JSON contract, one-line errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

TEST(InfoCommand, JsonFollowsTheContract) {
  const CliRun r = run(std::string("info --json ") + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"model", "ir_version", "opsets", "graph_inputs", "graph_outputs", "nodes",
                          "initializers", "weight_bytes", "ops"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["nodes"], 6);
  EXPECT_EQ(j["initializers"], 4);
  EXPECT_EQ(j["weight_bytes"], (36 + 4 + 640 + 10) * 4);
  EXPECT_EQ(j["ops"]["Conv"], 1);
  EXPECT_EQ(j["opsets"]["ai.onnx"], 13);
  EXPECT_EQ(j["graph_inputs"][0]["name"], "x");
  EXPECT_EQ(j["graph_inputs"][0]["shape"], nlohmann::json::parse(R"(["N",1,8,8])"));
  EXPECT_EQ(j["weights"]["mapped_bytes"], j["weight_bytes"]);
}

TEST(InfoCommand, TextOutputNamesInputsAndOps) {
  const CliRun r = run(std::string("info ") + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("float[N,1,8,8]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Softmax"), std::string::npos);
  EXPECT_NE(r.out.find("mapped 2.7 KiB"), std::string::npos) << r.out;
}

TEST(InfoCommand, ReadLoadCountsWeightsAsHeap) {
  const CliRun r = run(std::string("info --json --load read ") + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["weights"]["heap_bytes"], j["weight_bytes"]);
}

TEST(InfoCommand, BadUsageExitsWithTwo) {
  EXPECT_EQ(run("info").exit_code, 2);
  EXPECT_EQ(run("frobnicate").exit_code, 2);
  EXPECT_EQ(run(std::string("info --load carrier-pigeon ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  const CliRun help = run("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("info"), std::string::npos);
}

TEST(InfoCommand, BadModelExitsWithOneAndOneLine) {
  testing::TempDir dir;
  const auto whole = testing::read_file(FOOTPRINT_EXAMPLE_MODEL);
  const std::vector<std::byte> bytes(whole.begin(), whole.end() - 100);
  testing::write_file(dir.path() / "cut.onnx", bytes);
  const CliRun r = run("info " + (dir.path() / "cut.onnx").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("footprint: error: " + (dir.path() / "cut.onnx").string() + ": offset ", 0),
            0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(run("info /nonexistent.onnx").exit_code, 1);
}

}  // namespace
}  // namespace footprint
