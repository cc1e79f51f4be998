// The ONNX operator conformance suite (Debian libonnx-testdata, data/node/test_*): every case
// whose ops all have kernels runs through runtime::Session and must match its expected outputs
// (rtol 1e-3, atol 1e-5). Failures must be listed, with their reason, in
// conformance_known_failures.txt; at least 95% of the runnable cases must pass.
//
// FOOTPRINT_CONFORMANCE_REPORT=FILE writes the per-op table (bench/conformance_report.sh puts it
// into docs/CONFORMANCE.md).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/lower_sequences.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/output_check.hpp"
#include "footprint/runtime/session.hpp"

namespace fs = std::filesystem;
using namespace footprint;

namespace {

enum class Outcome { pass, fail, skip };

struct CaseResult {
  std::string name;
  Outcome outcome = Outcome::skip;
  std::string reason;
  std::set<std::string> ops;
};

void collect_ops(const graph::Graph& g, std::set<std::string>& ops, std::string& missing) {
  for (const graph::Node& n : g.nodes()) {
    const std::string op = n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type;
    ops.insert(op);
    if ((n.schema == nullptr || !runtime::is_executable(*n.schema)) && !graph::is_sequence_op(n) &&
        missing.empty()) {
      missing = "no kernel for " + op;
    }
    // A dtype the row declares its kernel does not run: refused before running, as `analyze`
    // warns, so the case is one footprint does not run rather than one it gets wrong.
    if (const auto t = n.schema != nullptr ? graph::dtype_refused(g, n) : std::nullopt;
        t && missing.empty()) {
      missing = op + " does not run " + std::string(dtype_name(*t));
    }
    for (const graph::Subgraph& s : n.subgraphs) collect_ops(*s.graph, ops, missing);
  }
}

// The tensors of stem_0.pb, stem_1.pb, ..., each file read as the model declares its value.
std::vector<runtime::Tensor> read_numbered(const fs::path& dir, const char* stem,
                                           const std::vector<runtime::DeclaredValue>& declared) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    const fs::path p = dir / (std::string(stem) + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return runtime::read_value_files(files, declared);
}

// What the run obtained against what the analysis predicted: the arena as planned, and the
// outputs as counted (at most the bound where extents depend on values). "" when they agree.
std::string memory_mismatch(const runtime::Session& session) {
  const runtime::PreparedStats& p = session.prepared();
  const runtime::RunStats& run = session.last_run();
  if (run.arena_bytes != p.planned_arena_bytes) {
    return "the run obtained an arena of " + std::to_string(run.arena_bytes) + " B, planned " +
           std::to_string(p.planned_arena_bytes) + " B";
  }
  const bool bounded = p.bounded_values > 0;
  if (bounded ? run.output_bytes > p.outputs_bytes : run.output_bytes != p.outputs_bytes) {
    return "the run returned " + std::to_string(run.output_bytes) + " B of outputs, predicted " +
           (bounded ? "at most " : "") + std::to_string(p.outputs_bytes) + " B";
  }
  return "";
}

CaseResult run_case(const fs::path& dir) {
  CaseResult r;
  r.name = dir.filename().string();
  try {
    const graph::Model model = graph::load_model(dir / "model.onnx");
    const graph::Graph g = model.graph(runtime::op_registry());
    std::string missing;
    collect_ops(g, r.ops, missing);
    if (!missing.empty()) {
      r.reason = missing;
      return r;
    }
    const fs::path data = dir / "test_data_set_0";
    std::vector<runtime::Tensor> inputs;
    std::vector<runtime::Tensor> want;
    runtime::Session session(model);
    std::vector<runtime::DeclaredValue> declared_in, declared_out;
    for (const auto& in : session.inputs()) declared_in.push_back({in.name, in.not_a_tensor});
    for (const auto& out : session.outputs()) declared_out.push_back({out.name, out.not_a_tensor});
    try {
      inputs = read_numbered(data, "input", declared_in);
      want = read_numbered(data, "output", declared_out);
    } catch (const Error& e) {
      r.reason = std::string("test data footprint cannot hold: ") + e.what();
      return r;
    }
    const std::vector<runtime::Tensor> got = session.run(inputs);
    const runtime::OutputCheck c = runtime::check_outputs(got, want, 1e-3, 1e-5);
    r.outcome = c.match ? Outcome::pass : Outcome::fail;
    r.reason = c.problem;
    if (c.match) r.reason = memory_mismatch(session);
    if (!r.reason.empty()) r.outcome = Outcome::fail;
  } catch (const std::exception& e) {
    r.outcome = Outcome::fail;
    r.reason = e.what();
  }
  return r;
}

// Runs the case in a child process, so a kernel that crashes fails its case, not the suite.
CaseResult run_case_isolated(const fs::path& dir) {
  int fds[2];
  if (pipe(fds) != 0) return run_case(dir);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const CaseResult r = run_case(dir);
    std::string msg = std::to_string(static_cast<int>(r.outcome)) + "\n" + r.reason + "\n";
    for (const std::string& op : r.ops) msg += op + "\n";
    const char* p = msg.data();
    size_t left = msg.size();
    while (left > 0) {
      const ssize_t n = write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t n = 0;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CaseResult r;
  r.name = dir.filename().string();
  if (!WIFEXITED(status) || text.empty()) {
    r.outcome = Outcome::fail;
    r.reason = WIFSIGNALED(status) ? std::string("crashed: ") + strsignal(WTERMSIG(status))
                                   : "the case's process ended without a result";
    return r;
  }
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  r.outcome = static_cast<Outcome>(std::stoi(line));
  std::getline(in, r.reason);
  while (std::getline(in, line)) r.ops.insert(line);
  return r;
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

void write_report(const std::vector<CaseResult>& results, const fs::path& file) {
  struct Tally {
    int pass = 0, fail = 0, skip = 0;
  };
  std::map<std::string, Tally> per_op;
  for (const CaseResult& r : results) {
    for (const std::string& op : r.ops) {
      Tally& t = per_op[op];
      (r.outcome == Outcome::pass ? t.pass : r.outcome == Outcome::fail ? t.fail : t.skip)++;
    }
  }
  std::ofstream out(file);
  out << "| op | pass | fail | skip |\n| --- | ---: | ---: | ---: |\n";
  for (const auto& [op, t] : per_op) {
    out << "| " << op << " | " << t.pass << " | " << t.fail << " | " << t.skip << " |\n";
  }
  out << "\nFailures:\n\n";
  for (const CaseResult& r : results) {
    if (r.outcome == Outcome::fail) out << "- `" << r.name << "`: " << r.reason << "\n";
  }
  out << "\nSkipped (an op without a kernel, or test data footprint cannot hold):\n\n";
  for (const CaseResult& r : results) {
    if (r.outcome == Outcome::skip) out << "- `" << r.name << "`: " << r.reason << "\n";
  }
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
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(suite.root)) {
    if (fs::exists(e.path() / "model.onnx") && suite.takes(e.path().filename().string())) {
      cases.push_back(e.path());
    }
  }
  std::sort(cases.begin(), cases.end());
  std::vector<CaseResult> results;
  results.reserve(cases.size());
  for (const fs::path& c : cases) results.push_back(run_case_isolated(c));

  const auto known = known_failures(suite.known_failures);
  int pass = 0, fail = 0, skip = 0;
  for (const CaseResult& r : results) {
    if (r.outcome == Outcome::pass) ++pass;
    if (r.outcome == Outcome::skip) ++skip;
    if (r.outcome != Outcome::fail) continue;
    ++fail;
    EXPECT_TRUE(known.count(r.name))
        << r.name << " fails and is not in " << suite.known_failures << ": " << r.reason;
  }
  for (const auto& entry : known) {
    const std::string& name = entry.first;  // (a structured binding no lambda may capture)
    const auto it = std::find_if(results.begin(), results.end(),
                                 [&](const CaseResult& r) { return r.name == name; });
    if (it != results.end() && it->outcome == Outcome::pass) {
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
  const auto results =
      run_suite({root, [](const std::string&) { return true; }, "conformance_known_failures.txt"});
  if (const char* report = std::getenv("FOOTPRINT_CONFORMANCE_REPORT"))
    write_report(results, report);
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
  for (const CaseResult& r : results) pass += r.outcome == Outcome::pass ? 1 : 0;
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
  if (const char* report = std::getenv("FOOTPRINT_NEWER_CONFORMANCE_REPORT")) {
    write_report(results, report);
  }
}
