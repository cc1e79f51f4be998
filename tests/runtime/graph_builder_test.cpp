// The graph builder: inference on every call, values propagated with the runtime's kernels and
// owned by the handles, so building a long chain retains metadata, never the chain's values.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "test_support.hpp"

namespace footprint::graph {
namespace {

constexpr uint64_t kValueBytes = 10000 * sizeof(double);  // 80,000

std::shared_ptr<HostValue> filled(DType dtype, std::vector<int64_t> dims, double x) {
  auto v = HostValue::make(dtype, std::move(dims));
  if (dtype == DType::float64) {
    for (double& e : v->span<double>()) e = x;
  } else if (dtype == DType::int64) {
    for (int64_t& e : v->span<int64_t>()) e = static_cast<int64_t>(x);
  } else {
    for (float& e : v->span<float>()) e = static_cast<float>(x);
  }
  return v;
}

struct Retained {
  uint64_t after_build = 0;
  uint64_t with_export = 0;  // the exported protos alive beside the builder
  uint64_t after_write = 0;  // after writing the model to a file
};

// a = const(zeros(10000), float64); then a = mul(a, a) n times.
Retained chain(int n, const std::filesystem::path& file) {
  Retained r;
  const uint64_t before = heap::snapshot().current_bytes;
  {
    GraphBuilder b(runtime::op_registry());
    Var a = b.constant(HostValue::zeros(DType::float64, {10000}));
    for (int i = 0; i < n; ++i) a = b.mul(a, a);
    b.output(a, "y");
    EXPECT_NE(a.value(), nullptr);
    r.after_build = heap::snapshot().current_bytes - before;
    {
      const ExportedModel exported = b.export_onnx();
      r.with_export = heap::snapshot().current_bytes - before;
    }
    b.write_onnx(file);
    r.after_write = heap::snapshot().current_bytes - before;
  }
  EXPECT_EQ(heap::snapshot().current_bytes, before) << "the builder leaked";
  return r;
}

TEST(GraphBuilder, ChainRetainsMetadataNotValues) {
  if (!heap::available()) GTEST_SKIP() << "no counting allocator in this build";
  (void)runtime::op_registry();  // built once, outside the figures
  testing::TempDir dir;
  (void)chain(1, dir.path() / "warm.onnx");
  const Retained r10 = chain(10, dir.path() / "n10.onnx");
  const Retained r100 = chain(100, dir.path() / "n100.onnx");
  const Retained r1000 = chain(1000, dir.path() / "n1000.onnx");
  const double per_node = static_cast<double>(r1000.after_build - r100.after_build) / 900.0;
  std::printf("retained after build: N=10 %llu B, N=100 %llu B, N=1000 %llu B; per node %.1f B\n",
              static_cast<unsigned long long>(r10.after_build),
              static_cast<unsigned long long>(r100.after_build),
              static_cast<unsigned long long>(r1000.after_build), per_node);
  std::printf(
      "with export alive:    N=10 %llu B, N=100 %llu B; after write N=10 %llu B, "
      "N=100 %llu B\n",
      static_cast<unsigned long long>(r10.with_export),
      static_cast<unsigned long long>(r100.with_export),
      static_cast<unsigned long long>(r10.after_write),
      static_cast<unsigned long long>(r100.after_write));
  // A node's metadata is a few hundred bytes; one leaked value would be 80,000.
  EXPECT_LT(per_node, 1024.0);
  // N=10 and N=100 differ by 90 nodes of metadata (vector growth makes it a little lumpy).
  EXPECT_LE(r100.after_build - r10.after_build, static_cast<uint64_t>(90 * 1024));
  EXPECT_LE(r100.with_export - r10.with_export, static_cast<uint64_t>(90 * 2048));
  // Values: the constant (graph data) and the last handle's value, 2 x 80,000 bytes; the rest is
  // at most 1 KiB of metadata per node (2 KiB with the exported protos), which leaves less room
  // than one leaked 80,000-byte value.
  for (const auto& [n, r] : {std::pair{10, r10}, std::pair{100, r100}}) {
    const auto nodes = static_cast<uint64_t>(n);
    EXPECT_LE(r.after_build, 2 * kValueBytes + nodes * 1024 + 4096) << "N=" << n;
    EXPECT_LE(r.with_export, 2 * kValueBytes + nodes * 2048 + 8192) << "N=" << n;
    EXPECT_EQ(r.after_write, r.after_build) << "N=" << n;
  }
}

TEST(GraphBuilder, DroppingTheLastHandleFreesTheValue) {
  if (!heap::available()) GTEST_SKIP() << "no counting allocator in this build";
  GraphBuilder b(runtime::op_registry());
  Var a = b.constant(filled(DType::float64, {10000}, 2.0));
  const uint64_t before = heap::snapshot().current_bytes;
  Var sq = b.mul(a, a);
  ASSERT_NE(sq.value(), nullptr);
  EXPECT_DOUBLE_EQ(sq.value()->span<double>()[9999], 4.0);
  const uint64_t with_value = heap::snapshot().current_bytes;
  EXPECT_GE(with_value - before, kValueBytes);
  Var copy = sq;  // a second owner
  sq = Var();
  EXPECT_EQ(heap::snapshot().current_bytes, with_value);
  copy = Var();
  EXPECT_LT(heap::snapshot().current_bytes, with_value - kValueBytes + 1);
  EXPECT_EQ(b.node_count(), 1u);
}

TEST(GraphBuilder, InfersShapesAndPropagatesThroughShapeOps) {
  GraphBuilder b(runtime::op_registry());
  Var x = b.input("x", DType::float32, {Dim::named("N"), Dim::known(3), Dim::known(4)});
  Var w = b.constant(filled(DType::float32, {4, 2}, 0.5));
  Var y = b.matmul(x, w);
  EXPECT_EQ(y.shape().to_string(), "[N,3,2]");
  EXPECT_EQ(y.value(), nullptr);  // depends on an input
  // Reshape of a known value by a known shape: a view, sharing the bytes.
  Var shape = b.constant(filled(DType::int64, {1}, 8));
  Var flat = b.reshape(w, shape);
  EXPECT_EQ(flat.shape().to_string(), "[8]");
  ASSERT_NE(flat.value(), nullptr);
  EXPECT_EQ(flat.value()->data(), w.value()->data());
  // Shape of an input with a symbolic dim feeds a Reshape's inference.
  Var s = b.op1("Shape", {x});
  EXPECT_EQ(s.value(), nullptr);
  const Attr axis0 = Attr::of("axis", int64_t{0});
  Var batch = b.op1("Gather", {s, b.constant(filled(DType::int64, {1}, 0))}, {axis0});
  Var target = b.op1("Concat", {batch, b.constant(filled(DType::int64, {1}, -1))}, {axis0});
  Var r = b.reshape(y, target);
  EXPECT_EQ(r.shape().to_string(), "[N,6]");
  // ConstantOfShape of a known shape is evaluated at once.
  Var fill_shape = b.constant(filled(DType::int64, {2}, 3));
  Var c = b.constant_of_shape(fill_shape, filled(DType::float32, {1}, 7.0));
  ASSERT_NE(c.value(), nullptr);
  EXPECT_EQ(c.shape().to_string(), "[3,3]");
  EXPECT_FLOAT_EQ(c.value()->span<float>()[8], 7.0F);
  EXPECT_THROW(b.op1("NoSuchOp", {x}), Error);
}

TEST(GraphBuilder, ExportsAModelTheRuntimeRuns) {
  GraphBuilder b(runtime::op_registry());
  Var x = b.input("x", DType::float32, {Dim::known(2), Dim::known(4)});
  Var w = b.constant(filled(DType::float32, {4, 3}, 0.25), "w");
  Var bias = b.constant(filled(DType::float32, {3}, 1.0), "b");
  Var y = b.relu(b.gemm(x, w, bias));
  b.output(y, "y");
  BuiltGraph built = b.to_graph();
  EXPECT_EQ(built.graph.nodes().size(), 2u);
  EXPECT_EQ(built.graph.value(built.graph.outputs()[0]).shape.to_string(), "[2,3]");

  testing::TempDir dir;
  const auto path = dir.path() / "gemm.onnx";
  b.write_onnx(path);
  const graph::Model model = graph::load_model(path);
  runtime::Session session(model);
  runtime::Tensor in("x", DType::float32, {2, 4});
  const graph::TensorRef in_ref = in.ref();
  for (float& e : in_ref.span<float>()) e = 2.0F;
  std::vector<runtime::Tensor> inputs;
  inputs.push_back(std::move(in));
  const auto out = session.run(inputs);
  ASSERT_EQ(out.size(), 1u);
  const graph::TensorRef y_ref = out[0].ref();
  for (float e : y_ref.span<const float>()) EXPECT_FLOAT_EQ(e, 3.0F);  // 4*2*0.25 + 1
}

}  // namespace
}  // namespace footprint::graph

namespace footprint::graph {
namespace {

TEST(GraphBuilder, IfBranchesCaptureOuterValuesAndRun) {
  GraphBuilder b(runtime::op_registry());
  Var x = b.input("x", DType::float32, {Dim::known(2)});
  Var cond = b.input("cond", DType::boolean, {});
  GraphBuilder& then_b = b.subgraph();
  then_b.output(then_b.add(x, then_b.constant(filled(DType::float32, {1}, 1.0))));
  GraphBuilder& else_b = b.subgraph();
  else_b.output(else_b.mul(x, else_b.constant(filled(DType::float32, {1}, 2.0))));
  const std::vector<Var> y = b.if_else(cond, then_b, else_b);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].dtype(), DType::float32);
  EXPECT_EQ(y[0].shape().to_string(), "[2]");
  b.output(y[0], "y");

  testing::TempDir dir;
  b.write_onnx(dir.path() / "if.onnx");
  const graph::Model model = graph::load_model(dir.path() / "if.onnx");
  runtime::Session session(model);
  for (const bool c : {true, false}) {
    std::vector<runtime::Tensor> inputs;
    inputs.emplace_back("x", DType::float32, std::vector<int64_t>{2});
    inputs.emplace_back("cond", DType::boolean, std::vector<int64_t>{});
    for (float& e : inputs[0].ref().span<float>()) e = 3.0F;
    inputs[1].ref().span<bool>()[0] = c;
    const auto out = session.run(inputs);
    const graph::TensorRef r = out[0].ref();
    EXPECT_FLOAT_EQ(r.span<const float>()[1], c ? 4.0F : 6.0F);
  }
}

TEST(GraphBuilder, LoopBodyInfersCarriedTypes) {
  GraphBuilder b(runtime::op_registry());
  Var x = b.input("x", DType::float32, {Dim::known(2)});
  GraphBuilder& body = b.subgraph();
  (void)body.input("i", DType::int64, {});
  Var c = body.input("c", DType::boolean, {});
  Var s = body.input("s", DType::float32, {Dim::known(2)});
  body.output(body.op1("Identity", {c}));
  body.output(body.add(s, x));
  const std::vector<Var> out = b.loop(b.constant(filled(DType::int64, {}, 3)), b.constant([] {
    auto t = HostValue::make(DType::boolean, {});
    t->template span<bool>()[0] = true;
    return t;
  }()),
                                      {b.constant(HostValue::zeros(DType::float32, {2}))}, body);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape().to_string(), "[2]");
  EXPECT_EQ(out[0].value(), nullptr);  // ops with subgraphs are never propagated
  b.output(out[0], "sum");
  const BuiltGraph built = b.to_graph();
  EXPECT_EQ(built.graph.subgraph_count(), 1u);
  EXPECT_EQ(built.graph.value(built.graph.outputs()[0]).shape.to_string(), "[2]");
}

}  // namespace
}  // namespace footprint::graph
