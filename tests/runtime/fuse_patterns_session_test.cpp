// The patterns graph::fuse rewrites (LayerNorm, GELU, MatMul + bias) as the runtime runs them: a
// transformer block written the ways exporters write it gives, fused, what it gives unfused, in
// the arena the fused graph planned, and that arena is no larger than the unfused one's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "graph/decomposed_ops.hpp"
#include "runtime/fused_outcome.hpp"

namespace footprint::graph {
namespace {

using testing::decomposed_layer_norm;
using testing::linear;

constexpr int64_t kSeq = 7;
constexpr int64_t kWidth = 48;

using testing::expect_same_outputs;
using testing::Outcome;
using testing::run_once;
using testing::seeded;

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
        std::vector<runtime::Tensor> in;
        in.emplace_back("x", DType::float32, std::vector<int64_t>{2, kSeq, kWidth});
        seeded(in[0], 17, 6.0F);
        const Outcome fused = run_once(*built.model, true, in);
        const Outcome apart = run_once(*built.model, false, in);
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
        ASSERT_EQ(fused.y.size(), static_cast<size_t>(2 * kSeq * kWidth)) << what;
        expect_same_outputs(fused, apart, 2e-5F, what);
        size_t nonzero = 0;
        for (const float v : apart.y) nonzero += std::abs(v) > 1e-3F ? 1 : 0;
        EXPECT_GT(nonzero, fused.y.size() / 2) << what;
      }
    }
  }
}

// Attention over more query rows than one scores block holds (4 heads x 300 keys: 216 rows a
// block, then 84), in each mask form: fused, it gives the unfused outputs in the arena it
// planned, which holds no [.., 300, 300] tensor.
TEST(FusedPatternsSession, AttentionInBlocksGivesTheUnfusedOutputs) {
  using F = testing::AttentionForm;
  constexpr int64_t kHeads = 4, kRows = 300, kKeys = 300, kDepth = 16, kValues = 24;
  const std::vector<std::pair<std::string, F>> forms = {
      {"additive mask", {F::Scale::div, F::Mask::add, false}},
      {"keep condition", {F::Scale::div, F::Mask::where, false}},
      {"no mask, Dropout", {F::Scale::mul, F::Mask::none, true}}};
  for (const auto& [what, form] : forms) {
    GraphBuilder b(runtime::op_registry());
    auto dims = [](const std::vector<int64_t>& d) {
      std::vector<Dim> out;
      out.reserve(d.size());
      for (const int64_t e : d) out.push_back(Dim::known(e));
      return out;
    };
    const Var q = b.input("q", DType::float32, dims({1, kHeads, kRows, kDepth}));
    const Var kt = b.input("kt", DType::float32, dims({1, kHeads, kDepth, kKeys}));
    const Var v = b.input("v", DType::float32, dims({1, kHeads, kKeys, kValues}));
    Var mask;
    if (form.mask == F::Mask::add) {
      mask = b.constant(testing::seeded_floats({1, 1, 1, kKeys}, 9, 4.0F));
    } else if (form.mask == F::Mask::where) {
      auto keep = HostValue::make(DType::boolean, {1, 1, kRows, kKeys});
      auto k = keep->span<bool>();
      for (int64_t r = 0; r < kRows; ++r) {
        for (int64_t c = 0; c < kKeys; ++c) k[static_cast<size_t>(r * kKeys + c)] = c <= r;
      }
      mask = b.constant(keep);
    }
    b.output(testing::decomposed_attention(b, q, kt, v, mask, form), "y");
    const BuiltGraph built = b.to_graph();
    std::vector<runtime::Tensor> in;
    in.emplace_back("q", DType::float32, std::vector<int64_t>{1, kHeads, kRows, kDepth});
    in.emplace_back("kt", DType::float32, std::vector<int64_t>{1, kHeads, kDepth, kKeys});
    in.emplace_back("v", DType::float32, std::vector<int64_t>{1, kHeads, kKeys, kValues});
    for (size_t i = 0; i < in.size(); ++i) seeded(in[i], static_cast<uint32_t>(3 + i), 4.0F);
    const Outcome fused = run_once(*built.model, true, in);
    const Outcome apart = run_once(*built.model, false, in);
    ASSERT_EQ(fused.prepared.patterns.size(), 1u) << what;
    EXPECT_EQ(fused.prepared.patterns[0].rfind("footprint::Attention", 0), 0u) << what;
    EXPECT_EQ(fused.prepared.steps, 1u) << what;
    EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes) << what;
    const uint64_t scores = uint64_t{kHeads} * kRows * kKeys * sizeof(float);
    EXPECT_LT(fused.obtained, scores) << what << ": the scores never take a whole tensor";
    EXPECT_GE(apart.obtained, scores) << what;
    expect_same_outputs(fused, apart, 1e-5F, what);
  }
}

// A float16 or bfloat16 attention (Cast in, Cast out) fused rounds where each node it replaces
// stored 16 bits: after the product, the scale, the mask and the softmax, so it gives the
// unfused graph's outputs, in one scores block and in several (without the rounding after the
// product, 8 of the 12 cases differ).
TEST(FusedPatternsSession, SixteenBitAttentionRoundsAsItsNodesStored) {
  using F = testing::AttentionForm;
  constexpr int64_t kHeads = 4, kDepth = 24, kValues = 16;
  for (const DType t : {DType::float16, DType::bfloat16}) {
    for (const int64_t rows : {12, 300}) {
      const std::vector<std::pair<std::string, F>> forms = {
          {"/ sqrt(24), + mask", {F::Scale::div, F::Mask::add, false, 4.898979485566356, t}},
          {"/ sqrt(24), Where", {F::Scale::div, F::Mask::where, false, 4.898979485566356, t}},
          {"* 1 / 8, Dropout", {F::Scale::mul, F::Mask::none, true, 8, t}}};
      for (const auto& [form_name, form] : forms) {
        const std::string what =
            std::string(dtype_name(t)) + ", " + std::to_string(rows) + " rows: " + form_name;
        GraphBuilder b(runtime::op_registry());
        auto input = [&](const std::string& name, const std::vector<int64_t>& d) {
          std::vector<Dim> dims;
          dims.reserve(d.size());
          for (const int64_t e : d) dims.push_back(Dim::known(e));
          return b.op1("Cast", {b.input(name, DType::float32, dims)},
                       {Attr::of("to", static_cast<int64_t>(t))});
        };
        const Var q = input("q", {1, kHeads, rows, kDepth});
        const Var kt = input("kt", {1, kHeads, kDepth, rows});
        const Var v = input("v", {1, kHeads, rows, kValues});
        Var mask;
        if (form.mask == F::Mask::add) {
          mask =
              b.constant(testing::stored_as(testing::seeded_floats({1, 1, 1, rows}, 9, 4.0F), t));
        } else if (form.mask == F::Mask::where) {
          auto keep = HostValue::make(DType::boolean, {1, 1, rows, rows});
          auto k = keep->span<bool>();
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = 0; c < rows; ++c) k[static_cast<size_t>(r * rows + c)] = c <= r;
          }
          mask = b.constant(keep);
        }
        b.output(b.op1("Cast", {testing::decomposed_attention(b, q, kt, v, mask, form)},
                       {Attr::of("to", static_cast<int64_t>(DType::float32))}),
                 "y");
        const BuiltGraph built = b.to_graph();
        std::vector<runtime::Tensor> in;
        in.emplace_back("q", DType::float32, std::vector<int64_t>{1, kHeads, rows, kDepth});
        in.emplace_back("kt", DType::float32, std::vector<int64_t>{1, kHeads, kDepth, rows});
        in.emplace_back("v", DType::float32, std::vector<int64_t>{1, kHeads, rows, kValues});
        for (size_t i = 0; i < in.size(); ++i) seeded(in[i], static_cast<uint32_t>(3 + i), 4.0F);
        const Outcome apart = run_once(*built.model, false, in);
        for (const int threads : {1, 2}) {
          const Outcome fused = run_once(*built.model, true, in, threads);
          EXPECT_TRUE(testing::made_pattern(fused, "footprint::Attention")) << what;
          EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes) << what;
          testing::expect_same_varied_outputs(fused, apart, what);
        }
      }
    }
  }
}

// A channel shuffle between convolutions runs channels-last (NhwcChannelShuffle), one on the
// graph's input plain (ChannelShuffle): both permute the channels exactly as the Reshape,
// Transpose and Reshape did.
TEST(FusedPatternsSession, AChannelShuffleGivesTheUnfusedOutputsInEitherLayout) {
  for (const bool between_convolutions : {true, false}) {
    GraphBuilder b(runtime::op_registry());
    const Var x = b.input("x", DType::float32,
                          {Dim::named("N"), Dim::known(12), Dim::known(6), Dim::known(6)});
    Var y = x;
    if (between_convolutions) {
      y = b.conv(y, b.constant(testing::seeded_floats({12, 12, 1, 1}, 5, 1.0F)), Var(), {1, 1},
                 {0, 0, 0, 0});
    }
    y = testing::channel_shuffle(b, y, 4);
    if (between_convolutions) {
      y = b.conv(y, b.constant(testing::seeded_floats({12, 3, 3, 3}, 6, 1.0F)), Var(), {1, 1},
                 {1, 1, 1, 1}, 4);
    }
    b.output(y, "y");
    const BuiltGraph built = b.to_graph();
    std::vector<runtime::Tensor> in;
    in.emplace_back("x", DType::float32, std::vector<int64_t>{2, 12, 6, 6});
    seeded(in[0], 3, 2.0F);
    const Outcome fused = run_once(*built.model, true, in);
    const Outcome apart = run_once(*built.model, false, in);
    ASSERT_EQ(fused.prepared.patterns.size(), 1u);
    EXPECT_EQ(fused.prepared.patterns[0].rfind("footprint::ChannelShuffle", 0), 0u);
    EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes);
    if (between_convolutions) {
      EXPECT_EQ(fused.prepared.layout_changes, 2u) << "x in and y out, none around the shuffle";
    }
    expect_same_outputs(fused, apart, 1e-5F, "");
    if (!between_convolutions) {
      // A permutation alone: the same values, moved.
      EXPECT_EQ(fused.y, apart.y);
      EXPECT_NE(fused.y, std::vector<float>(in[0].ref().span<const float>().begin(),
                                            in[0].ref().span<const float>().end()));
    }
  }
}

// A HardSwish written out (Paddle's export) after a convolution runs as the convolution's
// epilogue and gives what the five nodes gave.
TEST(FusedPatternsSession, AWrittenOutHardSwishRunsInsideTheConvolution) {
  for (const bool divide_first : {false, true}) {
    GraphBuilder b(runtime::op_registry());
    const Var x = b.input("x", DType::float32,
                          {Dim::named("N"), Dim::known(6), Dim::known(7), Dim::known(7)});
    const Var c = b.conv(x, b.constant(testing::seeded_floats({8, 6, 3, 3}, 7, 1.0F)), Var(),
                         {1, 1}, {1, 1, 1, 1});
    b.output(testing::decomposed_hard_swish(b, c, {13, divide_first, false}), "y");
    const BuiltGraph built = b.to_graph();
    std::vector<runtime::Tensor> in;
    in.emplace_back("x", DType::float32, std::vector<int64_t>{2, 6, 7, 7});
    seeded(in[0], 4, 4.0F);
    const Outcome fused = run_once(*built.model, true, in);
    const Outcome apart = run_once(*built.model, false, in);
    ASSERT_EQ(fused.prepared.patterns.size(), 1u);
    EXPECT_EQ(fused.prepared.fused.size(), 1u) << "the HardSwish is the Conv's epilogue";
    EXPECT_EQ(fused.obtained, fused.prepared.planned_arena_bytes);
    expect_same_outputs(fused, apart, 1e-5F, "");
    size_t clipped = 0;  // outputs past the Clip's bounds on either side: both pieces ran
    for (const float v : apart.y) clipped += v == 0.0F || v > 3.0F ? 1 : 0;
    EXPECT_GT(clipped, fused.y.size() / 20);
  }
}

}  // namespace
}  // namespace footprint::graph
