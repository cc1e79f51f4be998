// Memory-aware operator order: a provably better order on a hand-made graph, and a valid order
// that is never worse than the stored one on every shared model.
#include "footprint/analysis/memory_order.hpp"

#include <gtest/gtest.h>

#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/graph/topo_order.hpp"
#include "graph/built_graph.hpp"
#include "graph/infer_builder.hpp"
#include "graph/shared_inputs.hpp"
#include "test_support.hpp"

namespace footprint::analysis {
namespace {

using testing::Wire;

using Model = testing::BuiltGraph;
Model build(const Wire& g) {
  return testing::build_graph(g, /*infer=*/true);
}

Wire concat(std::vector<std::string_view> in, std::string_view out) {
  return testing::node("Concat", std::move(in), {out}, out).msg(5, testing::attr("axis", 1));
}

// x[1,1,8,8] (256 B, caller-held) widens twice to 512 B and each branch pools to 8 B. Stored:
// both wide tensors first, so a1 + a2 + p1 = 1032 B are live at once. Pooling each branch
// before widening the next keeps at most 512 + 8 + 8 = 528 B, and no order does better: p2's
// step needs a2 (512) and p2 (8) plus p1 or a1.
Wire two_branches() {
  Wire g;
  g.msg(11, testing::float_value_info("x", {1, 1, 8, 8}));
  g.msg(1, concat({"x", "x"}, "a1"));
  g.msg(1, concat({"x", "x"}, "a2"));
  g.msg(1, testing::node("GlobalAveragePool", {"a1"}, {"p1"}, "p1"));
  g.msg(1, testing::node("GlobalAveragePool", {"a2"}, {"p2"}, "p2"));
  g.msg(1, concat({"p1", "p2"}, "y"));
  g.msg(12, testing::output("y"));
  return g;
}

TEST(MemoryOrder, ExactSearchFindsTheBetterOrder) {
  const Model m = build(two_branches());
  const MemoryOrder mo = memory_order(m.graph);
  EXPECT_EQ(mo.stored_lower_bound_bytes, 1032u);
  EXPECT_EQ(mo.lower_bound_bytes, 528u);
  EXPECT_EQ(mo.method, "exact");
  EXPECT_TRUE(mo.exact);
  ASSERT_TRUE(graph::is_topological(m.graph, mo.order));
  // The order runs a branch to its end before starting the other.
  std::vector<std::string> names;
  for (graph::NodeId id : mo.order) names.push_back(m.graph.node(id).name);
  EXPECT_EQ(names, (std::vector<std::string>{"a1", "p1", "a2", "p2", "y"}));
  // simulate() in that order agrees.
  GraphProgramOptions options;
  options.order = mo.order;
  EXPECT_EQ(simulate(build_program(m.graph, options).program).lower_bound_bytes, 528u);
}

TEST(MemoryOrder, AnOptimalStoredOrderIsKept) {
  Wire g;
  g.msg(11, testing::float_value_info("x", {1, 1, 8, 8}));
  g.msg(1, concat({"x", "x"}, "a1"));
  g.msg(1, testing::node("GlobalAveragePool", {"a1"}, {"p1"}, "p1"));
  g.msg(12, testing::output("p1"));
  const Model m = build(g);
  const MemoryOrder mo = memory_order(m.graph);
  EXPECT_EQ(mo.method, "stored");
  EXPECT_EQ(mo.order, graph::topo_order(m.graph));
  EXPECT_EQ(mo.lower_bound_bytes, mo.stored_lower_bound_bytes);
}

TEST(MemoryOrder, SharedModelsGetTopologicalOrdersNeverWorse) {
  FOOTPRINT_REQUIRE_SHARED();
  for (const auto& path : testing::shared_models()) {
    SCOPED_TRACE(path.string());
    const onnx::Model model = onnx::load_file(path);
    graph::Graph g = graph::Graph::from_onnx(model, graph::OpRegistry::builtin());
    testing::bind_shared_inputs(g, path);
    graph::infer_shapes(g);
    const MemoryOrder mo = memory_order(g);
    EXPECT_TRUE(graph::is_topological(g, mo.order));
    EXPECT_LE(mo.lower_bound_bytes, mo.stored_lower_bound_bytes);
    GraphProgramOptions options;
    options.order = mo.order;
    EXPECT_EQ(simulate(build_program(g, options).program).lower_bound_bytes, mo.lower_bound_bytes);
  }
}

}  // namespace
}  // namespace footprint::analysis
