// Float32 carriers of 16-bit activations (graph::carry_float32): a float16 or bfloat16 network
// whose activations pass between kernels that compute in float32 anyway stores them as float32
// holding the 16-bit values, and gives the bits the 16-bit graph gives. The values are seeded
// reals (not small integers), so every rounding the 16-bit graph makes shows if a carrier run
// skipped or doubled one; the arena obtained is the one planned either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "footprint/core/float16.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/prepare_graph.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "runtime/fused_outcome.hpp"

namespace footprint::graph {
namespace {

using testing::Outcome;
using testing::run_once;

uint16_t to_bits(DType t, float v) {
  return t == DType::float16 ? half_from_float(v) : bfloat16_from_float(v);
}

// Seeded reals in [-scale, scale), stored as `t`.
SharedValue reals(DType t, std::vector<int64_t> dims, uint32_t seed, float scale) {
  auto v = HostValue::make(t, std::move(dims));
  uint32_t s = seed;
  for (uint16_t& e : v->span<uint16_t>()) {
    s = s * 1664525U + 1013904223U;
    e = to_bits(t, (static_cast<float>(s >> 8) / 8388608.0F - 1.0F) * scale);
  }
  return v;
}

Attr ints(const char* name, std::vector<int64_t> v) {
  return Attr::of(name, std::move(v));
}

// A MobileNetV3-style block as onnxconverter-common's keep_io_types writes it: x float
// [N, 8, 12, 12] -> Cast -> Conv 3x3 + HardSwish (8 -> 16) -> depthwise Conv 3x3 + Relu ->
// squeeze-and-excitation (GlobalAveragePool, Conv 1x1 + Relu, Conv 1x1 + HardSigmoid, Mul) ->
// Conv 1x1 (16 -> 16) -> Add with the first Conv's output -> Relu -> GlobalAveragePool ->
// Flatten -> Gemm (16 -> 10) -> Cast: y float [N, 10].
std::shared_ptr<const Model> block(DType t) {
  GraphBuilder b{runtime::op_registry()};
  const Var x = b.input("x", DType::float32,
                        {Dim::named("N"), Dim::known(8), Dim::known(12), Dim::known(12)});
  const Var h = b.op1("Cast", {x}, {Attr::of("to", static_cast<int64_t>(t))});
  const Var c1 =
      b.op1("Conv",
            {h, b.constant(reals(t, {16, 8, 3, 3}, 3, 0.3F)), b.constant(reals(t, {16}, 4, 0.5F))},
            {ints("pads", {1, 1, 1, 1})});
  const Var a1 = b.op1("HardSwish", {c1});
  const Var dw = b.op1("Conv", {a1, b.constant(reals(t, {16, 1, 3, 3}, 5, 0.5F))},
                       {ints("pads", {1, 1, 1, 1}), Attr::of("group", int64_t{16})});
  const Var a2 = b.op1("Relu", {dw});
  const Var squeeze = b.op1("GlobalAveragePool", {a2});
  const Var s1 =
      b.op1("Relu", {b.op1("Conv", {squeeze, b.constant(reals(t, {4, 16, 1, 1}, 6, 0.5F)),
                                    b.constant(reals(t, {4}, 7, 0.2F))})});
  const Var s2 =
      b.op1("HardSigmoid", {b.op1("Conv", {s1, b.constant(reals(t, {16, 4, 1, 1}, 8, 0.5F)),
                                           b.constant(reals(t, {16}, 9, 0.2F))})});
  const Var excited = b.op1("Mul", {a2, s2});
  const Var project = b.op1("Conv", {excited, b.constant(reals(t, {16, 16, 1, 1}, 10, 0.4F))});
  const Var sum = b.op1("Relu", {b.op1("Add", {project, a1})});
  const Var pooled = b.op1("Flatten", {b.op1("GlobalAveragePool", {sum})});
  const Var logits = b.op1(
      "Gemm",
      {pooled, b.constant(reals(t, {10, 16}, 11, 0.5F)), b.constant(reals(t, {10}, 12, 0.1F))},
      {Attr::of("transB", int64_t{1})});
  b.output(b.op1("Cast", {logits}, {Attr::of("to", static_cast<int64_t>(DType::float32))}), "y");
  return std::move(b.to_graph().model);
}

std::vector<runtime::Tensor> images(int64_t n) {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{n, 8, 12, 12});
  testing::seeded(in[0], 23, 4.0F);
  return in;
}

TEST(Float32Carriers, CarriedBlockGivesTheBitsOfTheSixteenBitOne) {
  for (const DType t : {DType::float16, DType::bfloat16}) {
    const std::shared_ptr<const Model> model = block(t);
    for (const int threads : {1, 2}) {
      const std::string what =
          std::string(dtype_name(t)) + " at " + std::to_string(threads) + " threads";
      const Outcome carried = run_once(*model, true, images(3), threads, true);
      const Outcome kept = run_once(*model, true, images(3), threads, false);
      // Every activation from the first Cast's output to the Gemm's: the Cast's, the layout
      // change's, the two convolutions', the squeeze-and-excitation's, the projection's, the
      // Add+Relu's, the pool's, the layout change back and the Flatten's.
      EXPECT_EQ(carried.prepared.carried.values, 11u) << what;
      EXPECT_EQ(carried.prepared.carried.rounds_to, t) << what;
      EXPECT_EQ(kept.prepared.carried.values, 0u) << what;
      EXPECT_EQ(carried.obtained, carried.prepared.planned_arena_bytes) << what;
      EXPECT_EQ(kept.obtained, kept.prepared.planned_arena_bytes) << what;
      EXPECT_NE(carried.prepared.planned_arena_bytes, kept.prepared.planned_arena_bytes) << what;
      testing::expect_same_varied_outputs(carried, kept, what);
    }
  }
}

// The dtype of the value named `name` in g, or of its channels-last form (graph::to_channels_last
// names it so), which g must have.
DType dtype_of(const Graph& g, const std::string& name) {
  auto id = g.find(name);
  if (!id) id = g.find(name + "/channels_last");
  if (!id) {
    ADD_FAILURE() << "no value " << name;
    return DType::undefined;
  }
  return g.value(*id).dtype;
}

TEST(Float32Carriers, OnlyValuesBetweenCarrierRowsAreCarried) {
  const DType t = DType::float16;
  GraphBuilder b{runtime::op_registry()};
  const Var x = b.input("x", t, {Dim::known(1), Dim::known(4), Dim::known(6), Dim::known(6)});
  const auto conv = [&](const Var& in, uint32_t seed) {
    return b.op1("Conv", {in, b.constant(reals(t, {4, 4, 1, 1}, seed, 0.5F))});
  };
  // a: between two convolutions: carried. a2: read by a Softmax, whose row takes no carriers.
  const Var a = conv(x, 1);
  const Var a2 = conv(a, 2);
  b.output(b.op1("Softmax", {a2}), "y0");
  // p: read by an Add with a 16-bit constant operand, which takes carriers only without one.
  const Var p = conv(x, 3);
  const Var q = b.op1("Add", {p, b.constant(reals(t, {1, 4, 6, 6}, 4, 1.0F))});
  b.output(conv(q, 5), "y1");
  // u, v: a convolution, an Add of it to itself, a convolution: both carried.
  const Var u = conv(x, 6);
  const Var v = b.op1("Add", {u, u});
  b.output(conv(v, 7), "y2");
  // m: a graph output and read by a convolution: a graph output keeps its type.
  const Var m = conv(x, 8);
  b.output(m, "y3");
  b.output(conv(m, 9), "y4");
  BuiltGraph built = b.to_graph();
  Graph& g = built.graph;
  const std::string names[] = {a.name(), a2.name(), p.name(), q.name(), u.name(), v.name()};
  const PrepareReport r = prepare_graph(g, {}, {.fuse = true});
  EXPECT_EQ(dtype_of(g, names[0]), DType::float32);
  EXPECT_EQ(dtype_of(g, names[1]), t);
  EXPECT_EQ(dtype_of(g, names[2]), t);
  EXPECT_EQ(dtype_of(g, names[3]), t);
  EXPECT_EQ(dtype_of(g, names[4]), DType::float32);
  EXPECT_EQ(dtype_of(g, names[5]), DType::float32);
  EXPECT_EQ(dtype_of(g, "y3"), t);
  EXPECT_EQ(r.carried.values, 3u);
  EXPECT_EQ(r.carried.extra_bytes, 3 * 4 * 6 * 6 * 2);
  // The producers round what they carry; the readers compute as float16.
  for (const Node& n : g.nodes()) {
    const bool writes_carrier = std::any_of(n.outputs.begin(), n.outputs.end(), [&](ValueId o) {
      return g.value(o).dtype == DType::float32;
    });
    EXPECT_EQ(n.rounded_outputs != 0, writes_carrier) << n.name;
  }
  // --keep-16bit: nothing changes type.
  BuiltGraph kept = b.to_graph();
  const PrepareReport k = prepare_graph(kept.graph, {}, {.fuse = true, .carry_float32 = false});
  EXPECT_EQ(k.carried.values, 0u);
  EXPECT_EQ(dtype_of(kept.graph, names[0]), t);
}

}  // namespace
}  // namespace footprint::graph
