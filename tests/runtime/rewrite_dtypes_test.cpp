// The rewrites of graph::prepare_graph ask the registry which dtypes a kernel runs
// (OpSchema::kernel_dtypes, epilogue_dtypes) before they make a node: in the runtime's registry,
// whose fused and folding rows run float32 (a few the 16-bit floats too), a float64 model keeps
// the nodes it has (so `run` refuses or runs them by their own names), while float32 fuses as
// before; the graph layer's registry, inference alone, constrains nothing and rewrites any
// floating dtype.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "footprint/core/float16.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/fuse.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/runtime/op_kernels.hpp"

namespace footprint::graph {
namespace {

// A constant of `dims` in `dtype` whose elements are small distinct reals.
SharedValue reals(DType dtype, std::vector<int64_t> dims) {
  auto v = HostValue::make(dtype, std::move(dims));
  const size_t n = v->bytes() * 8 / static_cast<size_t>(dtype_bits(dtype));
  for (size_t i = 0; i < n; ++i) {
    const double x = 0.25 + 0.125 * static_cast<double>(i % 7);
    if (dtype == DType::float64) v->span<double>()[i] = x;
    if (dtype == DType::float32) v->span<float>()[i] = static_cast<float>(x);
    if (dtype == DType::float16) v->span<uint16_t>()[i] = half_from_float(static_cast<float>(x));
  }
  return v;
}

// x [N, 3, 5, 5] -> Conv -> BatchNormalization -> Relu -> Flatten -> MatMul -> Add(bias): one
// of each rewrite (a fold, an epilogue, a pattern) in `dtype`.
FuseReport fused(const OpRegistry& registry, DType dtype) {
  GraphBuilder b(registry);
  const Var x = b.input("x", dtype, {Dim::named("N"), Dim::known(3), Dim::known(5), Dim::known(5)});
  const Var c = b.conv(x, b.constant(reals(dtype, {4, 3, 3, 3})), Var(), {1, 1}, {0, 0, 0, 0});
  std::vector<Var> norm = {c};
  for (int i = 0; i < 4; ++i) norm.push_back(b.constant(reals(dtype, {4})));
  const Var n = b.op1("BatchNormalization", norm);
  const Var f = b.flatten(b.relu(n));
  b.output(b.add(b.matmul(f, b.constant(reals(dtype, {36, 6}))), b.constant(reals(dtype, {6}))),
           "y");
  BuiltGraph built = b.to_graph();
  return fuse(built.graph);
}

// The lines that begin with `head` ("Conv+BatchNormalization", "footprint::MatMulAdd").
size_t count(const std::vector<std::string>& lines, const std::string& head) {
  size_t k = 0;
  for (const std::string& l : lines) k += l.rfind(head, 0) == 0 ? 1 : 0;
  return k;
}

TEST(RewriteDtypes, Float32FoldsFusesAndRewritesInTheRuntimesRegistry) {
  const FuseReport r = fused(runtime::op_registry(), DType::float32);
  EXPECT_EQ(count(r.patterns, "Conv+BatchNormalization"), 1U);
  ASSERT_EQ(r.fused.size(), 1U);  // the Relu, on the folded Conv
  EXPECT_NE(r.fused[0].find("(Conv) + 'Relu_2' (Relu)"), std::string::npos) << r.fused[0];
  EXPECT_EQ(count(r.patterns, "footprint::MatMulAdd"), 1U);
}

TEST(RewriteDtypes, OtherWidthsKeepTheirNodesWhereTheRowsKernelsRunFloat32) {
  const FuseReport r = fused(runtime::op_registry(), DType::float64);
  EXPECT_TRUE(r.patterns.empty()) << r.patterns.front();
  EXPECT_TRUE(r.fused.empty()) << r.fused.front();
  EXPECT_EQ(r.nodes_removed, 0U);
  // float16: footprint::MatMulAdd runs it (through float32 copies), so the MatMul and its bias
  // fuse; the folding rows (FoldBatchNorm) and BatchNormalization's epilogues run float32 only,
  // so the normalisation and its Relu stay.
  const FuseReport h = fused(runtime::op_registry(), DType::float16);
  EXPECT_EQ(h.patterns.size(), 1U);
  EXPECT_EQ(count(h.patterns, "footprint::MatMulAdd"), 1U);
  EXPECT_TRUE(h.fused.empty()) << h.fused.front();
}

TEST(RewriteDtypes, InferenceAloneRewritesEveryFloatingWidth) {
  // The graph layer's registry has no kernels: the rows say nothing about dtypes, and the
  // patterns' own condition (real arithmetic) holds for each width. No epilogue is fused: which
  // kernel applies one is the runtime's promise alone.
  for (const DType t : {DType::float32, DType::float64, DType::float16}) {
    const FuseReport r = fused(OpRegistry::builtin(), t);
    EXPECT_EQ(count(r.patterns, "Conv+BatchNormalization"), 1U) << dtype_name(t);
    EXPECT_EQ(count(r.patterns, "footprint::MatMulAdd"), 1U) << dtype_name(t);
    EXPECT_TRUE(r.fused.empty()) << dtype_name(t);
  }
}

TEST(RewriteDtypes, AnIntegerProductIsNeverRewrittenAsARealOne) {
  GraphBuilder b(OpRegistry::builtin());
  const Var x = b.input("x", DType::int32, {Dim::known(2), Dim::known(3)});
  auto w = HostValue::zeros(DType::int32, {3, 4});
  auto bias = HostValue::zeros(DType::int32, {4});
  b.output(b.add(b.matmul(x, b.constant(w)), b.constant(bias)), "y");
  BuiltGraph built = b.to_graph();
  EXPECT_TRUE(fuse(built.graph).patterns.empty());
}

}  // namespace
}  // namespace footprint::graph
