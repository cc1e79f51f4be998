#pragma once
// What every graph rewrite (graph::fuse, its patterns) must leave: producers, consumers and names
// consistent, nodes in an order that writes each value before reading it, graph outputs marked.
#include <gtest/gtest.h>

#include <algorithm>

#include "footprint/graph/graph.hpp"

namespace footprint::testing {

inline void expect_consistent(const graph::Graph& g) {
  using graph::NodeId;
  using graph::ValueId;
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
    for (const ValueId v : g.node(n).outputs) EXPECT_EQ(g.value(v).producer, n);
    for (const ValueId v : g.node(n).inputs) {
      if (v == graph::kNoValue) continue;
      const auto& c = g.value(v).consumers;
      EXPECT_NE(std::find(c.begin(), c.end(), n), c.end()) << g.value(v).name;
      EXPECT_LT(g.value(v).producer, n) << g.node(n).name << " reads a value written later";
    }
  }
  for (ValueId v = 0; v < static_cast<ValueId>(g.values().size()); ++v) {
    const graph::Value& value = g.value(v);
    if (value.kind == graph::ValueKind::intermediate) {
      EXPECT_GE(value.producer, 0) << value.name;
    }
    for (const NodeId c : value.consumers) {
      const auto& in = g.node(c).inputs;
      EXPECT_NE(std::find(in.begin(), in.end(), v), in.end()) << value.name;
    }
    EXPECT_EQ(g.find(value.name), v) << value.name;
  }
  for (const ValueId v : g.outputs()) EXPECT_TRUE(g.value(v).is_graph_output);
}

}  // namespace footprint::testing
