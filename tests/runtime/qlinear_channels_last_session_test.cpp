// A QOperator CNN as onnxruntime's quantize_static writes one, run channels-last
// (graph::to_channels_last with graph::fuse on): QLinearConv becomes NhwcQLinearConv, and the
// 8-bit MaxPool, QLinearConcat, QLinearAdd, QLinearAveragePool, QLinearGlobalAveragePool and the
// final DequantizeLinear between and after them follow, so the chain changes layout once on the
// way in and once on the way out. The int8 arithmetic is the plain graph's, so the outputs are
// equal, not close; weights of a nonzero zero point (uint8 per tensor, int8 per channel in a
// grouped convolution) take the channels-last window sums; the arena obtained is the one planned.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "runtime/fused_outcome.hpp"

namespace footprint::graph {
namespace {

using testing::expect_same_varied_outputs;
using testing::Outcome;
using testing::run_once;
using testing::seeded;

constexpr std::string_view kMs = "com.microsoft";

SharedValue scalar_f(float v) {
  auto t = HostValue::make(DType::float32, {});
  t->span<float>()[0] = v;
  return t;
}

template <class T>
SharedValue filled(DType type, std::vector<int64_t> dims, uint32_t seed, int lo, int hi) {
  auto t = HostValue::make(type, std::move(dims));
  uint32_t s = seed;
  for (T& e : t->span<T>()) {
    s = s * 1664525U + 1013904223U;
    e = static_cast<T>(lo + static_cast<int>((s >> 8) % static_cast<uint32_t>(hi - lo + 1)));
  }
  return t;
}

struct Builder {
  GraphBuilder b{runtime::op_registry()};

  Var f(float v) { return b.constant(scalar_f(v)); }
  Var u8(uint8_t v) {
    auto t = HostValue::make(DType::uint8, {});
    t->span<uint8_t>()[0] = v;
    return b.constant(t);
  }
  Var ms(std::string_view op, const std::vector<Var>& in, const std::vector<Attr>& attrs = {}) {
    return b.op(op, in, attrs, 1, kMs)[0];
  }

  // QLinearConv of x (scale xs, zero xz) to `out` channels, y at (ys, yz); w in `wt`, its zero
  // point `wz` (one, or one per channel), per-channel scales, an int32 bias.
  Var conv(const Var& x, float xs, uint8_t xz, int64_t in, int64_t out, int64_t k, int64_t group,
           DType wt, SharedValue wz, float ys, uint8_t yz, uint32_t seed) {
    const std::vector<int64_t> dims{out, in / group, k, k};
    SharedValue w = wt == DType::uint8 ? filled<uint8_t>(wt, dims, seed, 0, 255)
                                       : filled<int8_t>(wt, dims, seed, -127, 127);
    auto scales = HostValue::make(DType::float32, {out});
    for (int64_t c = 0; c < out; ++c) scales->span<float>()[c] = 0.002F + 0.0004F * (c % 7);
    SharedValue bias = filled<int32_t>(DType::int32, {out}, seed + 1, -400, 400);
    const int64_t p = k / 2;
    return b.op1("QLinearConv",
                 {x, f(xs), u8(xz), b.constant(w), b.constant(scales), b.constant(std::move(wz)),
                  f(ys), u8(yz), b.constant(bias)},
                 {Attr::of("pads", std::vector<int64_t>{p, p, p, p}), Attr::of("group", group)});
  }
};

// x float [N, 8, 12, 12] -> Q -> conv 3x3 (8 -> 16, int8 w) -> MaxPool 2x2 -> two branches:
// a 1x1 conv with uint8 w of zero point 121 (16 -> 8) and a depthwise 3x3 with per-channel int8
// zero points (16 -> 16) then a 1x1 (16 -> 8) -> QLinearConcat (their scales differ) ->
// QLinearAdd with a grouped 1x1 and a 1x1 of the pool -> QLinearAveragePool 2x2 ->
// QLinearGlobalAveragePool
// -> DequantizeLinear: y float [N, 16, 1, 1].
std::shared_ptr<const Model> build() {
  Builder m;
  GraphBuilder& b = m.b;
  const Var x = b.input("x", DType::float32,
                        {Dim::named("N"), Dim::known(8), Dim::known(12), Dim::known(12)});
  const Var q = b.op1("QuantizeLinear", {x, m.f(0.03F), m.u8(128)});
  const auto zeros_i8 = [](int64_t n) { return HostValue::zeros(DType::int8, {n}); };
  const Var c1 = m.conv(q, 0.03F, 128, 8, 16, 3, 1, DType::int8, zeros_i8(16), 0.05F, 0, 11);
  const Var pooled = b.op1("MaxPool", {c1},
                           {Attr::of("kernel_shape", std::vector<int64_t>{2, 2}),
                            Attr::of("strides", std::vector<int64_t>{2, 2})});
  auto wz_u8 = HostValue::make(DType::uint8, {});
  wz_u8->span<uint8_t>()[0] = 121;
  const Var a = m.conv(pooled, 0.05F, 0, 16, 8, 1, 1, DType::uint8, wz_u8, 0.04F, 10, 12);
  SharedValue dw_zeros = filled<int8_t>(DType::int8, {16}, 5, -3, 3);
  const Var dw = m.conv(pooled, 0.05F, 0, 16, 16, 3, 16, DType::int8, dw_zeros, 0.06F, 5, 13);
  const Var bb = m.conv(dw, 0.06F, 5, 16, 8, 1, 1, DType::int8, zeros_i8(8), 0.07F, 20, 14);
  const Var cat = m.ms("QLinearConcat",
                       {m.f(0.05F), m.u8(15), a, m.f(0.04F), m.u8(10), bb, m.f(0.07F), m.u8(20)},
                       {Attr::of("axis", int64_t{1})});
  // A 1x1 in 4 groups of 4 channels (16 -> 24) with uint8 weights of per-channel zero points,
  // which oneDNN's jit kernels may take only in its dense form, then back to 16.
  SharedValue grouped_zeros = filled<uint8_t>(DType::uint8, {24}, 6, 120, 136);
  const Var grouped =
      m.conv(pooled, 0.05F, 0, 16, 24, 1, 4, DType::uint8, grouped_zeros, 0.045F, 12, 16);
  const Var side =
      m.conv(grouped, 0.045F, 12, 24, 16, 1, 1, DType::int8, zeros_i8(16), 0.05F, 8, 15);
  const Var sum = m.ms(
      "QLinearAdd", {cat, m.f(0.05F), m.u8(15), side, m.f(0.05F), m.u8(8), m.f(0.08F), m.u8(30)});
  const Var avg = m.ms("QLinearAveragePool", {sum, m.f(0.08F), m.u8(30), m.f(0.06F), m.u8(25)},
                       {Attr::of("kernel_shape", std::vector<int64_t>{2, 2}),
                        Attr::of("strides", std::vector<int64_t>{2, 2})});
  const Var global =
      m.ms("QLinearGlobalAveragePool", {avg, m.f(0.06F), m.u8(25), m.f(0.01F), m.u8(40)});
  b.output(b.op1("DequantizeLinear", {global, m.f(0.01F), m.u8(40)}), "y");
  return std::move(b.to_graph().model);
}

std::vector<runtime::Tensor> images(int64_t n) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{n, 8, 12, 12});
  seeded(in[0], 9, 6.0F);
  return in;
}

TEST(QLinearChannelsLast, AQuantizedChainRunsChannelsLastWithThePlainOutputs) {
  const std::shared_ptr<const Model> model = build();
  for (const int threads : {1, 2}) {
    const Outcome last = run_once(*model, true, images(2), threads);
    const Outcome plain = run_once(*model, false, images(2), threads);
    if (last.prepared.channels_last_nodes == 0) {
      GTEST_SKIP() << "this CPU has no VNNI: QLinearConv stays on the plain loops";
    }
    // 6 convolutions, the pool, the concat, the add, both average pools and the DequantizeLinear.
    EXPECT_EQ(last.prepared.channels_last_nodes, 12u);
    EXPECT_EQ(last.prepared.layout_changes, 2u);  // after Q, after the DequantizeLinear
    EXPECT_EQ(plain.prepared.channels_last_nodes, 0u);
    EXPECT_EQ(last.obtained, last.prepared.planned_arena_bytes);
    expect_same_varied_outputs(last, plain, "at " + std::to_string(threads) + " threads");
  }
}

}  // namespace
}  // namespace footprint::graph
