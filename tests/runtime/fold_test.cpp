// Constant folding (graph::fold_model, `footprint fold`): the folded model runs to the same
// outputs, external data is 64-byte aligned, and intermediates are released as folding goes.
#include "footprint/graph/fold.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_runner.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/output_check.hpp"
#include "footprint/runtime/session.hpp"
#include "test_support.hpp"

namespace footprint::graph {
namespace {

namespace fs = std::filesystem;

fs::path light(const std::string& name) {
  return testing::shared_dir() / "models" / "light" / name;
}

// Runs the folded model and the model it came from on the light model's input: folding
// computes the same weights once and for all, so the outputs are the same. Both run unfused:
// fusing folds each BatchNormalization into its convolution's weights when preparing, a constant
// of its own. (Not the folder's
// output_0.pb: that is the uniform softmax of logits that are equal only mathematically. In
// light/squeezenet they reach 2e9, and where a kernel rounds one channel's sum a unit in the last
// place apart from the others, as oneDNN's AVX2 gemm does, the softmax peaks there.)
void expect_same_outputs(const fs::path& folded, const fs::path& folder, bool all_folded = true) {
  const graph::Model model = graph::load_model(folded);
  EXPECT_FALSE(model.graph(graph::OpRegistry::builtin()).nodes().empty());
  std::vector<runtime::Tensor> inputs;
  inputs.push_back(runtime::read_tensor_file(folder / "input_0.pb"));
  runtime::SessionOptions options;
  options.fuse = false;
  runtime::Session session(model, options);
  const auto outputs = session.run(inputs);
  const graph::Model original = graph::load_model(folder / "model.onnx");
  runtime::Session unfolded(original, options);
  const auto want = unfolded.run(inputs);
  const auto check = runtime::check_outputs(outputs, want, 1e-6, 0);
  EXPECT_TRUE(check.match) << check.problem;
  // Nothing is left to compute when preparing: every constant was folded into a weight.
  if (all_folded) {
    EXPECT_EQ(session.prepared().constant_bytes, 0u);
  }
}

TEST(Fold, SqueezenetRunsToTheSameOutputs) {
  FOOTPRINT_REQUIRE_SHARED();
  testing::TempDir dir;
  const graph::Model model = graph::load_model(light("squeezenet") / "model.onnx");
  const FoldReport r = fold_model(model.onnx(), runtime::op_registry(), dir.path() / "sq.onnx");
  EXPECT_EQ(r.folded_nodes, 39u);  // the ConstantOfShape weights and their shape constants
  EXPECT_EQ(r.folded_initializers, 39u);
  EXPECT_GT(r.folded_bytes, 4u << 20);
  expect_same_outputs(dir.path() / "sq.onnx", light("squeezenet"));
}

TEST(Fold, ExternalDataIsAlignedAndStreamed) {
  FOOTPRINT_REQUIRE_SHARED();
  if (!heap::available()) GTEST_SKIP() << "no counting allocator in this build";
  testing::TempDir dir;
  const graph::Model model = graph::load_model(light("resnet50") / "model.onnx");
  const fs::path out = dir.path() / "r50.onnx";
  const graph::OpRegistry& ops = runtime::op_registry();  // built once, outside the figures
  const uint64_t before = heap::snapshot().current_bytes;
  heap::reset_peak();
  const FoldReport r = fold_model(model.onnx(), ops, out, {.external_data = true});
  const uint64_t peak = heap::snapshot().peak_bytes - before;
  // Everything folding held is released (a few hundred bytes of one-time library statics remain).
  EXPECT_LT(heap::snapshot().current_bytes, before + 4096);
  EXPECT_EQ(r.data_file, fs::path(out.string() + ".data"));
  EXPECT_GT(r.weight_bytes, 90u << 20);
  // Each folded weight leaves for the data file as soon as it is computed: the heap holds the
  // largest few (resnet50: 8 MiB each), never the 98 MiB of weights.
  EXPECT_LT(peak, r.weight_bytes / 4);

  const graph::Model folded = graph::load_model(out);
  size_t external = 0;
  for (const onnx::TensorProto& t : folded.onnx().graph().initializers) {
    if (t.data_location != onnx::TensorProto::Location::external) continue;
    ++external;
    for (const onnx::StringEntry& e : t.external_data) {
      if (e.key == "offset") {
        EXPECT_EQ(std::stoull(std::string(e.value)) % 64, 0u) << t.name;
      }
    }
    // Mapped in place: the bytes sit 64-byte aligned in the mapping.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.external_bytes.data()) % 64, 0u) << t.name;
  }
  EXPECT_GT(external, 50u);
  expect_same_outputs(out, light("resnet50"));
}

TEST(Fold, MaxFoldBytesKeepsBigConstantsComputed) {
  FOOTPRINT_REQUIRE_SHARED();
  testing::TempDir dir;
  const graph::Model model = graph::load_model(light("squeezenet") / "model.onnx");
  const FoldReport all = fold_model(model.onnx(), runtime::op_registry(), dir.path() / "a.onnx");
  const FoldReport some = fold_model(model.onnx(), runtime::op_registry(), dir.path() / "b.onnx",
                                     {.max_fold_bytes = uint64_t{64} * 1024});
  EXPECT_LT(some.folded_bytes, all.folded_bytes);
  EXPECT_GT(some.kept_nodes, all.kept_nodes);
  // Every kept node under its reason: nothing is kept without one.
  const auto reasons = [](const FoldReport& r) {
    size_t n = 0;
    std::map<std::string, size_t> by;
    for (const KeptReason& k : r.kept) {
      n += k.nodes;
      by[k.reason] = k.nodes;
      EXPECT_FALSE(k.first.empty()) << k.reason;
    }
    EXPECT_EQ(n, r.kept_nodes);
    return by;
  };
  const auto all_kept = reasons(all);
  const auto some_kept = reasons(some);
  EXPECT_EQ(all_kept.count("outputs above --max-fold-bytes"), 0u);
  EXPECT_GT(some_kept.at("outputs above --max-fold-bytes"), 0u);
  expect_same_outputs(dir.path() / "b.onnx", light("squeezenet"), /*all_folded=*/false);
}

// A QDQ model's weights stay as stored: folding their DequantizeLinear would store them as float,
// four times the bytes, and take from fusion the int8 weights its quantized kernels read.
TEST(Fold, KeepsTheWeightsOfAQuantizedModelAsStored) {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::named("N"), Dim::known(64)});
  auto w = HostValue::zeros(DType::int8, {64, 32});
  auto scale = HostValue::make(DType::float32, {});
  scale->span<float>()[0] = 0.01F;
  const Var wd = b.op1("DequantizeLinear", {b.constant(w), b.constant(scale),
                                            b.constant(HostValue::zeros(DType::int8, {}))});
  b.output(b.matmul(x, wd), "y");
  const BuiltGraph built = b.to_graph();
  testing::TempDir dir;
  const FoldReport r =
      fold_model(built.model->onnx(), runtime::op_registry(), dir.path() / "q.onnx");
  EXPECT_EQ(r.folded_nodes, 0u);
  ASSERT_EQ(r.kept.size(), 2u);  // the DequantizeLinear, and the MatMul reading the input
  EXPECT_EQ(r.kept[0].reason, "dequantizes stored weights (folded, they would be stored as float)");
  EXPECT_EQ(r.kept[0].nodes, 1u);
  EXPECT_LT(fs::file_size(dir.path() / "q.onnx"), 64u * 32u * 2u);  // int8, not 8 KiB of float
}

TEST(FoldCommand, ReportsJsonAndFailsCleanly) {
  FOOTPRINT_REQUIRE_SHARED();
  testing::TempDir dir;
  const std::string model = (light("squeezenet") / "model.onnx").string();
  const std::string out = (dir.path() / "sq.onnx").string();
  const CliRun ok = run("fold " + model + " -o " + out + " --json");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  for (const char* key :
       {"\"folded_nodes\"", "\"weight_bytes\"", "\"peak_heap_bytes\"", "\"peak_rss_bytes\""}) {
    EXPECT_NE(ok.out.find(key), std::string::npos) << key;
  }
  // The folded model runs to the outputs of the model it came from, byte for byte.
  const std::string input = " --input data_0=" + (light("squeezenet") / "input_0.pb").string();
  const std::string folded_out = (dir.path() / "folded").string();
  const std::string original_out = (dir.path() / "original").string();
  const CliRun ran = run("run " + out + input + " --repeat 1 -o " + folded_out);
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  const CliRun ran_original = run("run " + model + input + " --repeat 1 -o " + original_out);
  EXPECT_EQ(ran_original.exit_code, 0) << ran_original.err;
  auto bytes = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  const std::string folded_bytes = bytes(fs::path(folded_out) / "output_0.pb");
  EXPECT_FALSE(folded_bytes.empty());
  EXPECT_EQ(folded_bytes, bytes(fs::path(original_out) / "output_0.pb"));

  const CliRun usage = run("fold " + model);
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("footprint: error:"), std::string::npos);
  const fs::path bad = dir.path() / "bad.onnx";
  std::ofstream(bad) << "not a model";
  const CliRun broken = run("fold " + bad.string() + " -o " + out);
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_EQ(broken.err.rfind("footprint: error: ", 0), 0u) << broken.err;
  EXPECT_EQ(std::count(broken.err.begin(), broken.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace footprint::graph
