// graph::to_channels_last as a specification: which nodes move to channels-last rows, where the
// layout changes go, and that the moved graph computes what the plain one does inside the arena
// it planned.
#include "footprint/graph/channels_last.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "footprint/core/float16.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/fuse.hpp"
#include "footprint/graph/op_registry.hpp"
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

Var conv(GraphBuilder& b, const Var& x, int64_t in, int64_t out, int64_t k, uint32_t seed,
         int64_t group = 1) {
  const int64_t pad = k / 2;
  return b.conv(x, b.constant(floats({out, in / group, k, k}, seed, 0.6F)),
                b.constant(floats({out}, seed + 1, 0.4F)), {1, 1}, {pad, pad, pad, pad}, group);
}

// Op types of the graph's nodes, "footprint::NhwcConv" for the moved ones, counted.
std::map<std::string, int> ops_of(const Graph& g) {
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes()) ++ops[(n.domain.empty() ? "" : n.domain + "::") + n.op_type];
  return ops;
}

struct Moved {
  ChannelsLastReport report;
  std::map<std::string, int> ops;
};

Moved moved(const GraphBuilder& b) {
  BuiltGraph built = b.to_graph();
  fuse(built.graph);
  const auto outputs = [&] {
    std::vector<std::string> shapes;
    for (const ValueId out : built.graph.outputs()) {
      shapes.push_back(built.graph.value(out).name + built.graph.value(out).shape.to_string());
    }
    return shapes;
  };
  const std::vector<std::string> before = outputs();
  Moved m;
  m.report = to_channels_last(built.graph);
  m.ops = ops_of(built.graph);
  EXPECT_EQ(outputs(), before) << "graph outputs keep their names and NCHW shapes";
  return m;
}

struct Run {
  std::vector<float> y;
  runtime::PreparedStats prepared;
  uint64_t obtained = 0;
};

Run run(const graph::Model& model, const std::vector<int64_t>& dims, bool fuse) {
  runtime::SessionOptions options;
  options.fuse = fuse;
  runtime::Session session(model, options);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, dims);
  uint32_t s = 5;
  for (float& e : in[0].ref().span<float>()) {
    s = s * 1664525U + 1013904223U;
    e = (static_cast<float>(s >> 8) / 16777216.0F - 0.5F) * 3;
  }
  const auto out = session.run(in);
  Run r;
  r.prepared = session.prepared();
  r.obtained = session.last_run().arena_bytes;
  const auto y = out.at(0).ref().span<const float>();
  r.y.assign(y.begin(), y.end());
  return r;
}

// The moved graph gives the plain graph's outputs, inside the arena it planned.
void expect_same_outputs(const GraphBuilder& b, const std::vector<int64_t>& dims) {
  const BuiltGraph built = b.to_graph();
  const Run last = run(*built.model, dims, true);
  const Run plain = run(*built.model, dims, false);
  EXPECT_GT(last.prepared.channels_last_nodes, 0U);
  EXPECT_EQ(plain.prepared.channels_last_nodes, 0U);
  EXPECT_EQ(last.obtained, last.prepared.planned_arena_bytes);
  ASSERT_EQ(last.y.size(), plain.y.size());
  for (size_t i = 0; i < last.y.size(); ++i) {
    ASSERT_NEAR(last.y[i], plain.y[i], 1e-4F * (1 + std::abs(plain.y[i]))) << "at " << i;
  }
}

TEST(ChannelsLast, AChainOfConvolutionsStaysChannelsLastBetweenItsSteps) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(8), Dim::known(10), Dim::known(10)});
  Var y = b.relu(conv(b, x, 8, 16, 3, 1));
  y = conv(b, y, 16, 16, 1, 3);      // pointwise
  y = conv(b, y, 16, 16, 3, 5, 16);  // depthwise
  y = b.op1("MaxPool", {y},
            {Attr::of("kernel_shape", std::vector<int64_t>{2, 2}),
             Attr::of("strides", std::vector<int64_t>{2, 2})});
  b.output(y, "y");
  const Moved m = moved(b);
  EXPECT_EQ(m.report.nodes, 4U);
  EXPECT_EQ(m.report.layout_changes, 2U) << "one before the first convolution, one for y";
  EXPECT_EQ(m.ops.at("footprint::NhwcConv"), 3);
  EXPECT_EQ(m.ops.at("footprint::NhwcMaxPool"), 1);
  EXPECT_EQ(m.ops.at("footprint::ToChannelsLast"), 1);
  EXPECT_EQ(m.ops.at("footprint::FromChannelsLast"), 1);
  EXPECT_FALSE(m.ops.contains("Conv"));
  expect_same_outputs(b, {1, 8, 10, 10});
}

SharedValue halves(std::vector<int64_t> dims, uint32_t seed, float scale) {
  const SharedValue f = floats(dims, seed, scale);
  auto v = HostValue::make(DType::float16, std::move(dims));
  const auto from = f->span<const float>();
  auto to = v->span<uint16_t>();
  for (size_t i = 0; i < to.size(); ++i) to[i] = half_from_float(from[i]);
  return v;
}

std::vector<float> run_half(const graph::Model& model, const std::vector<int64_t>& dims, bool fuse,
                            runtime::PreparedStats* prepared) {
  runtime::SessionOptions options;
  options.fuse = fuse;
  runtime::Session session(model, options);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float16, dims);
  uint32_t s = 7;
  for (uint16_t& e : in[0].ref().span<uint16_t>()) {
    s = s * 1664525U + 1013904223U;
    e = half_from_float((static_cast<float>(s >> 8) / 16777216.0F - 0.5F) * 3);
  }
  const auto out = session.run(in);
  if (prepared != nullptr) *prepared = session.prepared();
  EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
  std::vector<float> y;
  for (const uint16_t h : out.at(0).ref().span<const uint16_t>()) y.push_back(float_from_half(h));
  return y;
}

// A float16 model's convolutions run channels-last as float32's do (on float32 copies,
// through_float32.hpp), the layout changes moving the 16-bit elements as they are.
TEST(ChannelsLast, Float16ConvolutionsStayChannelsLast) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float16, {Dim::known(1), Dim::known(8), Dim::known(9), Dim::known(7)});
  Var y = b.conv(x, b.constant(halves({16, 8, 3, 3}, 1, 0.6F)), b.constant(halves({16}, 2, 0.4F)),
                 {1, 1}, {1, 1, 1, 1});
  y = b.relu(y);
  y = b.conv(y, b.constant(halves({16, 1, 3, 3}, 3, 0.6F)), b.constant(halves({16}, 4, 0.4F)),
             {1, 1}, {1, 1, 1, 1}, 16);
  b.output(y, "y");
  const Moved m = moved(b);
  EXPECT_EQ(m.ops.at("footprint::NhwcConv"), 2);
  EXPECT_EQ(m.ops.at("footprint::ToChannelsLast"), 1);
  EXPECT_EQ(m.ops.at("footprint::FromChannelsLast"), 1);
  const BuiltGraph built = b.to_graph();
  runtime::PreparedStats last;
  const std::vector<float> got = run_half(*built.model, {1, 8, 9, 7}, true, &last);
  const std::vector<float> want = run_half(*built.model, {1, 8, 9, 7}, false, nullptr);
  EXPECT_GT(last.channels_last_nodes, 0U);
  ASSERT_EQ(got.size(), want.size());
  size_t nonzero = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    // Both run float32 convolutions on the same float32 copies and round once to float16: at
    // most one float16 step apart where oneDNN's two layouts sum in another order.
    ASSERT_NEAR(got[i], want[i], 1e-3F * (1 + std::abs(want[i]))) << "at " << i;
    nonzero += want[i] != 0 ? 1 : 0;
  }
  EXPECT_GT(nonzero, got.size() / 2);
}

// A residual Add, a Concat over channels, a squeeze-excitation scale ([N, C, 1, 1] by way of
// GlobalAveragePool and Sigmoid) and the convolution after them: all channels-last.
TEST(ChannelsLast, ResidualsConcatsAndScalesStayChannelsLast) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(2), Dim::known(8), Dim::known(7), Dim::known(9)});
  const Var a = conv(b, x, 8, 8, 3, 11);
  const Var sum = b.add(a, conv(b, a, 8, 8, 1, 13));
  const Var cat = b.op1("Concat", {sum, a}, {Attr::of("axis", int64_t{1})});
  const Var scale = b.op1("Sigmoid", {b.global_average_pool(cat)});
  b.output(conv(b, b.mul(cat, scale), 16, 4, 3, 17), "y");
  const Moved m = moved(b);
  EXPECT_EQ(m.report.layout_changes, 2U);
  for (const char* op : {"Add", "Mul", "Sigmoid"}) EXPECT_EQ(m.ops.at(op), 1) << op;
  EXPECT_EQ(m.ops.at("footprint::NhwcConcat"), 1);
  EXPECT_EQ(m.ops.at("footprint::NhwcGlobalAveragePool"), 1);
  EXPECT_EQ(m.ops.at("footprint::NhwcConv"), 3);
  expect_same_outputs(b, {2, 8, 7, 9});
}

// Conv -> BatchNormalization -> Relu, as unfolded exports have it: the normalisation follows the
// convolution channels-last (constant parameters, packed when preparing), the Relu inside it.
// A normalisation right after a convolution folds into it (graph::fuse, fold_channel_affine_test);
// one after the convolution's activation runs channels-last.
TEST(ChannelsLast, BatchNormalizationBetweenConvolutionsStaysChannelsLast) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(2), Dim::known(6), Dim::known(5), Dim::known(5)});
  const Var a = b.op1("LeakyRelu", {conv(b, x, 6, 12, 3, 51)}, {Attr::of("alpha", 0.2F)});
  auto positive = floats({12}, 55, 0.5F);
  for (float& v : positive->span<float>()) v += 1.0F;  // a variance
  const Var bn = b.op1("BatchNormalization",
                       {a, b.constant(floats({12}, 52, 1.0F)), b.constant(floats({12}, 53, 1.0F)),
                        b.constant(floats({12}, 54, 1.0F)), b.constant(positive)},
                       {Attr::of("epsilon", 1e-3F)});
  b.output(conv(b, b.relu(bn), 12, 4, 1, 57), "y");
  const Moved m = moved(b);
  EXPECT_EQ(m.ops.at("footprint::NhwcBatchNormalization"), 1);
  EXPECT_FALSE(m.ops.contains("Relu")) << "an epilogue of the normalisation";
  EXPECT_EQ(m.report.layout_changes, 2U);
  expect_same_outputs(b, {2, 6, 5, 5});
}

// A constant rank-4 operand (a per-channel scale stored as [1, C, 1, 1], a full-size offset) is
// changed to channels-last once, when preparing, like any constant.
TEST(ChannelsLast, ConstantOperandsChangeLayoutWhenPreparing) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(5), Dim::known(4), Dim::known(6)});
  // The Relu keeps the Mul from folding into the convolution's weights (graph::fuse).
  const Var a = b.relu(conv(b, x, 5, 7, 3, 61));
  const Var scaled = b.mul(a, b.constant(floats({1, 7, 1, 1}, 62, 2.0F)));
  const Var shifted = b.add(scaled, b.constant(floats({1, 7, 4, 6}, 63, 1.0F)));
  b.output(conv(b, shifted, 7, 3, 3, 64), "y");
  const Moved m = moved(b);
  EXPECT_EQ(m.ops.at("footprint::ToChannelsLast"), 3) << "x and the two constants";
  EXPECT_EQ(m.ops.at("footprint::FromChannelsLast"), 1);
  expect_same_outputs(b, {1, 5, 4, 6});
  const BuiltGraph built = b.to_graph();
  runtime::Session session(*built.model);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{1, 5, 4, 6});
  session.prepare(in);
  // x's layout change, the convolutions, the Mul and Add as one footprint::Elementwise, y's
  // layout change: the constants' changes ran when preparing.
  EXPECT_EQ(session.prepared().steps, 5U);
}

// A per-channel Mul and Add by [C, 1, 1] constants (how caffe2's exports write an affine) after
// an activation, then the next convolution: the operands become [1, C] views that broadcast over
// NHWC's last axis, so nothing in the chain changes layout. A [C, 1, 1] operand that also varies
// over H or W stays plain. (Right after a convolution or a normalisation the Mul and Add would
// fold into its parameters instead: fold_channel_affine_test.)
TEST(ChannelsLast, PerChannelOperandsWithoutABatchAxisStayChannelsLast) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(2), Dim::known(6), Dim::known(5), Dim::known(7)});
  const Var a = b.op1("LeakyRelu", {conv(b, x, 6, 10, 3, 71)}, {Attr::of("alpha", 0.2F)});
  auto positive = floats({10}, 72, 0.5F);
  for (float& v : positive->span<float>()) v += 1.0F;
  const Var bn = b.op1("BatchNormalization",
                       {a, b.constant(floats({10}, 73, 1.0F)), b.constant(floats({10}, 74, 1.0F)),
                        b.constant(floats({10}, 75, 1.0F)), b.constant(positive)});
  const Var scale = b.constant(floats({10, 1, 1}, 76, 2.0F));
  const Var affine = b.add(b.mul(b.relu(bn), scale), b.constant(floats({10, 1, 1}, 77, 1.0F)));
  const Var again = b.mul(b.relu(affine), scale);  // the same operand read twice: one view
  b.output(conv(b, again, 10, 4, 1, 78), "y");
  const Moved m = moved(b);
  EXPECT_EQ(m.report.layout_changes, 2U) << "x in, y out";
  EXPECT_EQ(m.ops.at("Flatten"), 2) << "one [1, C] view per operand";
  // Mul, Add, Relu, Mul: one elementwise pass, channels-last.
  EXPECT_EQ(m.ops.at("footprint::Elementwise"), 1);
  EXPECT_FALSE(m.ops.contains("Mul"));
  expect_same_outputs(b, {2, 6, 5, 7});

  GraphBuilder other(runtime::op_registry());
  const Var ox = other.input("x", DType::float32,
                             {Dim::known(1), Dim::known(6), Dim::known(5), Dim::known(5)});
  // [6, 5, 1] varies over H as well as channels: not a per-channel operand.
  const Var oy = other.mul(conv(other, ox, 6, 6, 3, 81), other.constant(floats({6, 5, 1}, 82, 1)));
  other.output(conv(other, oy, 6, 2, 1, 83), "y");
  const Moved om = moved(other);
  EXPECT_FALSE(om.ops.contains("Flatten"));
  EXPECT_EQ(om.report.layout_changes, 4U) << "x in, to the plain Mul, back in, y out";
}

Var int64s(GraphBuilder& b, const std::vector<int64_t>& values) {
  auto v = HostValue::make(DType::int64, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), v->span<int64_t>().begin());
  return b.constant(v);
}

// ShuffleNetV2's chunks and the Shape nodes of a dynamic export read channels-last values where
// they are: Slice (its axes NCHW's) runs as NhwcSlice, Shape as NhwcShape (NCHW's order), and no
// layout change is made for either.
TEST(ChannelsLast, SlicesAndShapesReadChannelsLastValuesWhereTheyAre) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(2), Dim::known(8), Dim::known(6), Dim::known(7)});
  const Var a = conv(b, x, 8, 12, 3, 91);
  const Var first = b.op1("Slice", {a, int64s(b, {0}), int64s(b, {6}), int64s(b, {1})});
  const Var second = b.op1("Slice", {a, int64s(b, {6}), int64s(b, {12}), int64s(b, {-3})});
  const Var joined =
      b.op1("Concat", {conv(b, first, 6, 6, 3, 93), second}, {Attr::of("axis", int64_t{1})});
  // Every other row, columns 1 to 5: the spatial axes map to NHWC's 1 and 2.
  const Var rows = b.op1("Slice", {joined, int64s(b, {0, 1}), int64s(b, {6, 6}), int64s(b, {2, 3}),
                                   int64s(b, {2, 1})});
  b.output(conv(b, rows, 12, 4, 1, 95), "y");
  b.output(b.op1("Shape", {a}), "extents");
  const Moved m = moved(b);
  EXPECT_EQ(m.ops.at("footprint::NhwcSlice"), 3);
  EXPECT_EQ(m.ops.at("footprint::NhwcShape"), 1);
  EXPECT_FALSE(m.ops.contains("Slice"));
  EXPECT_EQ(m.report.layout_changes, 2U) << "x in, y out";
  expect_same_outputs(b, {2, 8, 6, 7});

  const BuiltGraph built = b.to_graph();
  runtime::Session session(*built.model);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{2, 8, 6, 7});
  const auto out = session.run(in);
  const auto extents = out.at(1).ref().span<const int64_t>();
  EXPECT_EQ(std::vector<int64_t>(extents.begin(), extents.end()),
            (std::vector<int64_t>{2, 12, 6, 7}));
}

// ConvNeXt's block: a convolution, a permute to [N, H, W, C], a LayerNorm over C, a permute back,
// a residual. A channels-last tensor already is the permuted one, so both permutes become views
// (Identity of the channels-last copy, NhwcTranspose of the plain [N, H, W, C] result): no layout
// changes but x's and y's.
TEST(ChannelsLast, PermutesToAndFromNhwcAreViews) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(2), Dim::known(8), Dim::known(5), Dim::known(6)});
  const Var a = conv(b, x, 8, 8, 3, 101, 8);
  const Var nhwc = b.op1("Transpose", {a}, {Attr::of("perm", std::vector<int64_t>{0, 2, 3, 1})});
  const Var normed =
      b.op1("LayerNormalization",
            {nhwc, b.constant(floats({8}, 102, 1.0F)), b.constant(floats({8}, 103, 1.0F))},
            {Attr::of("axis", int64_t{-1})});
  const Var back =
      b.op1("Transpose", {normed}, {Attr::of("perm", std::vector<int64_t>{0, 3, 1, 2})});
  b.output(conv(b, b.add(back, a), 8, 4, 1, 104), "y");
  const Moved m = moved(b);
  EXPECT_FALSE(m.ops.contains("Transpose"));
  EXPECT_EQ(m.ops.at("Identity"), 1);
  EXPECT_EQ(m.ops.at("footprint::NhwcTranspose"), 1);
  EXPECT_EQ(m.report.layout_changes, 2U) << "x in, y out";
  expect_same_outputs(b, {2, 8, 5, 6});
}

// A convolution's output that a plain op also reads is changed back once, for that reader.
TEST(ChannelsLast, APlainReaderGetsTheValueBackInItsLayout) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(4), Dim::known(6), Dim::known(6)});
  const Var a = conv(b, x, 4, 4, 3, 21);
  const Var flat = b.flatten(a);  // a view of the NCHW bytes: stays plain
  const Var pooled = b.flatten(b.global_average_pool(conv(b, a, 4, 6, 3, 23)));
  b.output(b.op1("Concat", {flat, pooled}, {Attr::of("axis", int64_t{1})}), "y");
  const Moved m = moved(b);
  EXPECT_EQ(m.ops.at("footprint::NhwcConv"), 2);
  EXPECT_EQ(m.ops.at("footprint::ToChannelsLast"), 1);
  EXPECT_EQ(m.ops.at("footprint::FromChannelsLast"), 2) << "a for Flatten, the pool for Flatten";
  EXPECT_EQ(m.ops.at("Concat"), 1) << "of rank 2: plain";
  expect_same_outputs(b, {1, 4, 6, 6});
}

// What has no channels-last kernel stays where it is: an average that counts the padding
// ceil_mode adds, a 1-D convolution, an op that is not elementwise (Softmax over channels).
TEST(ChannelsLast, WhatTheKernelsCannotRunChannelsLastStaysPlain) {
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(4), Dim::known(7), Dim::known(7)});
  const Var a = conv(b, x, 4, 4, 3, 31);
  const Var avg =
      b.op1("AveragePool", {a},
            {Attr::of("kernel_shape", std::vector<int64_t>{2, 2}),
             Attr::of("strides", std::vector<int64_t>{2, 2}), Attr::of("ceil_mode", int64_t{1}),
             Attr::of("count_include_pad", int64_t{1})});
  b.output(b.op1("Softmax", {avg}, {Attr::of("axis", int64_t{1})}), "y");
  const Moved m = moved(b);
  EXPECT_EQ(m.report.nodes, 1U);
  EXPECT_EQ(m.ops.at("AveragePool"), 1);
  EXPECT_EQ(m.ops.at("Softmax"), 1);
  expect_same_outputs(b, {1, 4, 7, 7});

  GraphBuilder one_d(runtime::op_registry());
  const Var s = one_d.input("x", DType::float32, {Dim::known(1), Dim::known(4), Dim::known(9)});
  one_d.output(one_d.conv(s, one_d.constant(floats({4, 4, 3}, 33, 0.5F)),
                          one_d.constant(floats({4}, 34, 0.5F)), {1}, {1, 1}),
               "y");
  BuiltGraph built = one_d.to_graph();
  EXPECT_EQ(to_channels_last(built.graph).nodes, 0U);
}

// Inference alone (the builtin registry, without kernels) names no channels-last row to run.
TEST(ChannelsLast, ARegistryWithoutTheKernelsMovesNothing) {
  GraphBuilder b(OpRegistry::builtin());
  const Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(4), Dim::known(6), Dim::known(6)});
  b.output(conv(b, x, 4, 4, 3, 41), "y");
  BuiltGraph built = b.to_graph();
  EXPECT_EQ(to_channels_last(built.graph).nodes, 0U);
  EXPECT_EQ(ops_of(built.graph).at("Conv"), 1);
}

}  // namespace
}  // namespace footprint::graph
