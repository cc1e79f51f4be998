#include "footprint/graph/topo_order.hpp"

#include <functional>
#include <queue>

#include "footprint/core/error.hpp"

namespace footprint::graph {
namespace {

// Producers (in this graph) of everything node `n` reads, subgraph captures included.
template <class F>
void for_each_producer(const Graph& g, const Node& n, F&& f) {
  auto visit = [&](ValueId v) {
    if (v == kNoValue) return;
    const NodeId p = g.value(v).producer;
    if (p >= 0) f(p);
  };
  for (ValueId v : n.inputs) visit(v);
  for (ValueId v : n.implicit_inputs) visit(v);
}

[[noreturn]] void report_cycle(const Graph& g, const std::vector<int>& pending) {
  // Walk backwards from any unscheduled node through unscheduled producers; the walk must
  // revisit a node, and the nodes from that first revisit on form a cycle.
  NodeId start = 0;
  while (pending[start] == 0) ++start;
  std::vector<int> seen_at(g.nodes().size(), -1);
  std::vector<NodeId> walk;
  NodeId cur = start;
  while (seen_at[cur] < 0) {
    seen_at[cur] = static_cast<int>(walk.size());
    walk.push_back(cur);
    NodeId next = -1;
    for_each_producer(g, g.node(cur), [&](NodeId p) {
      if (next < 0 && pending[p] > 0) next = p;
    });
    cur = next;
  }
  // The walk went from readers to producers; read backwards it is the data flow, and the cycle
  // closes where that reading started (walk.back()), not at the revisited node.
  std::string cycle;
  for (size_t i = walk.size(); i-- > static_cast<size_t>(seen_at[cur]);) {
    cycle += g.node(walk[i]).label(walk[i]) + " -> ";
  }
  cycle += g.node(walk.back()).label(walk.back());
  std::string where;
  if (g.model() != nullptr) {
    where =
        g.model()->source().name() + ": offset " + std::to_string(g.node(cur).source_offset) + ": ";
  }
  throw Error(where + "graph " + in_quotes(g.name()) + " has a cycle: " + cycle);
}

}  // namespace

std::vector<NodeId> topo_order(const Graph& g) {
  const size_t n = g.nodes().size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<NodeId>> users(n);
  for (NodeId id = 0; id < static_cast<NodeId>(n); ++id) {
    for_each_producer(g, g.node(id), [&](NodeId p) {
      ++pending[id];
      users[p].push_back(id);
    });
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId id = 0; id < static_cast<NodeId>(n); ++id) {
    if (pending[id] == 0) ready.push(id);
  }
  std::vector<NodeId> order;
  order.reserve(n);
  while (!ready.empty()) {
    const NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (NodeId u : users[id]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (order.size() != n) report_cycle(g, pending);
  return order;
}

bool is_topological(const Graph& g, const std::vector<NodeId>& order) {
  const size_t n = g.nodes().size();
  if (order.size() != n) return false;
  std::vector<int> position(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const NodeId id = order[i];
    if (id < 0 || static_cast<size_t>(id) >= n || position[id] >= 0) return false;
    position[id] = static_cast<int>(i);
  }
  for (NodeId id = 0; id < static_cast<NodeId>(n); ++id) {
    bool ok = true;
    for_each_producer(g, g.node(id), [&](NodeId p) { ok = ok && position[p] < position[id]; });
    if (!ok) return false;
  }
  return true;
}

}  // namespace footprint::graph
