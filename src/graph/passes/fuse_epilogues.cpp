#include "fuse_epilogues.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "footprint/graph/op_registry.hpp"
#include "fuse_patterns.hpp"

namespace footprint::graph {
namespace {

struct Match {
  std::vector<NodeId> absorbed;  // in the order they run
  Epilogue epilogue;
};

// The distinct nodes reading `v`.
std::vector<NodeId> readers(const Graph& g, ValueId v) {
  std::vector<NodeId> out = g.value(v).consumers;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool is_op(const Node& n, std::string_view op) {
  return n.domain.empty() && n.op_type == op;
}

// The node reads `v` as input 0 and nowhere else (a Clip's bounds are not its input).
bool reads_only_as_first(const Node& n, ValueId v) {
  if (n.inputs.empty() || n.inputs[0] != v) return false;
  const bool elsewhere =
      std::find(n.inputs.begin() + 1, n.inputs.end(), v) != n.inputs.end() ||
      std::find(n.implicit_inputs.begin(), n.implicit_inputs.end(), v) != n.implicit_inputs.end();
  return !elsewhere && n.outputs.size() == 1 && n.subgraphs.empty();
}

// A single elementwise reader the registry can fold (Relu, Clip, ...).
std::optional<Match> unary_epilogue(const Graph& g, ValueId out, NodeId reader) {
  const Node& c = g.node(reader);
  if (c.schema == nullptr || c.schema->as_epilogue == nullptr) return std::nullopt;
  if (!reads_only_as_first(c, out) || !is_real(g, c.outputs[0])) return std::nullopt;
  std::optional<Epilogue> e = c.schema->as_epilogue(g, c);
  if (!e) return std::nullopt;
  e->from = c.label(reader);
  return Match{{reader}, std::move(*e)};
}

// x * Sigmoid(x) (SiLU, as PyTorch exports it): a Sigmoid of the output and a Mul of the output
// by that Sigmoid, which nothing else reads.
std::optional<Match> swish(const Graph& g, ValueId out, NodeId a, NodeId b) {
  if (is_op(g.node(b), "Sigmoid")) std::swap(a, b);
  const Node& sig = g.node(a);
  const Node& mul = g.node(b);
  if (!is_op(sig, "Sigmoid") || !is_op(mul, "Mul")) return std::nullopt;
  if (!reads_only_as_first(sig, out) || mul.inputs.size() != 2 || mul.outputs.size() != 1) {
    return std::nullopt;
  }
  const ValueId s = sig.outputs[0];
  const bool operands =
      (mul.inputs[0] == out && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == out);
  if (!operands || !is_real(g, s) || !is_real(g, mul.outputs[0])) return std::nullopt;
  const Value& sv = g.value(s);
  if (sv.is_graph_output || readers(g, s) != std::vector<NodeId>{b}) return std::nullopt;
  return Match{{a, b}, {EpilogueOp::swish, 1.0F, 0.0F, sig.label(a) + " * " + mul.label(b)}};
}

std::optional<Match> next_epilogue(const Graph& g, NodeId host) {
  const Node& h = g.node(host);
  if (h.schema == nullptr || h.outputs.empty() || h.outputs[0] == kNoValue) return std::nullopt;
  const ValueId out = h.outputs[0];
  if (!h.schema->epilogue_dtypes.contains(g.value(out).dtype)) return std::nullopt;
  const Value& v = g.value(out);
  if (v.is_graph_output || v.constant) return std::nullopt;
  const std::vector<NodeId> r = readers(g, out);
  if (r.size() == 1) return unary_epilogue(g, out, r[0]);
  if (r.size() == 2) return swish(g, out, r[0], r[1]);
  return std::nullopt;
}

}  // namespace

size_t fuse_epilogues(Graph& g, std::vector<std::string>& fused) {
  size_t removed = 0;
  for (NodeId host = 0; host < static_cast<NodeId>(g.nodes().size()); ++host) {
    // A host may take several (Conv, then Relu, then Clip): look again after each.
    while (std::optional<Match> m = next_epilogue(g, host)) {
      fused.push_back(g.node(host).label(host) + " + " + m->epilogue.from);
      const auto before = static_cast<NodeId>(std::count_if(m->absorbed.begin(), m->absorbed.end(),
                                                            [&](NodeId id) { return id < host; }));
      removed += m->absorbed.size();
      g.fuse_into(host, m->absorbed, std::move(m->epilogue));
      host -= before;
    }
  }
  return removed;
}

}  // namespace footprint::graph
