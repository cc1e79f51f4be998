#include "footprint/analysis/prepare_order.hpp"

#include <algorithm>

namespace footprint::analysis {
namespace {

std::vector<char> step_flags(const graph::Graph& g, const GraphProgram& p) {
  std::vector<char> is_step(g.nodes().size(), 0);
  for (const graph::NodeId id : p.step_nodes) is_step[static_cast<size_t>(id)] = 1;
  return is_step;
}

}  // namespace

PrepareOrder prepare_order(const graph::Graph& g, const GraphProgram& p,
                           std::span<const int> storage) {
  PrepareOrder order;
  const std::vector<char> is_step = step_flags(g, p);
  // Per root: the last constant node writing it (-1: none, an initializer or a run's value).
  std::vector<int> written_by(g.values().size(), -1);
  for (const graph::NodeId id : p.order) {
    if (is_step[static_cast<size_t>(id)]) continue;
    const int k = static_cast<int>(order.constants.size());
    for (const graph::ValueId o : g.node(id).outputs) {
      if (o != graph::kNoValue) written_by[static_cast<size_t>(storage[o])] = k;
    }
    order.constants.push_back(id);
  }
  // Per step: the constant node after which it can be prepared.
  std::vector<std::vector<size_t>> after(order.constants.size() + 1);
  for (size_t s = 0; s < p.step_nodes.size(); ++s) {
    const graph::Node& n = g.node(p.step_nodes[s]);
    int ready = -1;
    const auto see = [&](graph::ValueId v) {
      if (v != graph::kNoValue)
        ready = std::max(ready, written_by[static_cast<size_t>(storage[v])]);
    };
    std::for_each(n.inputs.begin(), n.inputs.end(), see);
    std::for_each(n.implicit_inputs.begin(), n.implicit_inputs.end(), see);
    after[ready < 0 ? 0 : static_cast<size_t>(ready) + 1].push_back(s);
  }
  order.events.reserve(order.constants.size() + p.step_nodes.size());
  for (size_t k = 0; k <= order.constants.size(); ++k) {
    if (k > 0) order.events.push_back({false, k - 1});
    for (const size_t s : after[k]) order.events.push_back({true, s});
  }
  return order;
}

PrepareReaders::PrepareReaders(const graph::Graph& g, const GraphProgram& p,
                               std::span<const int> storage)
    : storage_(storage), left_(g.values().size(), 0), kept_(g.values().size(), 0) {
  const std::vector<char> is_step = step_flags(g, p);
  std::vector<char> read_by_step(g.values().size(), 0);
  for (const graph::ValueId v : g.outputs()) kept_[root(v)] = 1;
  for (const graph::NodeId id : p.order) {
    const graph::Node& n = g.node(id);
    const bool step = is_step[static_cast<size_t>(id)] != 0;
    for (const graph::ValueId v : n.implicit_inputs) kept_[root(v)] = 1;
    for (const graph::ValueId v : n.inputs) {
      if (v == graph::kNoValue) continue;
      ++left_[root(v)];
      if (step) read_by_step[root(v)] = 1;
    }
  }
  // A constant only constant nodes read goes after the last of them where analysis marks it read
  // only while preparing (shape arithmetic, the weights a folded BatchNormalization's come from).
  for (size_t r = 0; r < left_.size(); ++r) {
    if (read_by_step[r] == 0 && !p.program.tensors[r].prepare_only) kept_[r] = 1;
  }
}

}  // namespace footprint::analysis
