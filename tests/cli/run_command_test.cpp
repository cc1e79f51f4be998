// `footprint run`: the JSON contract of DESIGN.md, outputs written as .pb files, the check
// against a backend-test folder, and one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_runner.hpp"
#include "footprint/core/float16.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/tensor.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

// A model that takes no inputs runs against a folder holding only its reference outputs.
TEST(RunCommand, DataDirOfAModelWithoutInputs) {
  const testing::TempDir dir;
  graph::GraphBuilder b(runtime::op_registry(), {.propagate = false});
  auto v = graph::HostValue::make(DType::float32, {4});
  for (int i = 0; i < 4; ++i) reinterpret_cast<float*>(v->data())[i] = static_cast<float>(i) - 2;
  b.output(b.relu(b.constant(v)), "y");
  b.write_onnx(dir.path() / "model.onnx");
  runtime::Tensor y("y", DType::float32, {4});
  const float want[] = {0, 0, 0, 1};
  std::memcpy(y.data(), want, sizeof want);
  runtime::write_tensor_file(dir.path() / "output_0.pb", y);
  const CliRun r = run("run --json --data-dir " + dir.path().string() + " " +
                       (dir.path() / "model.onnx").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["match"], true) << r.out;
}

TEST(RunCommand, JsonFollowsTheContract) {
  testing::TempDir dir;
  const CliRun r = run(std::string("run --json --dim N=4 --repeat 3 -o ") + dir.path().string() +
                       " " + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"predicted", "measured", "latency_ms", "outputs"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["predicted"]["arena_bytes"], j["measured"]["arena_bytes"]);
  EXPECT_TRUE(j["predicted"].contains("total_peak_bytes"));
  EXPECT_TRUE(j["measured"].contains("peak_heap_bytes"));
  EXPECT_TRUE(j["measured"].contains("peak_rss_bytes"));
  EXPECT_EQ(j["latency_ms"]["runs"], 3);
  EXPECT_LE(j["latency_ms"]["min"].get<double>(), j["latency_ms"]["median"].get<double>());
  EXPECT_LE(j["latency_ms"]["median"].get<double>(), j["latency_ms"]["p90"].get<double>());
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "y");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::parse("[4,10]"));
  EXPECT_EQ(j["outputs"][0]["dtype"], "float");
  EXPECT_TRUE(std::filesystem::exists(j["outputs"][0]["file"].get<std::string>()));
  EXPECT_EQ(std::filesystem::file_size(j["outputs"][0]["file"].get<std::string>()) >
                uintmax_t{160} /* 4 x 10 floats */,
            true);
}

// --check-shapes: every value of the run against analyze's prediction at the run's dims; both
// sides fuse, or neither (--no-fuse).
TEST(RunCommand, CheckShapesComparesEveryValueWithThePrediction) {
  for (const char* fuse : {"", "--no-fuse "}) {
    const CliRun r = run(std::string("run --json --check-shapes --dim N=2 --repeat 1 ") + fuse +
                         FOOTPRINT_EXAMPLE_MODEL);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["check_shapes"]["difference"], "") << fuse;
    // tiny_cnn: x, 4 weights, and a tensor per node (the Relu's folded into the Conv's); fused,
    // the Conv and the MaxPool run channels-last with a layout change before and after them.
    const size_t changes = j["channels_last"]["layout_changes"].get<size_t>();
    EXPECT_EQ(changes, std::string(fuse).empty() ? 2U : 0U) << fuse;
    EXPECT_EQ(j["check_shapes"]["values"], std::string(fuse).empty() ? 10 + changes : 11) << fuse;
    const CliRun text =
        run(std::string("run --check-shapes --repeat 1 ") + fuse + FOOTPRINT_EXAMPLE_MODEL);
    EXPECT_NE(text.out.find("check-shapes "), std::string::npos) << text.out;
  }
}

// --profile: every step's median time, and the same times summed by op type, dearest first.
TEST(RunCommand, ProfileTimesEveryStepAndSumsThemByOp) {
  const CliRun r = run(std::string("run --json --profile --repeat 3 ") + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("profile"));
  const auto& p = j["profile"];
  EXPECT_EQ(p["runs"], 3);
  ASSERT_FALSE(p["steps"].empty());
  std::map<std::string, std::pair<size_t, double>> by_op;
  double total = 0;
  for (const auto& s : p["steps"]) {
    EXPECT_FALSE(s["name"].get<std::string>().empty());
    EXPECT_GE(s["ms"].get<double>(), 0.0);
    auto& [count, ms] = by_op[s["op"].get<std::string>()];
    ++count;
    ms += s["ms"].get<double>();
    total += s["ms"].get<double>();
  }
  EXPECT_NEAR(p["steps_ms"].get<double>(), total, 1e-9);
  ASSERT_EQ(p["by_op"].size(), by_op.size());
  double previous = total, shares = 0;
  for (const auto& o : p["by_op"]) {
    const auto& [count, ms] = by_op.at(o["op"].get<std::string>());
    EXPECT_EQ(o["steps"].get<size_t>(), count);
    EXPECT_NEAR(o["ms"].get<double>(), ms, 1e-9);
    EXPECT_LE(o["ms"].get<double>(), previous);
    previous = o["ms"].get<double>();
    shares += o["share"].get<double>();
  }
  EXPECT_NEAR(shares, 1.0, 1e-9);
  // The example model's convolution (channels-last, graph::to_channels_last) is a step.
  EXPECT_TRUE(by_op.count("footprint::NhwcConv")) << r.out;

  const CliRun text = run(std::string("run --profile --repeat 2 ") + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("median step times over 2 runs"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("dearest steps"), std::string::npos) << text.out;
  const CliRun plain = run(std::string("run --json --repeat 1 ") + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(nlohmann::json::parse(plain.out).contains("profile"));
}

TEST(RunCommand, ChecksOutputsAgainstAFolderAndFailsOnAMismatch) {
  testing::TempDir dir;
  const auto& d = dir.path();
  runtime::Tensor x("x", DType::float32, {2, 1, 8, 8});
  auto* p = reinterpret_cast<float*>(x.data());
  for (size_t i = 0; i < x.numel(); ++i) p[i] = static_cast<float>(i % 11) / 11.0f;
  runtime::write_tensor_file(d / "input_0.pb", x);
  // No expected outputs yet: the run writes them.
  const CliRun first = run("run --repeat 1 --data-dir " + d.string() + " -o " +
                           (d / "out").string() + " " + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::filesystem::copy_file(d / "out" / "output_0.pb", d / "output_0.pb");
  const CliRun same =
      run("run --json --repeat 1 --data-dir " + d.string() + " " + FOOTPRINT_EXAMPLE_MODEL);
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const auto j = nlohmann::json::parse(same.out);
  EXPECT_EQ(j["match"], true);
  EXPECT_EQ(j["max_abs_error"], 0.0);

  runtime::Tensor wrong("y", DType::float32, {2, 10});
  std::memset(wrong.data(), 0, wrong.bytes());
  runtime::write_tensor_file(d / "output_0.pb", wrong);
  const CliRun differs =
      run("run --json --repeat 1 --data-dir " + d.string() + " " + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(differs.exit_code, 1);
  EXPECT_NE(differs.err.find("outputs differ"), std::string::npos) << differs.err;
  EXPECT_EQ(nlohmann::json::parse(differs.out)["match"], false);
}

// A float16 graph (onnxconverter-common's keep_io_types form: float in, float out): its
// activations between the convolutions are float32 carriers unless --keep-16bit, with the same
// output bits; its outputs are checked at float16's precision by default (onnxruntime runs such
// graphs in float32, so its outputs differ from the model's roundings by more than float32's
// rule allows), and at float32's where the flags say so.
TEST(RunCommand, SixteenBitGraphsAreCarriedInFloat32AndCheckedAtTheirPrecision) {
  testing::TempDir dir;
  const auto& d = dir.path();
  graph::GraphBuilder b(runtime::op_registry(), {.propagate = false});
  const auto weights = [](std::vector<int64_t> dims, uint32_t seed) {
    auto v = graph::HostValue::make(DType::float16, std::move(dims));
    uint32_t s = seed;
    for (uint16_t& e : v->span<uint16_t>()) {
      s = s * 1664525U + 1013904223U;
      e = half_from_float((static_cast<float>(s >> 8) / 8388608.0F - 1.0F) * 0.4F);
    }
    return v;
  };
  const graph::Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(4), Dim::known(8), Dim::known(8)});
  const graph::Var h =
      b.op1("Cast", {x}, {graph::Attr::of("to", static_cast<int64_t>(DType::float16))});
  const graph::Var c1 = b.op1("Conv", {h, b.constant(weights({8, 4, 3, 3}, 1))},
                              {graph::Attr::of("pads", std::vector<int64_t>{1, 1, 1, 1})});
  const graph::Var c2 = b.op1("Conv", {c1, b.constant(weights({4, 8, 1, 1}, 2))});
  b.output(b.op1("Cast", {c2}, {graph::Attr::of("to", static_cast<int64_t>(DType::float32))}), "y");
  const std::string model = (d / "model.onnx").string();
  b.write_onnx(model);
  runtime::Tensor in("x", DType::float32, {1, 4, 8, 8});
  float* xs = reinterpret_cast<float*>(in.data());
  for (size_t i = 0; i < in.numel(); ++i) xs[i] = static_cast<float>(i % 13) / 3.0F - 2.0F;
  runtime::write_tensor_file(d / "input_0.pb", in);

  const CliRun carried = run("run --json --repeat 1 --data-dir " + d.string() + " -o " +
                             (d / "carried").string() + " " + model);
  const CliRun kept = run("run --json --repeat 1 --keep-16bit --data-dir " + d.string() + " -o " +
                          (d / "kept").string() + " " + model);
  ASSERT_EQ(carried.exit_code, 0) << carried.err;
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_GT(nlohmann::json::parse(carried.out)["float32_carriers"]["values"], 0);
  EXPECT_EQ(nlohmann::json::parse(kept.out)["float32_carriers"]["values"], 0);
  EXPECT_EQ(testing::read_file(d / "carried" / "output_0.pb"),
            testing::read_file(d / "kept" / "output_0.pb"));

  // Expected outputs 0.5 % off the model's: within float16's rule, outside float32's.
  runtime::Tensor y = runtime::read_tensor_file(d / "carried" / "output_0.pb");
  float* ys = reinterpret_cast<float*>(y.data());
  for (size_t i = 0; i < y.numel(); ++i) ys[i] *= 1.005F;
  runtime::write_tensor_file(d / "output_0.pb", y);
  const CliRun loose = run("run --json --repeat 1 --data-dir " + d.string() + " " + model);
  ASSERT_EQ(loose.exit_code, 0) << loose.err;
  const auto j = nlohmann::json::parse(loose.out);
  EXPECT_EQ(j["match"], true);
  EXPECT_EQ(j["rtol"], 1e-2);
  EXPECT_EQ(j["tolerance_rule"], "a float16 graph's");
  const CliRun strict =
      run("run --json --repeat 1 --rtol 1e-3 --atol 1e-5 --data-dir " + d.string() + " " + model);
  EXPECT_EQ(strict.exit_code, 1) << strict.out;
  EXPECT_EQ(nlohmann::json::parse(strict.out)["match"], false);
}

TEST(RunCommand, MatchesTheBackendTestFolderOfASharedModel) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto folder = testing::shared_dir() / "models" / "random" / "squeezenet";
  const CliRun r = run("run --json --repeat 1 --data-dir " + folder.string() + " " +
                       (folder / "model.onnx").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["match"], true);
  EXPECT_LT(j["max_abs_error"].get<double>(), 1e-5);
}

TEST(RunCommand, RandomInputsOfAReBatchedModelHaveTheBoundBatch) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto model = testing::shared_dir() / "models" / "light" / "bvlc_alexnet" / "model.onnx";
  const CliRun r = run("run --json --repeat 1 --dim batch=3 " + model.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("re-batched"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outputs"][0]["shape"], (std::vector<int64_t>{3, 1000}));
  EXPECT_EQ(j["dims"]["batch"], 3);
  EXPECT_EQ(j["predicted"]["arena_bytes"], j["measured"]["arena_bytes"]);
}

TEST(RunCommand, BadInputIsOneLineNamingIt) {
  const CliRun r = run(std::string("run --input x=/nonexistent/in.pb ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("footprint: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/in.pb"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(RunCommand, UsageErrorsExitTwo) {
  EXPECT_EQ(run(std::string("run --repeat 0 ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  EXPECT_EQ(run(std::string("run --input nonsense ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
  EXPECT_EQ(run(std::string("run --threads 0 ") + FOOTPRINT_EXAMPLE_MODEL).exit_code, 2);
}

}  // namespace
}  // namespace footprint
