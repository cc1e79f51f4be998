// `footprint conformance [FOLDER]... [--cases TEXT,...] [--timeout S] [-o FILE] [--json]
//  [--fail-on OUTCOME,...]`
//
// Runs ONNX's backend node tests (folders holding model.onnx and test_data_set_0) through the
// runtime, each case in a process of its own with a time limit, and reports per op how many
// cases pass, give a wrong value or figure, use an op without a kernel, carry test data footprint
// does not read, or fail otherwise (a crash or a hang included). Without a folder it runs
// Debian's libonnx-testdata.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"
#include "footprint/runtime/conformance.hpp"

namespace footprint::cli {
namespace {

constexpr const char* kDebianNodeTests = "/usr/share/libonnx-testdata/data/node";

struct ConformanceOptions {
  std::vector<std::string> folders;
  std::vector<std::string> cases;  // substrings of the case names to run; all when empty
  int timeout = 60;
  std::string output;
  bool json = false;
  std::vector<std::string> fail_on;  // outcomes that make the command exit 1 (CI)
};

bool wanted(const ConformanceOptions& o, const std::string& name) {
  if (o.cases.empty()) return true;
  for (const std::string& part : o.cases) {
    if (name.find(part) != std::string::npos) return true;
  }
  return false;
}

struct Suite {
  std::string folder;
  std::vector<runtime::CaseResult> results;
};

Suite run_suite(const ConformanceOptions& o, const std::string& folder) {
  Suite suite{folder, {}};
  std::vector<std::filesystem::path> cases;
  for (const auto& c : runtime::find_cases(folder)) {
    if (wanted(o, c.filename().string())) cases.push_back(c);
  }
  const bool progress = isatty(STDERR_FILENO) != 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (progress) {
      std::fprintf(stderr, "\rconformance: %zu/%zu %-60.60s", i + 1, cases.size(),
                   cases[i].filename().string().c_str());
    }
    suite.results.push_back(runtime::run_case_isolated(cases[i], std::chrono::seconds(o.timeout)));
  }
  if (progress) std::fprintf(stderr, "\r%90s\r", "");
  return suite;
}

nlohmann::json to_json(const std::vector<Suite>& suites) {
  nlohmann::json out = nlohmann::json::array();
  for (const Suite& s : suites) {
    nlohmann::json cases = nlohmann::json::array();
    for (const runtime::CaseResult& r : s.results) {
      cases.push_back({{"name", r.name},
                       {"outcome", std::string(runtime::outcome_name(r.outcome))},
                       {"reason", r.reason},
                       {"ops", r.ops}});
    }
    out.push_back({{"folder", s.folder}, {"cases", cases}});
  }
  return {{"suites", out}};
}

std::string to_markdown(const std::vector<Suite>& suites) {
  std::ostringstream out;
  for (const Suite& s : suites) {
    if (suites.size() > 1) out << "## " << s.folder << "\n\n";
    out << runtime::conformance_markdown(s.results) << "\n";
  }
  return out.str();
}

void run_conformance(ConformanceOptions o) {
  if (o.folders.empty()) {
    if (!std::filesystem::exists(kDebianNodeTests)) {
      throw UsageError(std::string("no folder given, and Debian's node tests are not at ") +
                       kDebianNodeTests +
                       " (apt-get install libonnx-testdata, or name a folder of test_* cases)");
    }
    o.folders.emplace_back(kDebianNodeTests);
  }
  // A report that could not be written is found before the cases run, not after.
  if (!o.output.empty()) check_writable(o.output);
  std::vector<Suite> suites;
  for (const std::string& folder : o.folders) {
    suites.push_back(run_suite(o, folder));
    const std::string summary = runtime::conformance_markdown(suites.back().results);
    std::fprintf(stderr, "conformance %s: %s\n", folder.c_str(),
                 summary.substr(0, summary.find('\n')).c_str());
  }
  const std::string text = o.json ? to_json(suites).dump(2) + "\n" : to_markdown(suites);
  if (o.output.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    write_output_file(o.output, [&](std::ostream& out) { out << text; });
  }
  // The report is written either way; the exit code says whether an outcome CI refuses occurred.
  size_t failing = 0;
  std::string first;
  for (const Suite& s : suites) {
    for (const runtime::CaseResult& r : s.results) {
      const std::string outcome(runtime::outcome_name(r.outcome));
      if (std::find(o.fail_on.begin(), o.fail_on.end(), outcome) == o.fail_on.end()) continue;
      if (failing++ == 0) first = r.name + " (" + outcome + ": " + r.reason + ")";
    }
  }
  if (failing > 0) {
    throw Error(std::to_string(failing) + " case(s) with an outcome --fail-on names, first " +
                first);
  }
}

}  // namespace

void add_conformance_command(CLI::App& app) {
  auto opts = std::make_shared<ConformanceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "conformance",
      "Run ONNX's backend node tests and count, per op, the cases that pass, give a wrong value "
      "or figure, use an op without a kernel, carry data footprint does not read, or fail.");
  cmd->add_option("FOLDER", opts->folders,
                  std::string("Folders of node tests (each case a folder with model.onnx and "
                              "test_data_set_0), or one case; default ") +
                      kDebianNodeTests);
  cmd->add_option("--cases", opts->cases,
                  "Run only the cases whose name holds one of these (comma-separated)")
      ->delimiter(',');
  cmd->add_option("--timeout", opts->timeout, "Seconds a case may take before it is killed")
      ->check(CLI::Range(1, 3600));
  cmd->add_option("-o,--output", opts->output, "Write the report here instead of stdout");
  cmd->add_flag("--json", opts->json, "Report every case as JSON instead of Markdown");
  cmd->add_option("--fail-on", opts->fail_on,
                  "Exit 1 (after writing the report) when a case has one of these outcomes: "
                  "wrong, \"no kernel\", \"data not read\", error (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"wrong", "no kernel", "data not read", "error"}));
  cmd->callback([opts] { run_conformance(*opts); });
}

}  // namespace footprint::cli
