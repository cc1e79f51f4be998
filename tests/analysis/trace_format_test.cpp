// The JSON trace format (docs/TRACE_FORMAT.md) and the two seed traces that motivated it.
#include "footprint/analysis/trace_format.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "footprint/analysis/timeline.hpp"
#include "footprint/core/error.hpp"

namespace footprint::analysis {
namespace {

const std::filesystem::path kTraces =
    std::filesystem::path(FOOTPRINT_SOURCE_DIR) / "examples/traces";

// f(x, y, z) = x * y * z backward with its saved arguments in a list the callee clears: the
// correct figures are 96 bytes at the peak and 64 after (a popular estimator said 144 / 128,
// which are the figures of the tuple variant below).
TEST(SeedTraces, ListTheCalleeClears) {
  const Trace trace = read_trace_file(kTraces / "seed_mul_list.json");
  EXPECT_EQ(trace.program.inputs, InputsPolicy::donated);
  const Timeline t = simulate(trace.program);
  EXPECT_EQ(t.total_peak_bytes, 96u);
  EXPECT_EQ(t.after_bytes, 64u);
  EXPECT_EQ(t.inputs_bytes, 80u);
  EXPECT_EQ(t.outputs_bytes, 48u);
}

// The same backward with the arguments in a tuple the caller keeps: nothing the caller holds can
// be freed, so every step adds 16 bytes: 80 + 4 x 16 = 144 at the last step, and only t3 goes,
// leaving 128.
TEST(SeedTraces, TupleTheCallerKeeps) {
  const Trace trace = read_trace_file(kTraces / "seed_mul_tuple.json");
  EXPECT_EQ(trace.program.inputs, InputsPolicy::caller);
  const Timeline t = simulate(trace.program);
  EXPECT_EQ(t.total_peak_bytes, 144u);
  EXPECT_EQ(t.after_bytes, 128u);
  EXPECT_EQ(t.peak_step, 3);
  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_EQ(t.steps[0].total_bytes, 96u);
  EXPECT_EQ(t.steps[1].total_bytes, 112u);
  EXPECT_EQ(t.steps[2].total_bytes, 128u);
}

TEST(TraceFormat, SizesFromDtypeAndShapeOrBytes) {
  const Trace t = parse_trace(R"({
    "tensors": [{"name": "a", "dtype": "float16", "shape": [2, 3], "kind": "input"},
                {"name": "b", "bytes": 7, "kind": "output"},
                {"name": "v", "bytes": 0, "view_of": "a"}],
    "ops": [{"name": "op", "inputs": ["a"], "outputs": ["b"], "workspace": 5}]
  })",
                              "t.json");
  ASSERT_EQ(t.program.tensors.size(), 3u);
  EXPECT_EQ(t.program.tensors[0].bytes, 12u);
  EXPECT_EQ(t.program.tensors[1].bytes, 7u);
  EXPECT_EQ(t.program.tensors[2].view_of, 0);
  EXPECT_EQ(t.program.steps[0].workspace, 5u);
  EXPECT_FALSE(t.program.explicit_frees) << "no op frees anything: last-use semantics";
  EXPECT_EQ(t.program.inputs, InputsPolicy::caller) << "the default policy";
}

std::string trace_error(const std::string& text) {
  try {
    parse_trace(text, "bad.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A recorder's notes and phases (footprint.torch writes them): the note leads the reason a
// tensor is alive at the peak, the phase stays with its step, and old traces without them read
// as before (the seed traces above).
TEST(TraceFormat, NotesAndPhasesFromARecorder) {
  const Trace t = parse_trace(R"({
    "tensors": [{"name": "x", "bytes": 16, "kind": "input", "held": true},
                {"name": "a", "bytes": 32, "note": "saved for backward of MulBackward0"},
                {"name": "g", "bytes": 16, "kind": "output"}],
    "ops": [{"name": "a = x * x", "inputs": ["x"], "outputs": ["a"], "phase": "forward"},
            {"name": "g = a * 2", "inputs": ["a"], "outputs": ["g"], "phase": "backward",
             "module": "fc1", "line": "train.py:9", "free": ["a"]}]
  })",
                              "t.json");
  EXPECT_EQ(t.program.tensors[1].note, "saved for backward of MulBackward0");
  EXPECT_EQ(t.program.tensors[0].note, "");
  ASSERT_EQ(t.program.steps.size(), 2u);
  EXPECT_EQ(t.program.steps[0].phase, "forward");
  EXPECT_EQ(t.program.steps[1].phase, "backward");
  const Timeline tl = simulate(t.program);
  EXPECT_EQ(tl.total_peak_bytes, 64u);
  EXPECT_EQ(tl.peak_step, 1);
  const auto a = std::find_if(tl.alive_at_peak.begin(), tl.alive_at_peak.end(),
                              [](const AliveTensor& x) { return x.tensor == "a"; });
  ASSERT_NE(a, tl.alive_at_peak.end());
  EXPECT_EQ(a->why, "saved for backward of MulBackward0; read by this step");
  EXPECT_NE(trace_error(R"({"tensors": [], "ops": [{"phase": 3}]})")
                .find("bad.json: /ops/0/phase: must be a string"),
            std::string::npos);
}

TEST(TraceFormat, ErrorsNameTheFileAndThePath) {
  EXPECT_EQ(trace_error("{"), "bad.json: offset 2: invalid JSON");
  // A number no type holds is nlohmann's out_of_range, not a parse error (found by
  // fuzz/trace_csv_fuzz): still a one-line footprint::Error naming the file.
  EXPECT_EQ(trace_error(R"({"tensors": [], "ops": [], "x": 6e066666666})")
                .rfind("bad.json: invalid JSON (", 0),
            0u);
  EXPECT_EQ(trace_error(R"({"tensors": [], "ops": [{"inputs": ["nope"]}]})"),
            "bad.json: /ops/0/inputs/0: unknown tensor 'nope'");
  EXPECT_EQ(trace_error(R"({"tensors": [{"name": "a", "bytes": -1}], "ops": []})"),
            "bad.json: /tensors/0/bytes: must be a non-negative integer");
  EXPECT_EQ(trace_error(R"({"arguments": "borrowed", "tensors": [], "ops": []})"),
            "bad.json: /arguments: must be \"caller\" or \"donated\", not 'borrowed'");
  EXPECT_EQ(
      trace_error(
          R"({"tensors": [{"name": "a", "bytes": 1}, {"name": "a", "bytes": 1}], "ops": []})"),
      "bad.json: /tensors/1/name: 'a' is defined twice");
  EXPECT_EQ(
      trace_error(
          R"({"tensors": [{"name": "a", "dtype": "float", "shape": [4294967296, 4294967296, 4]}], "ops": []})"),
      "bad.json: /tensors/0/shape: the element count of 'a' overflows uint64");
}

// The reader streams (no JSON tree of a million ops): the members may come in any order, ops
// before the tensors they name included, and members the format does not have are skipped
// however deep they nest; what the format does not allow is an error naming its path.
TEST(TraceFormat, MembersInAnyOrderAndUnknownOnesSkipped) {
  const Trace t = parse_trace(R"J({
    "recorder": {"version": [1, {"deep": [[[]]]}], "ok": true},
    "ops": [{"name": "y = f(x)", "inputs": ["x"], "outputs": ["y"], "line": {"f": "a.py"},
             "free": []}],
    "tensors": [{"name": "x", "bytes": 8, "kind": "input", "extra": [null, 1.5]},
                {"name": "y", "dtype": "int8", "shape": [3], "kind": "output"}],
    "name": "streamed"
  })J",
                              "t.json");
  EXPECT_EQ(t.name, "streamed");
  ASSERT_EQ(t.program.tensors.size(), 2u);
  EXPECT_EQ(t.program.tensors[1].bytes, 3u);
  ASSERT_EQ(t.program.steps.size(), 1u);
  EXPECT_EQ(t.program.steps[0].inputs, (std::vector<int>{0}));
  EXPECT_EQ(t.program.steps[0].outputs, (std::vector<int>{1}));
  EXPECT_TRUE(t.program.explicit_frees) << "an op with \"free\" makes the frees explicit";
  EXPECT_EQ(simulate(t.program).total_peak_bytes, 11u);

  EXPECT_EQ(trace_error(R"({"ops": [{"inputs": ["nope"]}], "tensors": []})"),
            "bad.json: /ops/0/inputs/0: unknown tensor 'nope'");
  EXPECT_EQ(trace_error(R"([1, 2])"), "bad.json: /: a trace is a JSON object");
  EXPECT_EQ(trace_error(R"({"tensors": [], "tensors": [], "ops": []})"),
            "bad.json: /tensors: given twice");
  EXPECT_EQ(trace_error(R"({"tensors": [7], "ops": []})"),
            "bad.json: /tensors/0: a tensor is an object with a string \"name\"");
  EXPECT_EQ(trace_error(R"({"tensors": [{"name": "a", "shape": [2, -1], "dtype": "int8"}],
                            "ops": []})"),
            "bad.json: /tensors/0/shape/1: must be a non-negative integer");
  EXPECT_EQ(trace_error(R"({"tensors": [], "ops": [{"outputs": "y"}]})"),
            "bad.json: /ops/0/outputs: must be an array of tensor names");
  EXPECT_EQ(trace_error(R"({"tensors": [], "ops": [{"inputs": [{"x": 1}]}]})"),
            "bad.json: /ops/0/inputs/0: must be a tensor name");
  EXPECT_EQ(trace_error(R"({"tensors": {}, "ops": []})"),
            "bad.json: /tensors: an array of tensors is required");
  EXPECT_EQ(trace_error(R"({"tensors": []})"), "bad.json: /ops: an array of ops is required");
}

// What JSON cannot say: a tensor read before it exists, an op writing the caller's input, a
// format this footprint does not know. Each is a one-line error with its JSON path.
TEST(TraceFormat, SemanticErrorsNameThePath) {
  EXPECT_EQ(trace_error(R"({"format": "footprint-trace/99", "tensors": [], "ops": []})"),
            "bad.json: /format: unknown format 'footprint-trace/99' (this footprint reads "
            "footprint-trace/1)");
  EXPECT_EQ(trace_error(R"({"tensors": [{"name": "x", "bytes": 4, "kind": "input"},
                                          {"name": "t", "bytes": 4},
                                          {"name": "y", "bytes": 4, "kind": "output"}],
                            "ops": [{"inputs": ["t"], "outputs": ["y"]},
                                    {"inputs": ["x"], "outputs": ["t"]}]})"),
            "bad.json: /ops/0/inputs/0: 't' is read before any op writes it");
  EXPECT_EQ(trace_error(R"({"tensors": [{"name": "x", "bytes": 4, "kind": "input"},
                                          {"name": "t", "bytes": 4},
                                          {"name": "v", "bytes": 0, "view_of": "t"}],
                            "ops": [{"inputs": ["v"], "outputs": ["t"]}]})"),
            "bad.json: /ops/0/inputs/0: 'v' is read before any op writes it");
  EXPECT_EQ(trace_error(R"({"tensors": [{"name": "x", "bytes": 4, "kind": "input"}],
                            "ops": [{"inputs": ["x"], "outputs": ["x"]}]})"),
            "bad.json: /ops/0/outputs/0: writes 'x', which is an input (a tensor the trace does "
            "not produce)");
  // Reading inputs, weights and views of them needs no writer.
  EXPECT_EQ(trace_error(R"({"format": "footprint-trace/1",
                            "tensors": [{"name": "x", "bytes": 4, "kind": "input"},
                                        {"name": "xv", "bytes": 0, "view_of": "x"},
                                        {"name": "y", "bytes": 4, "kind": "output"}],
                            "ops": [{"inputs": ["xv"], "outputs": ["y"]}]})"),
            "");
}

}  // namespace
}  // namespace footprint::analysis
