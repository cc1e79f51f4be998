// `footprint analyze` as a user runs it: the JSON contract, dims, sweeps, policies, errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/tensor.hpp"
#include "graph/infer_builder.hpp"
#include "onnx/wire_builder.hpp"

namespace footprint {
namespace {

const std::string kTraces = std::string(FOOTPRINT_SOURCE_DIR) + "/examples/traces/";

nlohmann::json analyze_json(const std::string& args) {
  const CliRun r = run("analyze --json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(AnalyzeCommand, SeedTracesGiveTheirFigures) {
  const auto list = analyze_json(kTraces + "seed_mul_list.json");
  EXPECT_EQ(list["bytes"]["total_peak"], 96);
  EXPECT_EQ(list["after_bytes"], 64);
  EXPECT_EQ(list["inputs"], "donated");
  const auto tuple = analyze_json(kTraces + "seed_mul_tuple.json");
  EXPECT_EQ(tuple["bytes"]["total_peak"], 144);
  EXPECT_EQ(tuple["after_bytes"], 128);
  // The policy is the caller's to override.
  const auto list_as_tuple = analyze_json("--inputs caller " + kTraces + "seed_mul_list.json");
  EXPECT_EQ(list_as_tuple["bytes"]["total_peak"], 144);
}

// plan reads a trace as analyze does: the list's arena holds t3 alone (16 B in a 64-byte
// buffer; inputs and outputs are not in the arena), the tuple's too, and --inputs overrides.
TEST(PlanCommand, PlansATracesArena) {
  for (const char* name : {"seed_mul_list.json", "seed_mul_tuple.json"}) {
    const CliRun r = run("plan --json " + kTraces + name);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["arena_bytes"], 64) << name;
    EXPECT_EQ(j["buffers"], 1) << name;
    EXPECT_EQ(j["timeline_lower_bound_bytes"], 16) << name;
  }
  EXPECT_EQ(run("plan --dim N=2 " + kTraces + "seed_mul_list.json").exit_code, 2);
}

TEST(AnalyzeCommand, SweepsTheBatchOfAModelStoredAtBatchOne) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto model = testing::shared_dir() / "models" / "light" / "bvlc_alexnet" / "model.onnx";
  const CliRun r = run("analyze --json --sweep batch=1,8,32 " + model.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("footprint: re-batched: leading dim of 1 input and 1 Reshape made 'batch'"),
            std::string::npos)
      << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // Activations grow with the batch, weights do not: a line whose slope is the activations'.
  EXPECT_TRUE(j["sweep"]["total_peak"]["linear"].get<bool>());
  EXPECT_GT(j["sweep"]["total_peak"]["slope"].get<double>(), 0);
  EXPECT_LT(j["sweep"]["points"][0]["total_peak_bytes"].get<uint64_t>(),
            j["sweep"]["points"][2]["total_peak_bytes"].get<uint64_t>());
}

TEST(AnalyzeCommand, JsonFollowsTheContract) {
  const auto j = analyze_json(std::string("--dim N=4 ") + FOOTPRINT_EXAMPLE_MODEL);
  for (const char* key : {"model", "order", "bytes", "lower_bound_bytes", "peak_step",
                          "alive_at_peak", "steps", "after_bytes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"weights", "inputs", "activations_peak", "workspace_peak", "outputs",
                          "total_peak", "packed"}) {
    EXPECT_TRUE(j["bytes"].contains(key)) << key;
  }
  EXPECT_EQ(j["dims"]["N"], 4);
  EXPECT_EQ(j["bytes"]["weights"], (36 + 4 + 640 + 10) * 4);
  EXPECT_EQ(j["bytes"]["inputs"], 4 * 1 * 8 * 8 * 4) << "x: float[N,1,8,8] at N=4";
  EXPECT_EQ(j["bytes"]["outputs"], 4 * 10 * 4);
  // Six nodes; the Relu runs inside the Conv before it (graph::fuse), --no-fuse keeps it apart;
  // the Conv and the MaxPool run channels-last between two layout changes.
  EXPECT_EQ(j["channels_last"]["nodes"], 2);
  EXPECT_EQ(j["channels_last"]["layout_changes"], 2);
  ASSERT_EQ(j["steps"].size(), 7u);
  ASSERT_EQ(j["fused"].size(), 1u);
  EXPECT_NE(j["fused"][0].get<std::string>().find("(Relu)"), std::string::npos);
  const auto apart = analyze_json(std::string("--no-fuse --dim N=4 ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(apart["steps"].size(), 6u);
  EXPECT_TRUE(apart["fused"].empty());
  for (const auto& s : j["steps"]) {
    for (const char* key :
         {"index", "node", "op", "alloc_bytes", "free_bytes", "workspace_bytes", "live_bytes"}) {
      EXPECT_TRUE(s.contains(key)) << key;
    }
  }
  // x channels-last, then the conv output (4 channels of 8x8 per sample), the largest activation.
  EXPECT_EQ(j["steps"][0]["alloc_bytes"], 4 * 1 * 8 * 8 * 4);
  EXPECT_EQ(j["steps"][1]["alloc_bytes"], 4 * 4 * 8 * 8 * 4);
  for (const auto& a : j["alive_at_peak"]) {
    for (const char* key : {"tensor", "bytes", "producer", "last_consumer", "why"}) {
      EXPECT_TRUE(a.contains(key)) << key;
    }
  }
}

TEST(AnalyzeCommand, SweepReportsTheLinearLaw) {
  const auto j = analyze_json(std::string("--sweep N=1,2,8 ") + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_TRUE(j.contains("sweep"));
  EXPECT_EQ(j["sweep"]["dim"], "N");
  const auto& points = j["sweep"]["points"];
  ASSERT_EQ(points.size(), 3u);
  // Each point is what a single analysis at that value reports.
  for (const auto& p : points) {
    const auto single = analyze_json("--dim N=" + std::to_string(p["value"].get<int>()) + " " +
                                     FOOTPRINT_EXAMPLE_MODEL);
    EXPECT_EQ(p["total_peak_bytes"], single["bytes"]["total_peak"]) << p.dump();
  }
  // "linear" says whether the three points lie on one line, and the law passes through them.
  auto peak = [&](size_t i) { return points[i]["total_peak_bytes"].get<double>(); };
  const bool collinear = (peak(1) - peak(0)) * 6 == (peak(2) - peak(1)) * 1;
  EXPECT_EQ(j["sweep"]["total_peak"]["linear"].get<bool>(), collinear);
  if (collinear) {
    const double a = j["sweep"]["total_peak"]["intercept"].get<double>();
    const double b = j["sweep"]["total_peak"]["slope"].get<double>();
    EXPECT_DOUBLE_EQ(a + b * 8, peak(2));
    EXPECT_GE(a, 2760.0) << "the weights (2760 B) do not grow with N";
  }
}

// The exact law: every swept point's peak is its piece's polynomial at that value.
TEST(AnalyzeCommand, SweepReportsTheExactPeakLaw) {
  const auto j = analyze_json(std::string("--sweep N=1,2,4,8,16 ") + FOOTPRINT_EXAMPLE_MODEL);
  const auto& law = j["sweep"]["total_peak_law"];
  ASSERT_TRUE(law["exact"].get<bool>()) << law.dump();
  EXPECT_EQ(law["max_degree"], 3);
  const auto fraction = [](const std::string& text) {
    const auto slash = text.find('/');
    return slash == std::string::npos
               ? std::stod(text)
               : std::stod(text.substr(0, slash)) / std::stod(text.substr(slash + 1));
  };
  size_t covered = 0;
  for (const auto& p : j["sweep"]["points"]) {
    const int64_t x = p["value"];
    for (const auto& piece : law["pieces"]) {
      if (x < piece["from"].get<int64_t>() || x > piece["to"].get<int64_t>()) continue;
      double value = 0;
      double power = 1;
      for (const auto& c : piece["coefficients"]) {
        value += fraction(c.get<std::string>()) * power;
        power *= static_cast<double>(x);
      }
      EXPECT_DOUBLE_EQ(value, p["total_peak_bytes"].get<double>()) << piece.dump();
      ++covered;
    }
  }
  EXPECT_EQ(covered, 5u) << "each point in exactly one piece";
  const CliRun text = run(std::string("analyze --sweep N=1,2,4,8,16 ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_NE(text.out.find("exact at every value above"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("as N grows: "), std::string::npos) << text.out;
  // Three points leave no two to spare beyond a line.
  const auto few = analyze_json(std::string("--sweep N=1,2,8 ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_FALSE(few["sweep"]["total_peak_law"]["exact"].get<bool>());
}

TEST(AnalyzeCommand, UnboundDimsWarnOnStderr) {
  const CliRun r = run(std::string("analyze ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("warning: dim N is unbound; using 1"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("total peak"), std::string::npos);
}

// --order memory names the order and keeps the stored order's bound beside the chosen one.
TEST(AnalyzeCommand, MemoryOrderReportsBothBounds) {
  const auto stored = analyze_json(std::string("--dim N=4 ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(stored["order"], "stored");
  EXPECT_FALSE(stored.contains("stored_lower_bound_bytes"));
  const auto j = analyze_json(std::string("--order memory --dim N=4 ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(j["order"], "memory");
  EXPECT_EQ(j["stored_lower_bound_bytes"], stored["lower_bound_bytes"]);
  EXPECT_LE(j["lower_bound_bytes"].get<uint64_t>(), stored["lower_bound_bytes"].get<uint64_t>());
  EXPECT_EQ(run("analyze --order fastest " + std::string(FOOTPRINT_EXAMPLE_MODEL)).exit_code, 2);
}

TEST(AnalyzeCommand, BadUsageAndBadInput) {
  EXPECT_EQ(run(std::string("analyze --dim N ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  EXPECT_EQ(run(std::string("analyze --dim N=-3 ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  EXPECT_EQ(run(std::string("analyze --inputs borrowed ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  EXPECT_EQ(run("analyze --dim N=2 " + kTraces + "seed_mul_list.json").exit_code, 2);
  const CliRun missing = run("analyze /nonexistent.onnx");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("footprint: error: /nonexistent.onnx: cannot open"),
            std::string::npos);
}

// x[4,8] -> NonZero -> Cast(float) -> y: y's size depends on how many elements are non-zero.
std::string write_nonzero_model(const testing::TempDir& dir) {
  graph::GraphBuilder b(runtime::op_registry());
  graph::Var x = b.input("x", DType::float32, {Dim::known(4), Dim::known(8)});
  graph::Var nz = b.op1("NonZero", {x});
  b.output(b.op1("Cast", {nz}, {graph::Attr::of("to", int64_t{1})}), "y");
  std::string path = (dir.path() / "nonzero.onnx").string();
  b.write_onnx(path);
  return path;
}

TEST(AnalyzeCommand, DataDependentSizesAreReportedAsBounds) {
  const testing::TempDir dir;
  const std::string model = write_nonzero_model(dir);
  const auto j = analyze_json(model);
  EXPECT_TRUE(j["bounded"].get<bool>());
  ASSERT_EQ(j["bounded_tensors"].size(), 2u);
  EXPECT_NE(j["bounded_tensors"][0]["bound_by"].get<std::string>().find("(NonZero)"),
            std::string::npos);
  // At most 2 x 32 int64 indices, then as many floats.
  EXPECT_EQ(j["bytes"]["outputs"], 2 * 32 * 4);
  const CliRun text = run("analyze " + model);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const size_t peak = text.out.find("total peak");
  ASSERT_NE(peak, std::string::npos) << text.out;
  EXPECT_LT(text.out.find("<= ", peak), text.out.find('\n', peak)) << "the peak is a bound";
  EXPECT_NE(text.out.find("2 tensors bounded by"), std::string::npos) << text.out;
  const CliRun plan = run("plan " + model);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("planned at their bounds"), std::string::npos) << plan.out;
}

// x[6] reshaped by a runtime tensor: nothing bounds the result, so there is no figure to print.
TEST(AnalyzeCommand, AnUnknownSizeIsAnErrorNotZero) {
  const testing::TempDir dir;
  graph::GraphBuilder b(runtime::op_registry());
  graph::Var x = b.input("x", DType::float32, {Dim::known(6)});
  graph::Var s = b.input("s", DType::int64, {Dim::known(2)});
  b.output(b.relu(b.reshape(x, s)), "y");
  const std::string model = (dir.path() / "reshape.onnx").string();
  b.write_onnx(model);
  for (const char* cmd : {"analyze ", "plan ", "analyze --json "}) {
    const CliRun r = run(cmd + model);
    EXPECT_EQ(r.exit_code, 1) << cmd << r.out;
    EXPECT_NE(r.err.find("is unknown: its dim 0 comes from values of node"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("total peak"), std::string::npos) << "no figure from an unknown size";
  }
  const CliRun report = run("report " + model + " -o " + (dir.path() / "r.html").string());
  EXPECT_EQ(report.exit_code, 1) << report.err;
}

// An op footprint does not know: counted where the model declares its outputs' types, with a
// warning that `run` will refuse it; an error naming the op (not its values) where it does not.
TEST(AnalyzeCommand, AnUnknownOpIsNamedNotSilentlyAnalysed) {
  const testing::TempDir dir;
  const auto write = [&](const std::string& name, bool declared) {
    testing::Wire g;
    g.msg(11, testing::float_value_info("x", {2, 3}));
    g.msg(1, testing::node("FooBar", {"x"}, {"t"}, "foo").str(7, "com.example"));
    g.msg(1, testing::node("Relu", {"t"}, {"y"}, "relu"));
    if (declared) g.msg(13, testing::float_value_info("t", {2, 3}));
    g.msg(12, testing::output("y"));
    const auto path = dir.path() / name;
    testing::write_file(path, testing::model(g).bytes());
    return path.string();
  };
  const CliRun typed = run("analyze --json " + write("typed.onnx", true));
  ASSERT_EQ(typed.exit_code, 0) << typed.err;
  const auto j = nlohmann::json::parse(typed.out);
  EXPECT_EQ(j["bytes"]["outputs"], 2 * 3 * 4);
  bool named = false;
  for (const auto& w : j["warnings"]) {
    named = named || w.get<std::string>() ==
                         "node 'foo' (FooBar): the op 'com.example::FooBar' is unknown to "
                         "footprint: `run` will refuse this model";
  }
  EXPECT_TRUE(named) << j["warnings"].dump();
  // run refuses it naming the op with its domain, as analyze warned.
  const CliRun refused = run("run --repeat 1 " + write("typed.onnx", true));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("the op 'com.example::FooBar' is unknown to footprint"),
            std::string::npos)
      << refused.err;
  const CliRun untyped = run("analyze " + write("untyped.onnx", false));
  EXPECT_EQ(untyped.exit_code, 1);
  EXPECT_NE(untyped.err.find("it is an output of node 'foo' (FooBar), whose op "
                             "'com.example::FooBar' is unknown to footprint"),
            std::string::npos)
      << untyped.err;
  // A Reshape to constant dims gives the unknown op's output known extents but no element type
  // (onnxruntime's QOperator quantizer writes com.microsoft QLinearAdd -> Reshape): the error
  // still names the op, for analyze and for run, not "6 elements of 0 bits".
  testing::Wire g;
  g.msg(11, testing::float_value_info("x", {2, 3}));
  g.msg(5, testing::int64_tensor("shape", {2}, {3, 2}));
  g.msg(1, testing::node("FooBar", {"x"}, {"t"}, "foo").str(7, "com.example"));
  g.msg(1, testing::node("Reshape", {"t", "shape"}, {"r"}, "reshape"));
  g.msg(1, testing::node("Relu", {"r"}, {"y"}, "relu"));
  g.msg(12, testing::output("y"));
  const auto reshaped = dir.path() / "reshaped.onnx";
  testing::write_file(reshaped, testing::model(g).bytes());
  for (const char* cmd : {"analyze --json ", "run "}) {
    const CliRun r = run(cmd + reshaped.string());
    EXPECT_EQ(r.exit_code, 1) << cmd << r.out;
    EXPECT_NE(r.err.find("node 'foo' (FooBar), whose op 'com.example::FooBar' is unknown to "
                         "footprint"),
              std::string::npos)
        << cmd << r.err;
    EXPECT_EQ(r.err.find("0 bits"), std::string::npos) << cmd << r.err;
  }
}

// Extents without an element type (an exporter's value_info for a contrib op's output): an
// unknown size naming the op, never "0 bits per element" or an overflow.
TEST(AnalyzeCommand, AnUnknownOpsOutputWithoutAnElementTypeIsNamed) {
  const testing::TempDir dir;
  testing::Wire shape;
  for (const int64_t d : {2, 1024}) shape.msg(1, testing::Wire().int_field(1, d));
  testing::Wire tensor_type;
  tensor_type.msg(2, shape);  // no elem_type: undefined
  testing::Wire type;
  type.msg(1, tensor_type);
  testing::Wire g;
  g.msg(11, testing::float_value_info("x", {2, 1024}));
  g.msg(1, testing::node("QLinearThing", {"x"}, {"t"}, "q").str(7, "com.microsoft"));
  g.msg(1, testing::node("Relu", {"t"}, {"y"}, "relu"));
  g.msg(13, testing::Wire().str(1, "t").msg(2, type));
  g.msg(12, testing::output("y"));
  const auto path = dir.path() / "typeless.onnx";
  testing::write_file(path, testing::model(g).bytes());
  const CliRun r = run("analyze " + path.string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("size of 't' (undefined[2,1024]) is unknown: it is an output of node 'q' "
                       "(QLinearThing), whose op 'com.microsoft::QLinearThing' is unknown to "
                       "footprint"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("bits"), std::string::npos) << r.err;
}

TEST(AnalyzeCommand, ShapeBindsAnInputWithoutDimNames) {
  const CliRun bad = run(std::string("analyze --shape nope=1x1x8x8 ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--shape nope: the graph has no input of that name"), std::string::npos)
      << bad.err;
  EXPECT_EQ(run(std::string("analyze --shape x=1x8 ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  EXPECT_EQ(run(std::string("analyze --shape x=3xQ ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  const auto j = analyze_json(std::string("--shape x=3x1x8x8 ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(j["bytes"]["inputs"], 3 * 8 * 8 * 4);
}

// --data-dir: the extents of the inputs a run would be fed (input_0.pb, ...), for analyze, plan
// and report; the same figures as --shape gives, and a one-line error naming the file otherwise.
TEST(AnalyzeCommand, DataDirGivesTheInputsTheirFilesExtents) {
  const testing::TempDir dir;
  const auto folder = [&](const std::string& name) {
    auto d = dir.path() / name;
    std::filesystem::create_directory(d);
    return d;
  };
  const std::string model = FOOTPRINT_EXAMPLE_MODEL;
  const auto named = folder("named");
  runtime::write_tensor_file(named / "input_0.pb",
                             runtime::Tensor("x", DType::float32, {3, 1, 8, 8}));
  const auto unnamed = folder("unnamed");
  runtime::write_tensor_file(unnamed / "input_0.pb",
                             runtime::Tensor("", DType::float32, {3, 1, 8, 8}));
  const auto by_shape = analyze_json("--shape x=3x1x8x8 " + model);
  for (const auto& d : {named, unnamed}) {
    const auto j = analyze_json("--data-dir " + d.string() + " " + model);
    EXPECT_EQ(j["bytes"]["inputs"], 3 * 8 * 8 * 4) << d;
    EXPECT_EQ(j["bytes"], by_shape["bytes"]) << d;
    EXPECT_EQ(j["steps"], by_shape["steps"]) << d;
    EXPECT_EQ(run("plan --data-dir " + d.string() + " " + model).exit_code, 0) << d;
  }
  const CliRun report = run("report --run --data-dir " + named.string() + " " + model + " -o " +
                            (dir.path() / "r.html").string());
  EXPECT_EQ(report.exit_code, 0) << report.err;

  const auto expect_error = [&](const std::string& args, int code, const std::string& text) {
    const CliRun r = run("analyze " + args + " " + model);
    EXPECT_EQ(r.exit_code, code) << args << ": " << r.err;
    EXPECT_NE(r.err.find(text), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out.find("total peak"), std::string::npos) << args;
  };
  const auto wrong_type = folder("wrong_type");
  runtime::write_tensor_file(wrong_type / "input_0.pb",
                             runtime::Tensor("x", DType::int64, {3, 1, 8, 8}));
  expect_error("--data-dir " + wrong_type.string(), 1,
               (wrong_type / "input_0.pb").string() +
                   ": input 'x': the model declares float, the tensor is int64");
  const auto stranger = folder("stranger");
  runtime::write_tensor_file(stranger / "input_0.pb", runtime::Tensor("nope", DType::float32, {1}));
  expect_error("--data-dir " + stranger.string(), 1, "'nope' is not an input of the model");
  const auto two = folder("two");
  runtime::write_tensor_file(two / "input_0.pb", runtime::Tensor("", DType::float32, {3, 1, 8, 8}));
  runtime::write_tensor_file(two / "input_1.pb", runtime::Tensor("", DType::float32, {3, 1, 8, 8}));
  expect_error("--data-dir " + two.string(), 1,
               (two / "input_1.pb").string() + ": more tensor files than the model has inputs (1)");
  expect_error("--shape x=3x1x8x8 --data-dir " + named.string(), 2,
               "input 'x' is given by --shape and by --data-dir");
  expect_error("--data-dir " + folder("empty").string(), 1, "no input_0.pb");
  const CliRun trace =
      run("analyze --data-dir " + named.string() + " " + kTraces + "seed_mul_list.json");
  EXPECT_EQ(trace.exit_code, 2) << trace.err;
}

}  // namespace
}  // namespace footprint
