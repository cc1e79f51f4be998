// Squeeze-and-excitation (MobileNetV3, EfficientNet, RegNet-Y) as one footprint::SqueezeExcite
// node: GlobalAveragePool of x, a 1x1 convolution to R channels and its activation, a 1x1
// convolution back to C and its gate (Sigmoid, HardSigmoid), the product of x by that gate. Run
// after the epilogues are folded, so each convolution's activation is its epilogue already. The
// five steps were a pass over x, two convolutions on one pixel each (oneDNN's per-call cost, for
// a few thousand multiplies) and a pass that reads x again and writes the output; the node reads x
// twice and writes once, with the two small products in between.
#include <algorithm>
#include <optional>

#include "footprint/graph/elementwise_program.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "footprint/graph/op_registry.hpp"
#include "fuse_patterns.hpp"

namespace footprint::graph {
namespace {

// Node `id` alone reads `v`, a value computed when running that nothing else sees.
bool reads_alone(const Graph& g, ValueId v, NodeId id) {
  return sole_reader(g, v) == id && !g.value(v).constant;
}

// A 1x1 convolution of one group and no padding whose output has `out` channels and one pixel,
// and at most `epilogues` epilogues: its id, or -1.
NodeId pointwise(const Graph& g, NodeId id, size_t epilogues) {
  if (id < 0) return -1;
  const Node& n = g.node(id);
  if (!n.domain.empty() || n.op_type != "Conv" || n.inputs.size() < 2 || n.outputs.size() != 1 ||
      n.epilogues.size() > epilogues || attr_int(n, "group", 1) != 1) {
    return -1;
  }
  const std::string_view pad = attr_string(n, "auto_pad", "NOTSET");
  const auto pads = attr_ints(n, "pads");
  if ((pad != "NOTSET" && pad != "VALID") ||
      (pads && std::any_of(pads->begin(), pads->end(), [](int64_t p) { return p != 0; }))) {
    return -1;
  }
  const Shape& w = g.value(n.inputs[1]).shape;
  const Shape& y = g.value(n.outputs[0]).shape;
  const bool pixel =
      y.ranked && y.rank() == 4 && y.dims[2] == Dim::known(1) && y.dims[3] == Dim::known(1);
  const bool one_by_one =
      w.ranked && w.rank() == 4 && w.dims[2] == Dim::known(1) && w.dims[3] == Dim::known(1);
  if (!pixel || !one_by_one || !is_real(g, n.inputs[1]) || !is_real(g, n.outputs[0])) return -1;
  return id;
}

std::optional<Rewrite> with_input(const Graph& g, NodeId mul, ValueId x, ValueId s) {
  const Shape& xs = g.value(x).shape;
  if (!is_real(g, x) || !xs.ranked || xs.rank() != 4 ||
      g.value(g.node(mul).outputs[0]).shape != xs) {
    return std::nullopt;
  }
  const NodeId expand = pointwise(g, g.value(s).producer, 1);
  if (expand < 0 || !reads_alone(g, s, mul)) return std::nullopt;
  const Node& c2 = g.node(expand);
  if (c2.epilogues.size() != 1) return std::nullopt;
  const EpilogueOp gate = c2.epilogues[0].op;
  if (gate != EpilogueOp::sigmoid && gate != EpilogueOp::hard_sigmoid) return std::nullopt;
  const NodeId squeeze = pointwise(g, g.value(c2.inputs[0]).producer, 1);
  if (squeeze < 0 || !reads_alone(g, c2.inputs[0], expand)) return std::nullopt;
  const Node& c1 = g.node(squeeze);
  const NodeId pool = g.value(c1.inputs[0]).producer;
  if (pool < 0 || !reads_alone(g, c1.inputs[0], squeeze)) return std::nullopt;
  const Node& p = g.node(pool);
  if (!p.domain.empty() || p.op_type != "GlobalAveragePool" || p.inputs[0] != x ||
      !p.epilogues.empty()) {
    return std::nullopt;
  }
  // W1 [R, C, 1, 1] and W2 [C, R, 1, 1] for x's C (what inference of the new node checks).
  const Shape& w1 = g.value(c1.inputs[1]).shape;
  const Shape& w2 = g.value(c2.inputs[1]).shape;
  if (w1.dims[1] != xs.dims[1] || w2.dims[0] != xs.dims[1] || w2.dims[1] != w1.dims[0]) {
    return std::nullopt;
  }
  const auto bias = [&](const Node& c) { return c.inputs.size() > 2 ? c.inputs[2] : kNoValue; };
  Rewrite r;
  r.nodes = {pool, squeeze, expand, mul};
  r.domain = "footprint";
  r.op = "SqueezeExcite";
  r.inputs = {x, c1.inputs[1], bias(c1), c2.inputs[1], bias(c2)};
  while (r.inputs.back() == kNoValue) r.inputs.pop_back();
  r.output = g.node(mul).outputs[0];
  if (!c1.epilogues.empty()) {
    const Epilogue& a = c1.epilogues[0];
    r.attributes.push_back(string_attribute("activation", chain_unary_name(a.op)));
    r.attributes.push_back(float_attribute("activation_alpha", a.alpha));
    r.attributes.push_back(float_attribute("activation_beta", a.beta));
  }
  r.attributes.push_back(string_attribute("gate", chain_unary_name(gate)));
  r.attributes.push_back(float_attribute("gate_alpha", c2.epilogues[0].alpha));
  r.attributes.push_back(float_attribute("gate_beta", c2.epilogues[0].beta));
  return r;
}

}  // namespace

std::optional<Rewrite> squeeze_excite(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (!n.domain.empty() || n.op_type != "Mul" || n.inputs.size() != 2 || !n.epilogues.empty()) {
    return std::nullopt;
  }
  if (auto r = with_input(g, id, n.inputs[0], n.inputs[1])) return r;
  return with_input(g, id, n.inputs[1], n.inputs[0]);
}

}  // namespace footprint::graph
