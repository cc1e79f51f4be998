#include "footprint/graph/topo_order.hpp"

#include <gtest/gtest.h>

#include "footprint/core/error.hpp"
#include "graph/built_graph.hpp"

namespace footprint {
namespace {

using testing::Wire;

testing::BuiltGraph build(const Wire& g) {
  return testing::build_graph(g);
}

TEST(TopoOrder, KeepsAValidStoredOrder) {
  Wire g;
  g.msg(11, testing::float_value_info("x", {2}));
  g.msg(1, testing::node("Relu", {"x"}, {"a"}));
  g.msg(1, testing::node("Neg", {"x"}, {"b"}));
  g.msg(1, testing::node("Add", {"a", "b"}, {"y"}));
  g.msg(12, testing::float_value_info("y", {2}));
  auto b = build(g);
  EXPECT_EQ(graph::topo_order(b.graph), (std::vector<graph::NodeId>{0, 1, 2}));
}

TEST(TopoOrder, SortsNodesStoredOutOfOrder) {
  Wire g;
  g.msg(11, testing::float_value_info("x", {2}));
  g.msg(1, testing::node("Add", {"a", "b"}, {"y"}));
  g.msg(1, testing::node("Neg", {"a"}, {"b"}));
  g.msg(1, testing::node("Relu", {"x"}, {"a"}));
  g.msg(12, testing::float_value_info("y", {2}));
  auto b = build(g);
  const auto order = graph::topo_order(b.graph);
  EXPECT_EQ(order, (std::vector<graph::NodeId>{2, 1, 0}));
  EXPECT_TRUE(graph::is_topological(b.graph, order));
  EXPECT_FALSE(graph::is_topological(b.graph, {0, 1, 2}));
  EXPECT_FALSE(graph::is_topological(b.graph, {2, 2, 0}));
}

TEST(TopoOrder, CycleIsAnErrorNamingItsNodes) {
  Wire g;
  g.msg(11, testing::float_value_info("x", {2}));
  g.msg(1, testing::node("Relu", {"x"}, {"a"}, "entry"));
  g.msg(1, testing::node("Add", {"a", "c"}, {"b"}, "add"));
  g.msg(1, testing::node("Neg", {"b"}, {"c"}, "neg"));
  g.msg(1, testing::node("Abs", {"b"}, {"y"}, "exit"));
  g.msg(12, testing::float_value_info("y", {2}));
  auto b = build(g);
  try {
    graph::topo_order(b.graph);
    FAIL() << "a cycle must be reported";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("has a cycle"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'add' (Add)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'neg' (Neg)"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("'entry'"), std::string::npos) << "only nodes on the cycle: " << msg;
    // In data-flow order, closing where it started: add feeds neg, neg feeds add.
    EXPECT_NE(msg.find("has a cycle: 'neg' (Neg) -> 'add' (Add) -> 'neg' (Neg)"), std::string::npos)
        << msg;
  }
}

TEST(TopoOrder, ALongerCycleIsReportedInDataFlowOrder) {
  Wire g;
  g.msg(11, testing::float_value_info("x", {2}));
  g.msg(1, testing::node("Add", {"x", "c"}, {"a"}, "A"));
  g.msg(1, testing::node("Relu", {"a"}, {"b"}, "B"));
  g.msg(1, testing::node("Neg", {"b"}, {"c"}, "C"));
  g.msg(1, testing::node("Abs", {"x"}, {"y"}, "D"));
  g.msg(12, testing::float_value_info("y", {2}));
  auto b = build(g);
  try {
    graph::topo_order(b.graph);
    FAIL() << "a cycle must be reported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "has a cycle: 'B' (Relu) -> 'C' (Neg) -> 'A' (Add) -> 'B' (Relu)"),
              std::string::npos)
        << e.what();
  }
}

TEST(TopoOrder, SelfLoopIsACycle) {
  Wire g;
  g.msg(1, testing::node("Relu", {"a"}, {"a"}, "self"));
  g.msg(12, testing::float_value_info("a", {2}));
  auto b = build(g);
  EXPECT_THROW(graph::topo_order(b.graph), Error);
}

}  // namespace
}  // namespace footprint
