#pragma once
// ONNX's backend node tests run through the runtime: the cases of a folder (each a model.onnx
// beside test_data_set_0/{input,output}_N.pb), each in a child process of its own with a time
// limit, so a crash or a hang is one case's error, not the end of the run.
//
//   for (const auto& c : find_cases("/usr/share/libonnx-testdata/data/node"))
//     results.push_back(run_case_isolated(c, std::chrono::seconds(60)));
//   std::cout << conformance_markdown(results);
//
// `footprint conformance` (src/cli) and tests/runtime/conformance_test.cpp both run this.
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace footprint::runtime {

enum class CaseOutcome {
  pass,       // ran; outputs matched, predicted outputs and arena equal what the run had
  wrong,      // ran; an output differs, or a figure the analysis predicted is not the run's
  no_kernel,  // an op without a kernel, or a dtype its kernel declares it does not run
  no_data,    // test data footprint does not read (a map, a string tensor)
  error,      // refused or failed otherwise (an error, a crash, a hang)
};
std::string_view outcome_name(CaseOutcome o);

struct CaseResult {
  std::string name;  // the case's folder name (test_abs)
  CaseOutcome outcome = CaseOutcome::error;
  std::string reason;         // why it is not a pass; "" for a pass
  std::set<std::string> ops;  // "Abs", "com.microsoft::Gelu": every op of the model
};

// The case folders under `root` (folders holding a model.onnx), sorted by name; `root` itself
// when it is one.
std::vector<std::filesystem::path> find_cases(const std::filesystem::path& root);

// One case in this process (rtol 1e-3, atol 1e-5, as ONNX's backend tests use).
CaseResult run_case(const std::filesystem::path& dir);

// One case in a child process, killed after `limit`: a signal or the limit is an error naming it.
CaseResult run_case_isolated(const std::filesystem::path& dir, std::chrono::seconds limit);

// Per op, the cases of each outcome, then the cases that did not pass with their reasons.
std::string conformance_markdown(const std::vector<CaseResult>& results);

}  // namespace footprint::runtime
