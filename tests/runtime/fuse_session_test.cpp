// Fusion (graph/fuse.hpp) as the runtime runs it: every epilogue, through every kernel path that
// takes one (oneDNN post-ops on plain and blocked convolutions, our pass after gemm-based ones,
// the depthwise kernel's per-plane pass, MatMul and Gemm), gives what the unfused graph gives,
// inside the arena the fused graph planned.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"

namespace footprint::graph {
namespace {

SharedValue floats(std::vector<int64_t> dims, uint32_t seed, float scale) {
  auto v = HostValue::make(DType::float32, std::move(dims));
  uint32_t s = seed;
  for (float& e : v->span<float>()) {
    s = s * 1664525U + 1013904223U;
    e = (static_cast<float>(s >> 8) / 16777216.0F - 0.5F) * scale;
  }
  return v;
}

SharedValue scalar(float x) {
  auto v = HostValue::make(DType::float32, {});
  v->span<float>()[0] = x;
  return v;
}

// Applies the activation under test to `y` in the builder.
using Activation = std::function<Var(GraphBuilder&, const Var&)>;

struct Case {
  std::string name;
  Activation act;
};

std::vector<Case> activations() {
  return {
      {"Relu", [](GraphBuilder& b, const Var& y) { return b.relu(y); }},
      {"Clip",
       [](GraphBuilder& b, const Var& y) {
         return b.clip(y, b.constant(scalar(0)), b.constant(scalar(6)));
       }},
      {"LeakyRelu",
       [](GraphBuilder& b, const Var& y) {
         return b.op1("LeakyRelu", {y}, {Attr::of("alpha", 0.1F)});
       }},
      {"Sigmoid", [](GraphBuilder& b, const Var& y) { return b.op1("Sigmoid", {y}); }},
      {"Tanh", [](GraphBuilder& b, const Var& y) { return b.op1("Tanh", {y}); }},
      {"SiLU", [](GraphBuilder& b, const Var& y) { return b.mul(y, b.op1("Sigmoid", {y})); }},
      {"HardSigmoid",
       [](GraphBuilder& b, const Var& y) {
         return b.op1("HardSigmoid", {y}, {Attr::of("alpha", 0.3F), Attr::of("beta", 0.4F)});
       }},
      {"HardSwish", [](GraphBuilder& b, const Var& y) { return b.op1("HardSwish", {y}); }},
  };
}

struct Layer {
  std::string name;
  std::vector<int64_t> input;
  // The host node: its output goes to the activation.
  std::function<Var(GraphBuilder&, const Var&)> host;
};

std::vector<Layer> layers() {
  return {
      {"pointwise conv (gemm)",
       {1, 16, 12, 12},
       [](GraphBuilder& b, const Var& x) {
         return b.conv(x, b.constant(floats({24, 16, 1, 1}, 1, 0.5F)),
                       b.constant(floats({24}, 2, 0.5F)), {1, 1}, {0, 0, 0, 0});
       }},
      {"3x3 conv (blocked)",
       {1, 16, 12, 12},
       [](GraphBuilder& b, const Var& x) {
         return b.conv(x, b.constant(floats({32, 16, 3, 3}, 3, 0.3F)),
                       b.constant(floats({32}, 4, 0.5F)), {1, 1}, {1, 1, 1, 1});
       }},
      {"depthwise conv",
       {1, 16, 12, 12},
       [](GraphBuilder& b, const Var& x) {
         return b.conv(x, b.constant(floats({16, 1, 3, 3}, 5, 0.8F)),
                       b.constant(floats({16}, 6, 0.5F)), {2, 2}, {1, 1, 1, 1}, 16);
       }},
      {"BatchNormalization",
       {2, 6, 5, 5},
       [](GraphBuilder& b, const Var& x) {
         auto var = floats({6}, 14, 0.5F);
         for (float& v : var->span<float>()) v += 1.0F;
         return b.op1("BatchNormalization",
                      {x, b.constant(floats({6}, 10, 1.0F)), b.constant(floats({6}, 11, 1.0F)),
                       b.constant(floats({6}, 12, 1.0F)), b.constant(var)});
       }},
      {"MatMul",
       {6, 40},
       [](GraphBuilder& b, const Var& x) {
         return b.matmul(x, b.constant(floats({40, 24}, 7, 0.4F)));
       }},
      {"Gemm",
       {6, 40},
       [](GraphBuilder& b, const Var& x) {
         return b.gemm(x, b.constant(floats({24, 40}, 8, 0.4F)), b.constant(floats({24}, 9, 0.5F)),
                       true);
       }},
  };
}

std::vector<float> run(const graph::Model& model, const std::vector<int64_t>& dims, bool fuse,
                       runtime::PreparedStats& prepared, uint64_t& obtained) {
  runtime::SessionOptions options;
  options.fuse = fuse;
  runtime::Session session(model, options);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, dims);
  uint32_t s = 11;
  for (float& e : in[0].ref().span<float>()) {
    s = s * 1664525U + 1013904223U;
    e = (static_cast<float>(s >> 8) / 16777216.0F - 0.5F) * 4;
  }
  const auto out = session.run(in);
  prepared = session.prepared();
  obtained = session.last_run().arena_bytes;
  const auto y = out.at(0).ref().span<const float>();
  return {y.begin(), y.end()};
}

TEST(FusedSession, EveryEpilogueOnEveryKernelGivesTheUnfusedOutputs) {
  for (const Layer& layer : layers()) {
    for (const Case& c : activations()) {
      const std::string what = c.name + " after " + layer.name;
      GraphBuilder b(runtime::op_registry());
      std::vector<Dim> dims;
      for (const int64_t d : layer.input) dims.push_back(Dim::known(d));
      const Var x = b.input("x", DType::float32, dims);
      b.output(c.act(b, layer.host(b, x)), "y");
      const BuiltGraph built = b.to_graph();
      runtime::PreparedStats fused;
      runtime::PreparedStats apart;
      uint64_t fused_arena = 0;
      uint64_t apart_arena = 0;
      const std::vector<float> y = run(*built.model, layer.input, true, fused, fused_arena);
      const std::vector<float> want = run(*built.model, layer.input, false, apart, apart_arena);
      ASSERT_EQ(fused.fused.size(), 1u) << what;
      EXPECT_TRUE(apart.fused.empty()) << what;
      // The fused graph also changes the layout around a 2-D convolution (to_channels_last).
      EXPECT_EQ(fused.steps - fused.layout_changes + (c.name == "SiLU" ? 2 : 1), apart.steps)
          << what;
      EXPECT_EQ(fused_arena, fused.planned_arena_bytes) << what;
      ASSERT_EQ(y.size(), want.size()) << what;
      size_t changed = 0;  // the activation did something: not all of it an identity
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y[i], want[i], 2e-5F * (1 + std::abs(want[i]))) << what << " at " << i;
      }
      // And it was applied: the fused output is not the host's bare output.
      GraphBuilder bare(runtime::op_registry());
      const Var bx = bare.input("x", DType::float32, dims);
      bare.output(layer.host(bare, bx), "y");
      const BuiltGraph bare_built = bare.to_graph();
      runtime::PreparedStats unused;
      uint64_t unused_arena = 0;
      const std::vector<float> host =
          run(*bare_built.model, layer.input, true, unused, unused_arena);
      for (size_t i = 0; i < y.size(); ++i) changed += std::abs(host[i] - y[i]) > 1e-4F ? 1 : 0;
      EXPECT_GT(changed, y.size() / 10) << what;
    }
  }
}

}  // namespace
}  // namespace footprint::graph
