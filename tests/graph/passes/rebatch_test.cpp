// Re-batching a model stored at batch 1 (graph::rebatch): its inputs' leading dim and the
// Reshapes that hard-code the batch become the named dim `batch`, so analysis, planning and the
// runtime take any batch; a batch of copies of one sample gives copies of that sample's output,
// and the plan still is what the run obtains. Models that cannot be re-batched say why, naming
// the inputs or node at fault.
#include "footprint/graph/rebatch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/output_check.hpp"
#include "footprint/runtime/random_inputs.hpp"
#include "footprint/runtime/session.hpp"
#include "test_support.hpp"

namespace footprint::graph {
namespace {

namespace fs = std::filesystem;

// As in session_models_test.cpp: oneDNN's own buffers and one-time initialisation.
constexpr uint64_t kFirstRunOverhead = uint64_t{640} * 1024;

// Deterministic, varied weights: small enough that outputs stay well within float precision.
SharedValue floats(std::vector<int64_t> dims, float scale) {
  auto v = HostValue::make(DType::float32, std::move(dims));
  auto e = v->span<float>();
  for (size_t i = 0; i < e.size(); ++i) e[i] = scale * static_cast<float>((i * 7) % 11) - scale * 5;
  return v;
}

SharedValue int64s(const std::vector<int64_t>& values) {
  auto v = HostValue::make(DType::int64, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), v->span<int64_t>().begin());
  return v;
}

// x[1,2,5,5] -> Conv(3 filters, 3x3, pad 1) -> Relu -> Reshape [1,-1] -> Gemm -> y[1,4]: the
// classifier head of a caffe2 export, its batch fixed twice (input and Reshape).
void write_cnn(const fs::path& path, int64_t allowzero = 0) {
  GraphBuilder b(runtime::op_registry());
  Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(2), Dim::known(5), Dim::known(5)});
  Var conv = b.conv(x, b.constant(floats({3, 2, 3, 3}, 0.05F), "w"),
                    b.constant(floats({3}, 0.1F), "bias"), {1, 1}, {1, 1, 1, 1});
  Var flat = b.op1("Reshape", {b.relu(conv), b.constant(int64s({1, -1}), "flat_shape")},
                   {Attr::of("allowzero", allowzero)});
  Var y = b.gemm(flat, b.constant(floats({75, 4}, 0.02F), "fc_w"),
                 b.constant(floats({4}, 0.1F), "fc_b"));
  b.output(y, "y");
  b.write_onnx(path);
}

// x[1,6] -> MatMul -> Reshape to a Constant node's [1,2,2]: the shape as a Constant, not an
// initializer.
void write_matmul(const fs::path& path) {
  GraphBuilder b(runtime::op_registry());
  Var x = b.input("x", DType::float32, {Dim::known(1), Dim::known(6)});
  Var h = b.matmul(x, b.constant(floats({6, 4}, 0.1F), "w"));
  Var shape = b.op1("Constant", {}, {Attr::of("value", int64s({1, 2, 2}))});
  b.output(b.reshape(h, shape), "y");
  b.write_onnx(path);
}

std::string shape_of(const Graph& g, std::string_view name) {
  return g.value(*g.find(name)).shape.to_string();
}

std::string rebatch_error(const fs::path& path) {
  const graph::Model model = graph::load_model(path);
  Graph g = model.graph(runtime::op_registry());
  try {
    rebatch(g, kBatchDim);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<runtime::Tensor> just(runtime::Tensor t) {
  std::vector<runtime::Tensor> v;
  v.push_back(std::move(t));
  return v;
}

// One sample repeated `copies` times along the leading dim.
runtime::Tensor repeated(const runtime::Tensor& sample, int64_t copies) {
  std::vector<int64_t> dims = sample.dims();
  dims[0] *= copies;
  runtime::Tensor out(sample.name(), sample.dtype(), dims);
  for (int64_t i = 0; i < copies; ++i)
    std::memcpy(out.data() + i * sample.bytes(), sample.data(), sample.bytes());
  return out;
}

// Row `i` of a batched output, as a tensor of the batch-1 shape.
runtime::Tensor sample_of(const runtime::Tensor& batched, int64_t i) {
  std::vector<int64_t> dims = batched.dims();
  const size_t bytes = batched.bytes() / static_cast<size_t>(dims[0]);
  dims[0] = 1;
  runtime::Tensor out(batched.name(), batched.dtype(), dims);
  std::memcpy(out.data(), batched.data() + static_cast<size_t>(i) * bytes, bytes);
  return out;
}

TEST(Rebatch, MakesTheInputsAndTheFlatteningReshapeFollowTheBatch) {
  testing::TempDir dir;
  write_cnn(dir.path() / "cnn.onnx");
  const graph::Model model = graph::load_model(dir.path() / "cnn.onnx");
  Graph g = model.graph(runtime::op_registry());
  ASSERT_TRUE(needs_rebatch(g, kBatchDim));

  const Rebatch r = rebatch(g, kBatchDim);
  EXPECT_EQ(r.from, 1);
  EXPECT_EQ(r.inputs, 1u);
  EXPECT_EQ(r.reshapes, 1u);
  EXPECT_EQ(r.note(),
            "re-batched: leading dim of 1 input and 1 Reshape made 'batch' (stored as 1)");

  infer_shapes(g);
  EXPECT_EQ(shape_of(g, "x"), "[batch,2,5,5]");
  EXPECT_EQ(g.value(g.nodes()[g.value(*g.find("y")).producer].inputs[0]).shape.to_string(),
            "[batch,75]");
  EXPECT_EQ(shape_of(g, "y"), "[batch,4]");
  // The rewritten shape is the graph's own; the model's bytes still say [1,-1].
  const auto shape = known_value_of(*g.value(*g.find("flat_shape")).initializer)->int_values();
  EXPECT_EQ(*shape, (std::vector<int64_t>{0, -1}));
  EXPECT_FALSE(needs_rebatch(g, kBatchDim));
}

TEST(Rebatch, ABatchOfCopiesGivesCopiesOfTheOutputInsideThePlannedArena) {
  testing::TempDir dir;
  write_cnn(dir.path() / "cnn.onnx");
  const graph::Model model = graph::load_model(dir.path() / "cnn.onnx");
  const std::vector<runtime::Tensor> one =
      runtime::random_inputs(runtime::Session(model).inputs(), {}, 7);
  runtime::Session at_one(model);
  const std::vector<runtime::Tensor> want = at_one.run(one);
  EXPECT_TRUE(at_one.prepared().rebatched.empty());

  runtime::Session at_three(model, {.dims = {{"batch", 3}}});
  ASSERT_EQ(at_three.inputs().size(), 1u);
  EXPECT_EQ(at_three.inputs()[0].shape.to_string(), "[batch,2,5,5]");
  const std::vector<runtime::Tensor> got = at_three.run(just(repeated(one[0], 3)));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].dims(), (std::vector<int64_t>{3, 4}));
  for (int64_t i = 0; i < 3; ++i) {
    const std::vector<runtime::Tensor> row = just(sample_of(got[0], i));
    const runtime::OutputCheck c = runtime::check_outputs(row, want, 1e-5, 1e-6);
    EXPECT_TRUE(c.match) << "sample " << i << ": " << c.problem;
  }

  const runtime::PreparedStats& p = at_three.prepared();
  EXPECT_EQ(p.dims.at("batch"), 3);
  EXPECT_FALSE(p.rebatched.empty());
  EXPECT_EQ(at_three.last_run().arena_bytes, p.planned_arena_bytes);
  EXPECT_GT(p.planned_arena_bytes, at_one.prepared().planned_arena_bytes);
  if (!heap::available()) GTEST_SKIP() << "the counting allocator is not linked into this build";
  const uint64_t predicted = p.planned_arena_bytes + p.outputs_bytes;
  EXPECT_GE(at_three.last_run().peak_heap_bytes, predicted);
  EXPECT_LE(at_three.last_run().peak_heap_bytes, predicted + kFirstRunOverhead);
}

TEST(Rebatch, RandomInputsTakeTheReBatchedShape) {
  testing::TempDir dir;
  write_cnn(dir.path() / "cnn.onnx");
  const graph::Model model = graph::load_model(dir.path() / "cnn.onnx");
  const runtime::Session s(model, {.dims = {{"batch", 4}}});
  const auto inputs = runtime::random_inputs(s.inputs(), {{"batch", 4}}, 1);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].dims(), (std::vector<int64_t>{4, 2, 5, 5}));
}

TEST(Rebatch, RewritesAShapeHeldByAConstantNode) {
  testing::TempDir dir;
  write_matmul(dir.path() / "matmul.onnx");
  const graph::Model model = graph::load_model(dir.path() / "matmul.onnx");
  runtime::Session at_one(model);
  const std::vector<runtime::Tensor> one = runtime::random_inputs(at_one.inputs(), {}, 3);
  const auto want = at_one.run(one);

  runtime::Session at_two(model, {.dims = {{"batch", 2}}});
  const auto got = at_two.run(just(repeated(one[0], 2)));
  ASSERT_EQ(got[0].dims(), (std::vector<int64_t>{2, 2, 2}));
  for (int64_t i = 0; i < 2; ++i) {
    const std::vector<runtime::Tensor> row = just(sample_of(got[0], i));
    EXPECT_TRUE(runtime::check_outputs(row, want, 1e-5, 1e-6).match) << "sample " << i;
  }
  EXPECT_NE(at_two.prepared().rebatched.find("1 Reshape"), std::string::npos);
}

TEST(Rebatch, InputsWithDifferentLeadingDimsAreRejected) {
  testing::TempDir dir;
  GraphBuilder b(runtime::op_registry());
  b.output(b.relu(b.input("a", DType::float32, {Dim::known(1), Dim::known(4)})), "ya");
  b.output(b.relu(b.input("b", DType::float32, {Dim::known(2), Dim::known(4)})), "yb");
  b.write_onnx(dir.path() / "two.onnx");
  const std::string e = rebatch_error(dir.path() / "two.onnx");
  EXPECT_NE(e.find("two.onnx: cannot re-batch: inputs 'a' and 'b' have leading dims 1 and 2"),
            std::string::npos)
      << e;
}

TEST(Rebatch, AReshapeThatPinsTheBatchIsNamed) {
  // allowzero=1 makes 0 a literal extent and the shape has its -1 already: nothing can stand
  // for the batch, so the Reshape keeps it at 1.
  testing::TempDir dir;
  write_cnn(dir.path() / "pinned.onnx", /*allowzero=*/1);
  const std::string e = rebatch_error(dir.path() / "pinned.onnx");
  EXPECT_NE(e.find("pinned.onnx: cannot re-batch: node 'Reshape_"), std::string::npos) << e;
  EXPECT_NE(e.find("(Reshape) fixes the leading dim to 1"), std::string::npos) << e;
}

TEST(Rebatch, AModelWithANamedBatchIsLeftAlone) {
  testing::TempDir dir;
  GraphBuilder b(runtime::op_registry());
  b.output(b.relu(b.input("x", DType::float32, {Dim::named("N"), Dim::known(4)})), "y");
  b.write_onnx(dir.path() / "dynamic.onnx");
  const graph::Model model = graph::load_model(dir.path() / "dynamic.onnx");
  Graph g = model.graph(runtime::op_registry());
  EXPECT_FALSE(needs_rebatch(g, kBatchDim));
  EXPECT_FALSE(rebatch_if_bound(g, {{"batch", 8}}).has_value());
  EXPECT_EQ(shape_of(g, "x"), "[N,4]");
}

TEST(Rebatch, WithoutABatchBindingTheModelRunsAsStored) {
  testing::TempDir dir;
  write_cnn(dir.path() / "cnn.onnx");
  const graph::Model model = graph::load_model(dir.path() / "cnn.onnx");
  Graph g = model.graph(runtime::op_registry());
  EXPECT_FALSE(rebatch_if_bound(g, {{"N", 8}}).has_value());
  EXPECT_EQ(shape_of(g, "x"), "[1,2,5,5]");
}

// AlexNet's one flattening Reshape; ShuffleNet's 33 channel-shuffle Reshapes, each rewritten only
// once the one before it carries the batch.
class RebatchSharedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(RebatchSharedModel, AtBatchTwoGivesItsOutputForEachSample) {
  FOOTPRINT_REQUIRE_SHARED();
  const fs::path dir = footprint::testing::shared_dir() / "models" / GetParam();
  if (!fs::exists(dir / "model.onnx")) GTEST_SKIP() << dir << " is absent (../shared/models)";
  const graph::Model model = graph::load_model(dir / "model.onnx");
  runtime::Session session(model, {.dims = {{"batch", 2}}});
  const auto got = session.run(just(repeated(runtime::read_tensor_file(dir / "input_0.pb"), 2)));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].dims()[0], 2);
  for (int64_t i = 0; i < 2; ++i) {
    const std::vector<runtime::Tensor> row = just(sample_of(got[0], i));
    const runtime::OutputCheck c =
        runtime::check_outputs(row, std::vector<fs::path>{dir / "output_0.pb"}, 1e-3, 1e-5);
    EXPECT_TRUE(c.match) << "sample " << i << ": " << c.problem;
  }
  EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
}

std::string folder_name(const ::testing::TestParamInfo<std::string>& param) {
  std::string name = param.param;
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Models, RebatchSharedModel,
                         ::testing::Values("light/bvlc_alexnet", "light/shufflenet"), folder_name);

}  // namespace
}  // namespace footprint::graph
