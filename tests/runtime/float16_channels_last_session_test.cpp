// A float16 (and a bfloat16) CNN run channels-last (graph::to_channels_last with graph::fuse on):
// the convolutions, MaxPool, AveragePool and GlobalAveragePool on the 16-bit floats move with
// them, so the chain changes layout once on the way in and once on the way out, as the float32
// one does. The inputs and weights are small integers, so every convolution's sum is exact in
// float whatever order oneDNN adds in; the pools compare and sum as the NCHW loops do, so the
// outputs are equal to the plain graph's, not close. A pool window hangs over the padding, an
// average excludes it, and the arena obtained is the one planned.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "footprint/core/float16.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "runtime/fused_outcome.hpp"

namespace footprint::graph {
namespace {

using testing::expect_same_varied_outputs;
using testing::Outcome;
using testing::run_once;

uint16_t to_bits(DType t, float v) {
  return t == DType::float16 ? half_from_float(v) : bfloat16_from_float(v);
}

// Integers in [lo, hi], seeded, stored as `t`.
SharedValue integers(DType t, std::vector<int64_t> dims, uint32_t seed, int lo, int hi) {
  auto v = HostValue::make(t, std::move(dims));
  uint32_t s = seed;
  for (uint16_t& e : v->span<uint16_t>()) {
    s = s * 1664525U + 1013904223U;
    const int k = lo + static_cast<int>((s >> 8) % static_cast<uint32_t>(hi - lo + 1));
    e = to_bits(t, static_cast<float>(k));
  }
  return v;
}

Attr ints(const char* name, std::vector<int64_t> v) {
  return Attr::of(name, std::move(v));
}

// x float [N, 8, 13, 13] -> Cast -> Conv 3x3 pad 1 (8 -> 16) -> MaxPool 3x3 stride 2 pad 1 ->
// AveragePool 2x2 stride 1 pad 1 (padding not counted) -> Conv 1x1 (16 -> 24) + Relu ->
// GlobalAveragePool -> Cast: y float [N, 24, 1, 1].
std::shared_ptr<const Model> build(DType t) {
  GraphBuilder b{runtime::op_registry()};
  const Var x = b.input("x", DType::float32,
                        {Dim::named("N"), Dim::known(8), Dim::known(13), Dim::known(13)});
  const Var h = b.op1("Cast", {x}, {Attr::of("to", static_cast<int64_t>(t))});
  const Var c1 = b.op1("Conv", {h, b.constant(integers(t, {16, 8, 3, 3}, 3, -2, 2))},
                       {ints("pads", {1, 1, 1, 1})});
  const Var mp =
      b.op1("MaxPool", {c1},
            {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})});
  const Var ap =
      b.op1("AveragePool", {mp},
            {ints("kernel_shape", {2, 2}), ints("strides", {1, 1}), ints("pads", {1, 1, 1, 1})});
  const Var c2 = b.op1("Conv", {ap, b.constant(integers(t, {24, 16, 1, 1}, 4, -2, 2)),
                                b.constant(integers(t, {24}, 5, -3, 3))});
  const Var r = b.op1("Relu", {c2});
  const Var g = b.op1("GlobalAveragePool", {r});
  b.output(b.op1("Cast", {g}, {Attr::of("to", static_cast<int64_t>(DType::float32))}), "y");
  return std::move(b.to_graph().model);
}

std::vector<runtime::Tensor> images(int64_t n) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{n, 8, 13, 13});
  uint32_t s = 17;
  for (float& e : in[0].ref().span<float>()) {
    s = s * 1664525U + 1013904223U;
    e = static_cast<float>(static_cast<int>((s >> 8) % 9U) - 4);
  }
  return in;
}

TEST(Float16ChannelsLast, SixteenBitPoolsRunChannelsLastWithThePlainOutputs) {
  for (const DType t : {DType::float16, DType::bfloat16}) {
    const std::shared_ptr<const Model> model = build(t);
    for (const int threads : {1, 2}) {
      const std::string what =
          std::string(dtype_name(t)) + " at " + std::to_string(threads) + " threads";
      const Outcome last = run_once(*model, true, images(2), threads);
      const Outcome plain = run_once(*model, false, images(2), threads);
      // Both convolutions and the three pools; in after the Cast, out before the last one.
      EXPECT_EQ(last.prepared.channels_last_nodes, 5u) << what;
      EXPECT_EQ(last.prepared.layout_changes, 2u) << what;
      EXPECT_EQ(plain.prepared.channels_last_nodes, 0u) << what;
      EXPECT_EQ(last.obtained, last.prepared.planned_arena_bytes) << what;
      expect_same_varied_outputs(last, plain, what);
    }
  }
}

}  // namespace
}  // namespace footprint::graph
