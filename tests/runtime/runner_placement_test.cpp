// Where the graph runner's values live (runtime::runner::Placement): inputs where the caller
// holds them, initializers in weight slots, activations at their planned arena offsets, graph
// outputs in the output tensors, and views at their root's home.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "planned_graph.hpp"
#include "runtime/runner/placement.hpp"

using namespace footprint;
using graph::GraphBuilder;
using graph::HostValue;
using graph::Var;
using runtime::runner::Home;
using runtime::runner::HomeBytes;
using runtime::runner::Placement;
using runtime::runner::Weights;

namespace {

// x float[2,3] (input) -> MatMul by w float[3,4] (initializer) -> h, viewed by Reshape as r
// float[4,2], transposed into the output y; the second output is x itself, through Identity.
footprint::testing::PlannedGraph views_inputs_and_weights() {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(2), Dim::known(3)});
  const Var w = b.constant(HostValue::zeros(DType::float32, {3, 4}), "w");
  auto shape = HostValue::make(DType::int64, {2});
  shape->span<int64_t>()[0] = 4;
  shape->span<int64_t>()[1] = 2;
  const Var h = b.matmul(x, w);
  const Var r = b.reshape(h, b.constant(shape, "shape"));
  b.output(b.op1("Transpose", {r}), "y");
  b.output(b.op1("Identity", {x}), "x_again");
  return footprint::testing::plan_graph(b);
}

// The arena offset the plan gave value v's own buffer.
int64_t planned_offset(const footprint::testing::PlannedGraph& p, graph::ValueId v) {
  for (size_t i = 0; i < p.timeline.buffers.size(); ++i) {
    if (p.timeline.buffers[i].tensor == v) return p.plan.offsets[i];
  }
  ADD_FAILURE() << "no buffer of value " << v;
  return -1;
}

}  // namespace

TEST(RunnerPlacement, GivesEachRootItsHomeAndEachViewItsRoots) {
  const auto p = views_inputs_and_weights();
  const graph::Graph& g = p.graph();
  Placement placement(g, p.program, p.timeline, p.plan);
  ASSERT_EQ(placement.size(), g.values().size());

  const graph::ValueId x = p.id("x");
  EXPECT_EQ(placement[x].home, Home::input);
  EXPECT_EQ(placement[x].index, 0);

  // Initializers take slots 0, 1, ... in value order.
  const graph::ValueId w = p.id("w");
  const graph::ValueId shape = p.id("shape");
  const Weights weights = placement.take_weights();
  ASSERT_EQ(weights.slots.size(), 2u);
  EXPECT_EQ(placement[w].home, Home::weight);
  EXPECT_EQ(placement[shape].home, Home::weight);
  EXPECT_EQ(placement[w].index, w < shape ? 0 : 1);
  EXPECT_EQ(placement[shape].index, w < shape ? 1 : 0);
  // Each is read where it lies in the model, or from a copy where its bytes are not aligned.
  uint64_t copied = 0;
  for (const graph::ValueId v : {w, shape}) {
    const onnx::TensorBytes& slot = weights.slots[static_cast<size_t>(placement[v].index)];
    const onnx::TensorProto& stored = *g.value(v).initializer;
    EXPECT_EQ(slot.size(), onnx::tensor_storage_bytes(stored));
    EXPECT_EQ(slot.is_view(),
              onnx::readable_in_place(stored, onnx::element_alignment(g.value(v).dtype)));
    copied += slot.is_view() ? 0 : slot.size();
  }
  EXPECT_EQ(weights.copied_bytes, copied);

  // The product is an activation at its planned offset; the Reshape is a view of it.
  const graph::ValueId r = g.node(p.producer("y")).inputs[0];
  const auto h = static_cast<graph::ValueId>(p.timeline.storage[r]);
  ASSERT_NE(h, r) << "the Reshape is a view";
  EXPECT_EQ(g.node(p.producer(g.value(h).name)).op_type, "MatMul");
  EXPECT_EQ(placement[h].home, Home::arena);
  EXPECT_EQ(placement[h].index, planned_offset(p, h));
  EXPECT_EQ(placement[r].home, Home::arena);
  EXPECT_EQ(placement[r].index, placement[h].index);

  EXPECT_EQ(placement[p.id("y")].home, Home::output);
  EXPECT_EQ(placement[p.id("y")].index, 0);
  // An output that views an input is an output of its own (its step copies the input into it),
  // as the analysis counts it: nothing is left to copy after a run.
  EXPECT_EQ(placement[p.id("x_again")].home, Home::output);
  EXPECT_EQ(placement[p.id("x_again")].index, 1);
  EXPECT_TRUE(placement.output_copies().empty());
}

TEST(RunnerPlacement, PointsHomesAtTheBytesARunHas) {
  const auto p = views_inputs_and_weights();
  const graph::Graph& g = p.graph();
  const Placement placement(g, p.program, p.timeline, p.plan);

  alignas(64) std::array<std::byte, 4096> arena{};
  std::array<float, 6> x_bytes{};
  std::array<float, 8> y_bytes{};
  std::array<float, 6> x_again_bytes{};
  const std::vector<int64_t> x_dims = {2, 3};
  const std::vector<int64_t> y_dims = {2, 4};
  const std::vector<graph::TensorRef> inputs = {{DType::float32, x_dims, x_bytes.data()}};
  const std::vector<graph::TensorRef> outputs = {{DType::float32, y_dims, y_bytes.data()},
                                                 {DType::float32, x_dims, x_again_bytes.data()}};
  std::array<std::byte, 48> w_bytes{};
  std::array<std::byte, 16> shape_bytes{};
  std::vector<onnx::TensorBytes> weights;
  weights.emplace_back(std::span<const std::byte>(w_bytes));
  weights.emplace_back(std::span<const std::byte>(shape_bytes));
  if (p.id("shape") < p.id("w")) std::swap(weights[0], weights[1]);
  const std::vector<const std::byte*> constants(g.values().size(), nullptr);

  std::vector<void*> pointers(g.values().size(), nullptr);
  placement.point({arena.data(), inputs, outputs, weights, constants, {}}, pointers);
  EXPECT_EQ(pointers[p.id("x")], x_bytes.data());
  EXPECT_EQ(pointers[p.id("x_again")], x_again_bytes.data());
  EXPECT_EQ(pointers[p.id("y")], y_bytes.data());
  EXPECT_EQ(pointers[p.id("w")], w_bytes.data());
  EXPECT_EQ(pointers[p.id("shape")], shape_bytes.data());
  const graph::ValueId r = g.node(p.producer("y")).inputs[0];
  EXPECT_EQ(pointers[r], arena.data() + placement[r].index);

  // While preparing only the constants have bytes: every other home is null.
  HomeBytes preparing;
  preparing.weights = weights;
  preparing.constants = constants;
  placement.point(preparing, pointers);
  EXPECT_EQ(pointers[p.id("x")], nullptr);
  EXPECT_EQ(pointers[p.id("y")], nullptr);
  EXPECT_EQ(pointers[r], nullptr);
  EXPECT_EQ(pointers[p.id("w")], w_bytes.data());
}
