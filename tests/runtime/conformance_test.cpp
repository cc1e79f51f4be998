// The ONNX operator conformance suite (Debian libonnx-testdata, data/node/test_*): every case
// whose ops all have kernels runs through runtime::Session and must match its expected outputs
// (rtol 1e-3, atol 1e-5). Failures must be listed, with their reason, in
// conformance_known_failures.txt; at least 95% of the runnable cases must pass.
//
// The cases run as `footprint conformance` runs them (runtime/conformance.hpp), whose report
// bench/conformance_report.sh puts into docs/CONFORMANCE.md.
#include "footprint/runtime/conformance.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace footprint;

namespace {

using runtime::CaseOutcome;
using runtime::CaseResult;

// A case the runtime does not run (an op without a kernel, test data it does not read) is
// skipped; a wrong value or figure, or an error, fails it.
bool skipped(const CaseResult& r) {
  return r.outcome == CaseOutcome::no_kernel || r.outcome == CaseOutcome::no_data;
}
bool failed(const CaseResult& r) {
  return r.outcome == CaseOutcome::wrong || r.outcome == CaseOutcome::error;
}

std::map<std::string, std::string> known_failures(const char* file) {
  std::map<std::string, std::string> out;
  std::ifstream in(fs::path(FOOTPRINT_SOURCE_DIR) / "tests/runtime" / file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.find(' ');
    out[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
  }
  return out;
}

struct Suite {
  fs::path root;                                  // the folder of test_* cases
  std::function<bool(const std::string&)> takes;  // which cases, by name
  const char* known_failures;                     // beside this file
  double min_pass = 0.95;                         // of the runnable cases
};

// Runs every case of the suite in a process of its own; each failure must be a known one, each
// known one must still fail, and at least min_pass of the runnable cases must pass.
std::vector<CaseResult> run_suite(const Suite& suite) {
  std::vector<CaseResult> results;
  for (const fs::path& c : runtime::find_cases(suite.root)) {
    if (suite.takes(c.filename().string()))
      results.push_back(runtime::run_case_isolated(c, std::chrono::seconds(120)));
  }

  const auto known = known_failures(suite.known_failures);
  int pass = 0, fail = 0, skip = 0;
  for (const CaseResult& r : results) {
    if (r.outcome == CaseOutcome::pass) ++pass;
    if (skipped(r)) ++skip;
    if (!failed(r)) continue;
    ++fail;
    EXPECT_TRUE(known.count(r.name))
        << r.name << " fails and is not in " << suite.known_failures << ": " << r.reason;
  }
  for (const auto& entry : known) {
    const std::string& name = entry.first;  // (a structured binding no lambda may capture)
    const auto it = std::find_if(results.begin(), results.end(),
                                 [&](const CaseResult& r) { return r.name == name; });
    if (it != results.end() && it->outcome == CaseOutcome::pass) {
      ADD_FAILURE() << name << " passes now: remove it from " << suite.known_failures;
    }
  }
  std::printf(
      "conformance (%s): %d pass, %d fail, %d skip of %zu cases (%.1f%% of runnable pass)\n",
      suite.root.string().c_str(), pass, fail, skip, results.size(),
      100.0 * pass / std::max(1, pass + fail));
  EXPECT_GE(pass, suite.min_pass * (pass + fail))
      << "under " << 100 * suite.min_pass << "% of the runnable cases pass";
  return results;
}

}  // namespace

TEST(Conformance, RegisteredOpsPassTheOnnxNodeTests) {
  const fs::path root = fs::path(FOOTPRINT_ONNX_TESTDATA) / "node";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent (Debian package libonnx-testdata)";
  run_suite({root, [](const std::string&) { return true; }, "conformance_known_failures.txt"});
}

// Debian's models of sequence ops with tensor inputs and outputs (data/simple/test_sequence_model*:
// SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceErase, SequenceAt, SequenceLength,
// SplitToSequence and ConcatFromSequence, lowered to their tensors by graph::lower_sequences):
// every one passes.
TEST(Conformance, SequenceModelsPassTheirCases) {
  const fs::path root = fs::path(FOOTPRINT_ONNX_TESTDATA) / "simple";
  if (!fs::exists(root)) GTEST_SKIP() << root << " is absent (Debian package libonnx-testdata)";
  const auto results = run_suite({root,
                                  [](const std::string& name) {
                                    return name.find("test_sequence_model") != std::string::npos;
                                  },
                                  "conformance_known_failures.txt", 1.0});
  size_t pass = 0;
  for (const CaseResult& r : results) pass += r.outcome == CaseOutcome::pass ? 1 : 0;
  EXPECT_EQ(pass, 8U) << "of Debian's 8 sequence models";
}

// The quantization ops' cases of a newer ONNX than Debian's (opsets 19 to 25: blocked scales,
// the 4-bit and 16-bit types, float8 and float4), from PyPI's onnx wheel, which
// tests/quant_zoo/node_tests.sh unpacks; FOOTPRINT_ONNX_NODE_TESTS names the folder.
namespace {

// The folder of the newer onnx's node tests (FOOTPRINT_ONNX_NODE_TESTS), or null.
const char* newer_node_tests() {
  const char* dir = std::getenv("FOOTPRINT_ONNX_NODE_TESTS");
  return dir != nullptr && fs::exists(dir) ? dir : nullptr;
}
constexpr const char* kNoNewerNodeTests =
    "FOOTPRINT_ONNX_NODE_TESTS names no folder (tests/quant_zoo/node_tests.sh makes one; "
    "scripts/test runs this with it)";

// The cases whose folder name holds one of `parts`.
std::function<bool(const std::string&)> named(std::vector<std::string> parts) {
  return [parts = std::move(parts)](const std::string& name) {
    return std::any_of(parts.begin(), parts.end(),
                       [&](const std::string& p) { return name.find(p) != std::string::npos; });
  };
}

}  // namespace

TEST(Conformance, QuantizationOpsPassTheNewerOnnxNodeTests) {
  const char* dir = newer_node_tests();
  if (dir == nullptr) GTEST_SKIP() << kNoNewerNodeTests;
  // Of its 33 runnable cases, QLinearMatMul's four int8 ones (float32 and float16 scales) carry
  // data that wraps where the spec and onnxruntime saturate (known failures, with the reason).
  const auto results = run_suite(
      {dir,
       named({"quantizelinear", "dequantizelinear", "qlinear", "matmulinteger", "convinteger"}),
       "conformance_newer_known_failures.txt", 0.85});
  EXPECT_GT(results.size(), 20U) << "too few quantization cases in " << dir;
}

// Opset 23's RMSNormalization, RotaryEmbedding and Attention, from the same folder: each case as
// the op, and as ONNX's function of it expanded into the ops it is made of (the _expanded cases).
TEST(Conformance, Opset23OpsPassTheNewerOnnxNodeTests) {
  const char* dir = newer_node_tests();
  if (dir == nullptr) GTEST_SKIP() << kNoNewerNodeTests;
  const auto opset23 = named({"rms_normalization", "rotary_embedding", "test_attention"});
  // 10 of onnx 1.20.1's 62 Attention cases encode its reading of softcap and
  // qk_matmul_output_mode, since corrected by ONNX (known failures, each with its reason): 94%.
  const auto results = run_suite({dir, opset23, "conformance_newer_known_failures.txt", 0.94});
  EXPECT_GE(results.size(), 178U) << "too few RMSNormalization, RotaryEmbedding and Attention "
                                     "cases in "
                                  << dir;
}

// Every case of the same folder: each op at the newest opset onnx 1.20.1 writes, as the exporters
// of 2026 do. A case whose op has no kernel, or whose dtype its row declares it does not run, is
// skipped (counted in the report); every other one passes or is a known failure with its reason.
TEST(Conformance, EveryOpPassesTheNewerOnnxNodeTests) {
  const char* dir = newer_node_tests();
  if (dir == nullptr) GTEST_SKIP() << kNoNewerNodeTests;
  const auto results = run_suite(
      {dir, [](const std::string&) { return true; }, "conformance_newer_known_failures.txt", 0.9});
  EXPECT_GE(results.size(), 1600U) << "too few cases in " << dir;
}
