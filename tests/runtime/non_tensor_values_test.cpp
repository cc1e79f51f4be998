// Models whose inputs are sequences or optionals (the ONNX node tests of SequenceInsert,
// OptionalHasElement and Identity, Debian's libonnx-testdata): footprint reads a SequenceProto or
// OptionalProto as the tensors it holds, which a run takes and returns in their place
// (graph::lower_sequences); where none are given it says so in one line naming the input and what
// it is declared, rather than reading a SequenceProto as a tensor of absurd extents or making up
// a length.
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

// Run with the test's own data, each runs and matches its expected outputs (a sequence given and
// returned as its elements); without data, run refuses to make one up and analyze asks for its
// elements, each in one line naming the input and what it is declared.
TEST(NonTensorValues, RunGivenTheirElementsAndNameWhatIsMissingOtherwise) {
  const struct {
    const char* test;
    const char* run_says;
    const char* analyze_says;
  } cases[] = {
      {"test_sequence_insert_at_back",
       "input 'sequence' is declared a sequence, of no length a random input could take; give it "
       "with --data-dir, or with --input 'sequence[0]=FILE.pb' per element",
       "(SequenceInsert): reads 'sequence', an input of graph 'test_sequence_insert_at_back' "
       "declared a sequence"},
      {"test_optional_has_element",
       "input 'optional_input' is declared an optional, which a random input would have to guess "
       "holds a tensor or not",
       "(OptionalHasElement): reads 'optional_input', an input of graph "
       "'test_optional_has_element' declared an optional"},
      {"test_identity_sequence", "input 'x' is declared a sequence",
       "'x' is declared seq(float[?]): footprint sizes a sequence or an optional by the tensors it "
       "holds"},
  };
  for (const auto& c : cases) {
    const fs::path dir = node_test(c.test);
    if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << dir << " is absent (libonnx-testdata)";
    const std::string model = (dir / "model.onnx").string();
    const CliRun given =
        run("run --repeat 1 --data-dir " + (dir / "test_data_set_0").string() + " " + model);
    EXPECT_EQ(given.exit_code, 0) << given.err;
    EXPECT_NE(given.out.find("match        yes"), std::string::npos) << given.out;
    const CliRun r = run("run --repeat 1 " + model);
    EXPECT_NE(r.exit_code, 0) << model;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(c.run_says), std::string::npos) << r.err;
    const CliRun a = run("analyze " + model);
    EXPECT_EQ(a.exit_code, 1);
    EXPECT_TRUE(one_line(a.err)) << a.err;
    EXPECT_NE(a.err.find(c.analyze_says), std::string::npos) << a.err;
    const CliRun sized =
        run("analyze --data-dir " + (dir / "test_data_set_0").string() + " " + model);
    EXPECT_EQ(sized.exit_code, 0) << sized.err;
  }
}

// A sequence output comes back as its elements, named "y[0]", "y[1]", ...
TEST(NonTensorValues, ASequenceOutputIsItsElements) {
  const fs::path dir = node_test("test_identity_sequence");
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << dir << " is absent (libonnx-testdata)";
  const CliRun r = run("run --repeat 1 --data-dir " + (dir / "test_data_set_0").string() + " " +
                       (dir / "model.onnx").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("output       y[0] float[1,1,2,2]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output       y[1] float[1,1,2,2]"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace footprint
