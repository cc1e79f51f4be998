#include "footprint/runtime/conformance.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <map>
#include <sstream>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/lower_sequences.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/output_check.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/tensor.hpp"

namespace footprint::runtime {

namespace fs = std::filesystem;

std::string_view outcome_name(CaseOutcome o) {
  switch (o) {
    case CaseOutcome::pass:
      return "pass";
    case CaseOutcome::wrong:
      return "wrong";
    case CaseOutcome::no_kernel:
      return "no kernel";
    case CaseOutcome::no_data:
      return "data not read";
    case CaseOutcome::error:
      return "error";
  }
  return "error";
}

namespace {

// Every op of `g` and its subgraphs into `ops`; the first one `run` would refuse into `missing`.
void collect_ops(const graph::Graph& g, std::set<std::string>& ops, std::string& missing) {
  for (const graph::Node& n : g.nodes()) {
    const std::string op = n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type;
    ops.insert(op);
    if ((n.schema == nullptr || !is_executable(*n.schema)) && !graph::is_sequence_op(n) &&
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

// The values of stem_0.pb, stem_1.pb, ..., each file read as the model declares its value.
std::vector<Tensor> read_numbered(const fs::path& dir, const char* stem,
                                  const std::vector<DeclaredValue>& declared) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    const fs::path p = dir / (std::string(stem) + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return read_value_files(files, declared);
}

// What the run obtained against what the analysis predicted: the arena as planned, and the
// outputs as counted (at most the bound where extents depend on values). "" when they agree.
std::string memory_mismatch(const Session& session) {
  const PreparedStats& p = session.prepared();
  const RunStats& run = session.last_run();
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

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace

std::vector<fs::path> find_cases(const fs::path& root) {
  if (fs::exists(root / "model.onnx")) return {root};
  if (!fs::is_directory(root)) {
    throw Error(root.string() + ": not a folder of ONNX node tests (folders holding model.onnx)");
  }
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(root)) {
    if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

CaseResult run_case(const fs::path& dir) {
  CaseResult r;
  r.name = dir.filename().string();
  try {
    const graph::Model model = graph::load_model(dir / "model.onnx");
    const graph::Graph g = model.graph(op_registry());
    std::string missing;
    collect_ops(g, r.ops, missing);
    if (!missing.empty()) {
      r.outcome = CaseOutcome::no_kernel;
      r.reason = missing;
      return r;
    }
    const fs::path data = dir / "test_data_set_0";
    Session session(model);
    std::vector<DeclaredValue> declared_in, declared_out;
    for (const auto& in : session.inputs()) declared_in.push_back({in.name, in.not_a_tensor});
    for (const auto& out : session.outputs()) declared_out.push_back({out.name, out.not_a_tensor});
    std::vector<Tensor> inputs, want;
    try {
      inputs = read_numbered(data, "input", declared_in);
      want = read_numbered(data, "output", declared_out);
    } catch (const Error& e) {
      r.outcome = CaseOutcome::no_data;
      r.reason = std::string("test data footprint cannot hold: ") + one_line(e.what());
      return r;
    }
    const std::vector<Tensor> got = session.run(inputs);
    const OutputCheck c = check_outputs(got, want, 1e-3, 1e-5);
    r.reason = c.match ? memory_mismatch(session) : c.problem;
    r.outcome = r.reason.empty() ? CaseOutcome::pass : CaseOutcome::wrong;
  } catch (const std::exception& e) {
    r.outcome = CaseOutcome::error;
    r.reason = e.what();
  }
  r.reason = one_line(r.reason);
  return r;
}

namespace {

// Reads the child's report until it closes the pipe, or the deadline passes (false).
bool read_until(int fd, std::string& text, std::chrono::steady_clock::time_point deadline) {
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return true;
    text.append(buf, static_cast<size_t>(n));
  }
}

void write_all(int fd, const std::string& msg) {
  const char* p = msg.data();
  size_t left = msg.size();
  while (left > 0) {
    const ssize_t n = write(fd, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

CaseResult run_case_isolated(const fs::path& dir, std::chrono::seconds limit) {
  int fds[2];
  if (pipe(fds) != 0) return run_case(dir);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return run_case(dir);
  }
  if (pid == 0) {
    close(fds[0]);
    const CaseResult r = run_case(dir);
    std::string msg = std::to_string(static_cast<int>(r.outcome)) + "\n" + r.reason + "\n";
    for (const std::string& op : r.ops) msg += op + "\n";
    write_all(fds[1], msg);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  const bool finished = read_until(fds[0], text, std::chrono::steady_clock::now() + limit);
  close(fds[0]);
  if (!finished) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  CaseResult r;
  r.name = dir.filename().string();
  if (!finished) {
    r.reason = "did not finish in " + std::to_string(limit.count()) + " s (killed)";
    return r;
  }
  if (!WIFEXITED(status) || text.empty()) {
    r.reason = WIFSIGNALED(status) ? std::string("crashed: ") + strsignal(WTERMSIG(status))
                                   : "the case's process ended without a result";
    return r;
  }
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  r.outcome = static_cast<CaseOutcome>(std::stoi(line));
  std::getline(in, r.reason);
  while (std::getline(in, line)) r.ops.insert(line);
  return r;
}

std::string conformance_markdown(const std::vector<CaseResult>& results) {
  constexpr size_t kOutcomes = 5;
  std::map<std::string, std::array<int, kOutcomes>> per_op;
  std::array<int, kOutcomes> total{};
  for (const CaseResult& r : results) {
    ++total[static_cast<size_t>(r.outcome)];
    for (const std::string& op : r.ops) ++per_op[op][static_cast<size_t>(r.outcome)];
  }
  std::ostringstream out;
  out << results.size() << " cases:";
  for (size_t o = 0; o < kOutcomes; ++o) {
    out << (o == 0 ? " " : ", ") << total[o] << " " << outcome_name(static_cast<CaseOutcome>(o));
  }
  out << ".\n\n| op | pass | wrong | no kernel | data not read | error |\n"
      << "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& [op, t] : per_op) {
    out << "| " << op;
    for (const int n : t) out << " | " << n;
    out << " |\n";
  }
  for (const CaseOutcome o :
       {CaseOutcome::wrong, CaseOutcome::error, CaseOutcome::no_kernel, CaseOutcome::no_data}) {
    if (total[static_cast<size_t>(o)] == 0) continue;
    std::string title(outcome_name(o));
    title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
    out << "\n" << title << ":\n\n";
    for (const CaseResult& r : results) {
      if (r.outcome == o) out << "- `" << r.name << "`: " << r.reason << "\n";
    }
  }
  return out.str();
}

}  // namespace footprint::runtime
