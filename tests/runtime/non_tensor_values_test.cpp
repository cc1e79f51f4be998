// Models whose inputs are sequences or optionals (the ONNX node tests of SequenceInsert and
// OptionalHasElement, Debian's libonnx-testdata): footprint takes tensors in and out of a graph
// (sequences a graph makes are lowered to their tensors), and says so in one line naming the input
// and what it is declared, rather than reading a SequenceProto as a tensor of absurd extents or
// asking for the extents of something that has none.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "cli/cli_runner.hpp"

namespace footprint {
namespace {

namespace fs = std::filesystem;

fs::path node_test(const std::string& name) {
  return fs::path(FOOTPRINT_ONNX_TESTDATA) / "node" / name;
}

bool one_line(const std::string& text) {
  return !text.empty() && std::count(text.begin(), text.end(), '\n') == 1;
}

TEST(NonTensorValues, RunAndAnalyzeNameTheInputAndItsKind) {
  const struct {
    const char* test;
    const char* run_says;
    const char* analyze_says;
  } cases[] = {
      {"test_sequence_insert_at_back", "input 'sequence' is declared a sequence",
       "(SequenceInsert): reads 'sequence', an input of graph 'test_sequence_insert_at_back' "
       "declared a sequence"},
      {"test_optional_has_element", "input 'optional_input' is declared an optional",
       "(OptionalHasElement): reads 'optional_input', an input of graph "
       "'test_optional_has_element' declared an optional"},
  };
  for (const auto& c : cases) {
    const fs::path dir = node_test(c.test);
    if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << dir << " is absent (libonnx-testdata)";
    const std::string model = (dir / "model.onnx").string();
    for (const std::string& args :
         {"run --repeat 1 --data-dir " + (dir / "test_data_set_0").string() + " " + model,
          "run --repeat 1 " + model}) {
      const CliRun r = run(args);
      EXPECT_EQ(r.exit_code, 1) << args;
      EXPECT_TRUE(one_line(r.err)) << r.err;
      EXPECT_NE(r.err.find(c.run_says), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("not supported yet"), std::string::npos) << r.err;
    }
    const CliRun a = run("analyze " + model);
    EXPECT_EQ(a.exit_code, 1);
    EXPECT_TRUE(one_line(a.err)) << a.err;
    EXPECT_NE(a.err.find(c.analyze_says), std::string::npos) << a.err;
  }
}

}  // namespace
}  // namespace footprint
