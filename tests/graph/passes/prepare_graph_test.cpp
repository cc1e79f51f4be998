// graph::prepare_graph as a specification: the passes in their order, the graph they leave (the
// same as running them one by one), the graph as stored without fusion, and the report: what was
// re-batched, the dims bound (by a run's binder, or defaulted), what was fused and moved.
#include "footprint/graph/prepare_graph.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "graph/graph_checks.hpp"

namespace footprint::graph {
namespace {

SharedValue floats(std::vector<int64_t> dims, float value) {
  auto v = HostValue::make(DType::float32, std::move(dims));
  for (float& e : v->span<float>()) e = value;
  return v;
}

// x[batch, 4, 6, 6] -> Conv 1x1 -> Relu -> y, against the runtime's rows (which fuse and move).
BuiltGraph conv_relu(const Dim& batch) {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {batch, Dim::known(4), Dim::known(6), Dim::known(6)});
  const Var w = b.constant(floats({4, 4, 1, 1}, 0.5F));
  b.output(b.relu(b.conv(x, w, Var(), {1, 1}, {0, 0, 0, 0})), "y");
  return b.to_graph();
}

// The graph as stored in the built model, before any pass.
Graph stored(const BuiltGraph& built) {
  return built.model->graph(runtime::op_registry());
}

std::vector<std::string> ops(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes())
    out.push_back(n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type);
  return out;
}

const Shape& shape_of(const Graph& g, std::string_view name) {
  return g.value(*g.find(name)).shape;
}

TEST(PrepareGraph, NamesItsPassesInTheOrderItRunsThem) {
  const std::vector<std::string_view> expected = {
      "rebatch",        "bind_inputs",          "lower_sequences", "infer_shapes",
      "fuse_qdq",       "fold_channel_affines", "fuse_patterns",   "fuse_epilogues",
      "squeeze_excite", "fuse_elementwise",     "channels_last",   "carry_float32"};
  EXPECT_EQ(prepare_passes(), expected);
}

TEST(PrepareGraph, StopsAfterThePassItIsToldTo) {
  // Through "rebatch": the inputs as a user feeds them, their named dims still named (what
  // Session::inputs lists), nothing inferred, fused or moved.
  const BuiltGraph built = conv_relu(Dim::named("N"));
  Graph g = stored(built);
  PrepareOptions first;
  first.through = "rebatch";
  const PrepareReport r = prepare_graph(g, {{"N", 2}}, first);
  EXPECT_EQ(ops(g), ops(stored(built)));
  EXPECT_EQ(shape_of(g, "x").to_string(), "[N,4,6,6]");
  EXPECT_TRUE(r.fused.fused.empty());
  EXPECT_TRUE(r.dims.empty());

  Graph inferred = stored(built);
  PrepareOptions three;
  three.through = "infer_shapes";
  prepare_graph(inferred, {{"N", 2}}, three);
  EXPECT_EQ(ops(inferred), ops(stored(built)));  // inferred, not fused
  EXPECT_EQ(shape_of(inferred, "y").to_string(), "[2,4,6,6]");

  PrepareOptions unknown;
  unknown.through = "fuse_everything";
  Graph other = stored(built);
  EXPECT_THROW(prepare_graph(other, {}, unknown), std::logic_error);
}

TEST(PrepareGraph, LeavesTheGraphThePassesLeaveOneByOne) {
  const BuiltGraph built = conv_relu(Dim::named("N"));
  Graph prepared = stored(built);
  const PrepareReport r = prepare_graph(prepared, {{"N", 2}});

  Graph by_hand = stored(built);
  std::vector<std::string> defaulted;
  ASSERT_TRUE(bind_input_extents(by_hand, {{"N", 2}}, defaulted));
  infer_shapes(by_hand);
  const FuseReport fused = fuse(by_hand);
  const ChannelsLastReport moved = to_channels_last(by_hand);

  EXPECT_EQ(ops(prepared), ops(by_hand));
  ASSERT_EQ(prepared.values().size(), by_hand.values().size());
  for (ValueId v = 0; v < static_cast<ValueId>(prepared.values().size()); ++v) {
    EXPECT_EQ(prepared.value(v).name, by_hand.value(v).name);
    EXPECT_EQ(prepared.value(v).shape, by_hand.value(v).shape) << prepared.value(v).name;
  }
  EXPECT_EQ(r.fused.fused, fused.fused);
  EXPECT_EQ(r.fused.patterns, fused.patterns);
  EXPECT_EQ(r.fused.nodes_removed, fused.nodes_removed);
  EXPECT_EQ(r.channels_last.nodes, moved.nodes);
  EXPECT_EQ(r.channels_last.layout_changes, moved.layout_changes);
  testing::expect_consistent(prepared);
}

TEST(PrepareGraph, ReportsWhatEachPassDid) {
  const BuiltGraph built = conv_relu(Dim::named("N"));
  Graph g = stored(built);
  const PrepareReport r = prepare_graph(g, {{"N", 2}});
  EXPECT_FALSE(r.rebatched.has_value());
  EXPECT_EQ(r.dims, (DimBindings{{"N", 2}}));
  EXPECT_TRUE(r.concrete);
  EXPECT_TRUE(r.defaulted.empty());
  EXPECT_TRUE(r.inference.warnings.empty());
  ASSERT_EQ(r.fused.fused.size(), 1U);
  EXPECT_NE(r.fused.fused[0].find("(Conv) + "), std::string::npos) << r.fused.fused[0];
  EXPECT_NE(r.fused.fused[0].find("(Relu)"), std::string::npos) << r.fused.fused[0];
  EXPECT_EQ(r.fused.nodes_removed, 1U);
  EXPECT_EQ(r.channels_last.nodes, 1U) << "the convolution";
  EXPECT_EQ(r.channels_last.layout_changes, 2U) << "into the convolution and out to y";
  EXPECT_EQ(shape_of(g, "y"), Shape::of({2, 4, 6, 6}));
}

TEST(PrepareGraph, WithoutFuseKeepsTheGraphAsStoredWithItsShapesInferred) {
  const BuiltGraph built = conv_relu(Dim::named("N"));
  Graph g = stored(built);
  const PrepareReport r = prepare_graph(g, {{"N", 2}}, {.fuse = false});
  EXPECT_EQ(ops(g), ops(stored(built)));
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Conv", "Relu"}));
  EXPECT_TRUE(r.fused.fused.empty());
  EXPECT_TRUE(r.fused.patterns.empty());
  EXPECT_EQ(r.fused.nodes_removed, 0U);
  EXPECT_EQ(r.channels_last.nodes, 0U);
  EXPECT_EQ(r.channels_last.layout_changes, 0U);
  EXPECT_EQ(shape_of(g, "y"), Shape::of({2, 4, 6, 6}));
}

TEST(PrepareGraph, NamedDimsNothingBindsAreDefaultedToOne) {
  const BuiltGraph built = conv_relu(Dim::named("N"));
  Graph g = stored(built);
  const PrepareReport r = prepare_graph(g, {});
  EXPECT_EQ(r.defaulted, (std::vector<std::string>{"N"}));
  EXPECT_TRUE(r.concrete);
  EXPECT_TRUE(r.dims.empty());
  EXPECT_EQ(shape_of(g, "x"), Shape::of({1, 4, 6, 6}));
}

TEST(PrepareGraph, BindingTheBatchReBatchesAModelStoredAtOne) {
  const BuiltGraph built = conv_relu(Dim::known(1));
  Graph g = stored(built);
  const PrepareReport r = prepare_graph(g, {{"batch", 3}});
  ASSERT_TRUE(r.rebatched.has_value());
  EXPECT_EQ(r.rebatched->from, 1);
  EXPECT_EQ(r.rebatched->inputs, 1U);
  EXPECT_EQ(r.rebatched->note(), "re-batched: leading dim of 1 input made 'batch' (stored as 1)");
  EXPECT_EQ(shape_of(g, "x"), Shape::of({3, 4, 6, 6}));
  EXPECT_EQ(shape_of(g, "y"), Shape::of({3, 4, 6, 6}));
}

// A run's binder: the graph it is handed, then each input the extents of its tensor.
struct FixedExtents final : InputBinder {
  std::vector<int64_t> extents;
  Shape input_before;   // x's shape when bind() was called
  Shape output_before;  // y's

  void bind(Graph& g, const DimBindings& dims, DimBindings& bound) override {
    input_before = shape_of(g, "x");
    output_before = shape_of(g, "y");
    bound = dims;
    bound["N"] = extents[0];
    g.mutable_value(g.inputs()[0]).shape = Shape::of(extents);
  }
};

TEST(PrepareGraph, ABinderGivesTheInputsTheirExtentsInPlaceOfTheirDeclaredDims) {
  const BuiltGraph built = conv_relu(Dim::named("N"));
  Graph g = stored(built);
  FixedExtents binder;
  binder.extents = {5, 4, 6, 6};
  const PrepareReport r = prepare_graph(g, {{"M", 7}}, {.bind = &binder});
  EXPECT_EQ(r.dims, (DimBindings{{"M", 7}, {"N", 5}}));
  EXPECT_TRUE(r.concrete);
  EXPECT_TRUE(r.defaulted.empty()) << "the declared dims are not read";
  EXPECT_EQ(shape_of(g, "y"), Shape::of({5, 4, 6, 6}));
}

TEST(PrepareGraph, TheBinderSeesTheReBatchedGraphBeforeInference) {
  const BuiltGraph built = conv_relu(Dim::known(1));
  Graph g = stored(built);
  FixedExtents binder;
  binder.extents = {3, 4, 6, 6};
  const PrepareReport r = prepare_graph(g, {{"batch", 3}}, {.bind = &binder});
  ASSERT_TRUE(r.rebatched.has_value());
  ASSERT_EQ(binder.input_before.rank(), 4U);
  EXPECT_EQ(binder.input_before.dims[0].to_string(), "batch");
  EXPECT_NE(binder.output_before, Shape::of({3, 4, 6, 6})) << "inferred after binding";
  EXPECT_EQ(shape_of(g, "y"), Shape::of({3, 4, 6, 6}));
}

}  // namespace
}  // namespace footprint::graph
