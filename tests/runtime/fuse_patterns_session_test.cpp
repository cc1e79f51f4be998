// The patterns graph::fuse rewrites (LayerNorm, GELU, MatMul + bias) as the runtime runs them: a
// transformer block written the ways exporters write it gives, fused, what it gives unfused, in
// the arena the fused graph planned, and that arena is no larger than the unfused one's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "graph/decomposed_ops.hpp"

namespace footprint::graph {
namespace {

using testing::decomposed_layer_norm;
using testing::linear;

constexpr int64_t kSeq = 7;
constexpr int64_t kWidth = 48;

struct Outcome {
  std::vector<float> y;
  runtime::PreparedStats prepared;
  uint64_t obtained = 0;
};

Outcome run(const onnx::Model& model, bool fuse, int64_t batch) {
  runtime::SessionOptions options;
  options.fuse = fuse;
  runtime::Session session(model, options);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{batch, kSeq, kWidth});
  uint32_t s = 17;
  for (float& e : in[0].ref().span<float>()) {
    s = s * 1664525U + 1013904223U;
    e = (static_cast<float>(s >> 8) / 16777216.0F - 0.5F) * 6;
  }
  const auto out = session.run(in);
  Outcome o;
  o.prepared = session.prepared();
  o.obtained = session.last_run().arena_bytes;
  const auto y = out.at(0).ref().span<const float>();
  o.y.assign(y.begin(), y.end());
  return o;
}

// Pre-norm block: LN, Linear, GELU, Linear, residual, then a final LN and the other GELU form.
BuiltGraph block(int64_t opset, bool pow_forms, int gelu_order) {
  BuilderOptions options;
  options.opset = opset;
  GraphBuilder b(runtime::op_registry(), options);
  const Var x =
      b.input("x", DType::float32, {Dim::named("N"), Dim::known(kSeq), Dim::known(kWidth)});
  const Var h = decomposed_layer_norm(b, x, kWidth, {opset, pow_forms, true, 3});
  const Var up = testing::erf_gelu(b, linear(b, h, kWidth, 4 * kWidth, 10), gelu_order);
  const Var down = linear(b, up, 4 * kWidth, kWidth, 20, /*bias_first=*/true);
  const Var r = b.add(down, x);
  const Var n = decomposed_layer_norm(b, r, kWidth, {opset, !pow_forms, false, 30});
  b.output(testing::tanh_gelu(b, n, pow_forms), "y");
  return b.to_graph();
}

TEST(FusedPatternsSession, ATransformerBlockGivesTheUnfusedOutputsInASmallerArena) {
  for (const int64_t opset : {14, 18}) {
    for (const bool pow_forms : {true, false}) {
      for (const int order : {0, 1, 2}) {
        const std::string what = "opset " + std::to_string(opset) +
                                 (pow_forms ? " Pow forms" : " Mul forms") + ", GELU order " +
                                 std::to_string(order);
        const BuiltGraph built = block(opset, pow_forms, order);
        const Outcome fused = run(*built.model, true, 2);
        const Outcome apart = run(*built.model, false, 2);
        std::map<std::string, int> ops;
        for (const std::string& line : fused.prepared.patterns) {
          ++ops[line.substr(0, line.find(' '))];
        }
        EXPECT_EQ(ops["LayerNormalization"], 2) << what;
        EXPECT_EQ(ops["Gelu"], 2) << what;
        EXPECT_EQ(ops["footprint::MatMulAdd"], 2) << what;
        EXPECT_TRUE(apart.prepared.patterns.empty()) << what;
        EXPECT_LT(fused.prepared.steps, apart.prepared.steps) << what;
        EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes) << what;
        EXPECT_LE(fused.obtained, apart.obtained) << what;
        ASSERT_EQ(fused.y.size(), apart.y.size()) << what;
        ASSERT_EQ(fused.y.size(), static_cast<size_t>(2 * kSeq * kWidth)) << what;
        size_t nonzero = 0;
        for (size_t i = 0; i < fused.y.size(); ++i) {
          ASSERT_NEAR(fused.y[i], apart.y[i], 2e-5F * (1 + std::abs(apart.y[i])))
              << what << " at " << i;
          nonzero += std::abs(apart.y[i]) > 1e-3F ? 1 : 0;
        }
        EXPECT_GT(nonzero, fused.y.size() / 2) << what;
      }
    }
  }
}

}  // namespace
}  // namespace footprint::graph
