// `footprint conformance` as a user runs it: ONNX's node tests counted per op and outcome, each
// case in a process of its own, the report on stdout or in a file, one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

namespace fs = std::filesystem;

const fs::path kNodeTests = fs::path(FOOTPRINT_ONNX_TESTDATA) / "node";

// A suite of five of Debian's cases, one per outcome: test_abs passes; test_abs again with
// test_neg's expected output is wrong; Adagrad has no kernel; a string output is data footprint
// does not read; a Scan of opset 8 is refused (an error).
fs::path make_suite(const testing::TempDir& dir) {
  fs::path suite = dir.path() / "suite";
  const auto copy = [&](const std::string& from, const std::string& to) {
    fs::copy(kNodeTests / from, suite / to, fs::copy_options::recursive);
  };
  fs::create_directories(suite);
  copy("test_abs", "test_abs");
  copy("test_abs", "test_abs_wrong");
  fs::copy_file(kNodeTests / "test_neg/test_data_set_0/output_0.pb",
                suite / "test_abs_wrong/test_data_set_0/output_0.pb",
                fs::copy_options::overwrite_existing);
  copy("test_adagrad", "test_adagrad");
  copy("test_cast_FLOAT_to_STRING", "test_cast_FLOAT_to_STRING");
  copy("test_scan_sum", "test_scan_sum");
  return suite;
}

TEST(ConformanceCommand, CountsEachOutcomePerOp) {
  if (!fs::exists(kNodeTests)) GTEST_SKIP() << kNodeTests << " is absent (libonnx-testdata)";
  testing::TempDir dir;
  const fs::path suite = make_suite(dir);
  const CliRun r = run("conformance " + suite.string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["suites"].size(), 1u);
  std::map<std::string, std::string> outcome;
  for (const auto& c : j["suites"][0]["cases"]) outcome[c["name"]] = c["outcome"];
  EXPECT_EQ(outcome["test_abs"], "pass");
  EXPECT_EQ(outcome["test_abs_wrong"], "wrong");
  EXPECT_EQ(outcome["test_adagrad"], "no kernel");
  EXPECT_EQ(outcome["test_cast_FLOAT_to_STRING"], "data not read");
  EXPECT_EQ(outcome["test_scan_sum"], "error");
  EXPECT_NE(r.err.find("5 cases: 1 pass, 1 wrong, 1 no kernel, 1 data not read, 1 error"),
            std::string::npos)
      << r.err;

  // Markdown into a file: the per-op table and every case that did not pass, with its reason.
  const fs::path report = dir.path() / "conformance.md";
  const CliRun m = run("conformance " + suite.string() + " -o " + report.string());
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_TRUE(m.out.empty()) << "the report goes to the file";
  const auto bytes = testing::read_file(report);
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_NE(text.find("| Abs | 1 | 1 | 0 | 0 | 0 |"), std::string::npos) << text;
  EXPECT_NE(text.find("- `test_adagrad`: no kernel for ai.onnx.preview.training::Adagrad"),
            std::string::npos)
      << text;

  // --cases picks cases by name.
  const CliRun one = run("conformance " + suite.string() + " --cases adagrad --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(one.out)["suites"][0]["cases"].size(), 1u);
}

// --fail-on: the report is written, and the exit code says whether a case had such an outcome.
TEST(ConformanceCommand, FailOnNamesTheFirstCaseWithAnOutcomeCIRefuses) {
  if (!fs::exists(kNodeTests)) GTEST_SKIP() << kNodeTests << " is absent (libonnx-testdata)";
  testing::TempDir dir;
  const fs::path suite = make_suite(dir);
  const CliRun wrong = run("conformance " + suite.string() + " --fail-on wrong,error --json");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_FALSE(wrong.out.empty()) << "the report is printed first";
  EXPECT_NE(wrong.err.find("2 case(s) with an outcome --fail-on names, first test_abs_wrong"),
            std::string::npos)
      << wrong.err;
  const CliRun ok = run("conformance " + suite.string() + " --cases test_abs --fail-on error");
  EXPECT_EQ(ok.exit_code, 0) << "test_abs and test_abs_wrong: a wrong value is not an error";
  const CliRun pass =
      run("conformance " + (suite / "test_abs").string() + " --fail-on wrong,error");
  EXPECT_EQ(pass.exit_code, 0) << pass.err;
  const CliRun bad = run("conformance " + suite.string() + " --fail-on pass");
  EXPECT_EQ(bad.exit_code, 2) << "pass is no outcome to fail on";
}

TEST(ConformanceCommand, AFolderWithoutCasesIsAnErrorNamingIt) {
  testing::TempDir dir;
  const CliRun r = run("conformance " + (dir.path() / "nothing").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a folder of ONNX node tests"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace footprint
