#pragma once
// Executable node orders.
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

// A topological order that keeps the stored order wherever the stored order is valid (among
// ready nodes, the earliest stored one runs first). Subgraph captures count as dependencies.
// A cycle throws footprint::Error naming the nodes on it.
std::vector<NodeId> topo_order(const Graph& g);

// Whether `order` is a permutation of g's nodes in which every node follows its producers.
bool is_topological(const Graph& g, const std::vector<NodeId>& order);

}  // namespace footprint::graph
