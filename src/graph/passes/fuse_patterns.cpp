// PyTorch's exporter writes a LayerNorm below opset 17 as nine nodes, GELU as five (erf) or ten
// (tanh), and a Linear over a sequence as a MatMul and an Add. Each of those nodes reads and
// writes a whole tensor: run as the one op, the work is a single pass and none of the tensors
// between is ever made (the arena shrinks by them). A pattern is rewritten only where nothing
// outside it reads what it hides, every tensor holds real numbers in a dtype the new row's kernel
// runs (makes_runnable) and the one op's output has the shape the last node's had.
#include "fuse_patterns.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <string_view>
#include <utility>

#include "footprint/core/error.hpp"
#include "footprint/graph/epilogue.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"

namespace footprint::graph {
namespace {

bool is_op(const Node& n, std::string_view op) {
  return n.domain.empty() && n.op_type == op && n.epilogues.empty();
}

// Node `id` when it is a binary `op` reading `v`.
const Node* binary_reading(const Graph& g, NodeId id, std::string_view op, ValueId v) {
  if (id < 0) return nullptr;
  const Node& n = g.node(id);
  if (!is_op(n, op) || n.inputs.size() != 2 || n.outputs.size() != 1) return nullptr;
  return n.inputs[0] == v || n.inputs[1] == v ? &n : nullptr;
}

// A binary node's operand other than `v` (v itself for v * v).
ValueId other_operand(const Node& n, ValueId v) {
  return n.inputs[0] == v ? n.inputs[1] : n.inputs[0];
}

// A constant of one element (of any numeric dtype), as a double.
std::optional<double> scalar(const Graph& g, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const std::optional<KnownValue>& k = g.value(v).known;
  if (!k || k->numel() != 1 || !k->is_concrete()) return std::nullopt;
  return k->real(0);
}

// Within float32's rounding of the constant an exporter wrote.
bool is_near(std::optional<double> x, double want) {
  return x && std::abs(*x - want) <= 1e-6 * std::abs(want);
}

ValueId out(const Graph& g, NodeId id) {
  return g.node(id).outputs[0];
}

// ---- LayerNorm: (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * scale + shift, the means
// over trailing axes.

std::optional<std::vector<int64_t>> reduce_axes(const Graph& g, const Node& n) {
  if (auto a = attr_ints(n, "axes")) return a;
  if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
    const std::optional<KnownValue>& k = g.value(n.inputs[1]).known;
    return k ? k->int_values() : std::nullopt;
  }
  return std::vector<int64_t>{};  // every axis
}

// The first averaged axis when node `id` is a ReduceMean of x over its trailing axes, kept.
std::optional<int64_t> trailing_mean(const Graph& g, NodeId id, ValueId x) {
  if (id < 0) return std::nullopt;
  const Node& n = g.node(id);
  if (!is_op(n, "ReduceMean") || n.inputs.empty() || n.inputs[0] != x) return std::nullopt;
  if (attr_int(n, "keepdims", 1) != 1 || attr_int(n, "noop_with_empty_axes", 0) != 0) {
    return std::nullopt;
  }
  const Shape& s = g.value(x).shape;
  const std::optional<std::vector<int64_t>> axes = reduce_axes(g, n);
  if (!s.ranked || s.rank() == 0 || !axes) return std::nullopt;
  const auto rank = static_cast<int64_t>(s.rank());
  std::vector<int64_t> a;
  for (const int64_t v : *axes) {
    if (v < -rank || v >= rank) return std::nullopt;
    a.push_back(v < 0 ? v + rank : v);
  }
  if (a.empty()) return 0;
  std::sort(a.begin(), a.end());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != rank - static_cast<int64_t>(a.size() - i)) return std::nullopt;
  }
  return a.front();
}

// Whether `p` (a scale or shift) broadcasts over x's normalised axes alone: its extents, leading
// ones dropped, are x's last ones, no more of them than were normalised.
bool covers_normalised(const Graph& g, ValueId p, ValueId x, int64_t axis) {
  const Shape& ps = g.value(p).shape;
  const Shape& xs = g.value(x).shape;
  if (!is_real(g, p) || !ps.ranked || ps.rank() > xs.rank()) return false;
  size_t first = 0;
  while (first < ps.rank() && ps.dims[first].value() == 1) ++first;
  const size_t kept = ps.rank() - first;
  if (kept > xs.rank() - static_cast<size_t>(axis)) return false;
  for (size_t i = 0; i < kept; ++i) {
    const auto pd = ps.dims[first + i].value();
    const auto xd = xs.dims[xs.rank() - kept + i].value();
    if (!pd || !xd || *pd != *xd) return false;
  }
  return true;
}

// The Sub, square and Div after the mean: the nodes, and the divided value.
struct Centred {
  NodeId sub = -1, square = -1, div = -1;
};

std::optional<Centred> centred(const Graph& g, NodeId mean, ValueId x) {
  Centred c;
  c.sub = sole_reader(g, out(g, mean));
  const Node* sub = binary_reading(g, c.sub, "Sub", out(g, mean));
  if (sub == nullptr || sub->inputs[0] != x) return std::nullopt;
  const ValueId d = sub->outputs[0];
  const Value& dv = g.value(d);
  if (dv.is_graph_output) return std::nullopt;
  for (const NodeId r : dv.consumers) {
    const Node& n = g.node(r);
    if (n.inputs.size() != 2 || n.inputs[0] != d) return std::nullopt;
    const bool square = (is_op(n, "Pow") && is_near(scalar(g, n.inputs[1]), 2.0)) ||
                        (is_op(n, "Mul") && n.inputs[1] == d);
    if (square && (c.square == -1 || c.square == r)) {
      c.square = r;
    } else if (is_op(n, "Div") && n.inputs[1] != d && c.div == -1) {
      c.div = r;
    } else {
      return std::nullopt;
    }
  }
  if (c.square < 0 || c.div < 0) return std::nullopt;
  return c;
}

std::optional<Rewrite> layer_norm(const Graph& g, NodeId mean) {
  const Node& m = g.node(mean);
  if (!is_op(m, "ReduceMean") || m.inputs.empty() || !is_real(g, m.inputs[0])) {
    return std::nullopt;
  }
  const ValueId x = m.inputs[0];
  const std::optional<int64_t> axis = trailing_mean(g, mean, x);
  if (!axis) return std::nullopt;
  const std::optional<Centred> c = centred(g, mean, x);
  if (!c) return std::nullopt;
  const NodeId var = sole_reader(g, out(g, c->square));
  if (trailing_mean(g, var, out(g, c->square)) != axis) return std::nullopt;
  const NodeId plus = sole_reader(g, out(g, var));
  const Node* add = binary_reading(g, plus, "Add", out(g, var));
  if (add == nullptr) return std::nullopt;
  const std::optional<double> eps = scalar(g, other_operand(*add, out(g, var)));
  if (!eps || *eps < 0) return std::nullopt;
  const NodeId root = sole_reader(g, out(g, plus));
  if (root < 0 || !is_op(g.node(root), "Sqrt") || sole_reader(g, out(g, root)) != c->div ||
      g.node(c->div).inputs[1] != out(g, root)) {
    return std::nullopt;
  }
  // The affine part: a scale (LayerNormalization needs one), then a shift if there is one.
  const ValueId normed = out(g, c->div);
  const NodeId times = sole_reader(g, normed);
  const Node* mul = binary_reading(g, times, "Mul", normed);
  if (mul == nullptr) return std::nullopt;
  const ValueId scale = other_operand(*mul, normed);
  if (scale == normed || !covers_normalised(g, scale, x, *axis)) return std::nullopt;
  Rewrite r{{mean, c->sub, c->square, var, plus, root, c->div, times},
            "",
            "LayerNormalization",
            {x, scale},
            out(g, times),
            {}};
  const NodeId next = sole_reader(g, r.output);
  if (const Node* shift = binary_reading(g, next, "Add", r.output); shift != nullptr) {
    const ValueId b = other_operand(*shift, r.output);
    if (b != r.output && covers_normalised(g, b, x, *axis)) {
      r.nodes.push_back(next);
      r.inputs.push_back(b);
      r.output = shift->outputs[0];
    }
  }
  r.attributes = {int_attribute("axis", *axis),
                  float_attribute("epsilon", static_cast<float>(*eps))};
  return r;
}

// ---- GELU: x * (1 + f(x)) * 0.5, f the erf of x / sqrt(2) or the tanh of
// sqrt(2 / pi) * (x + 0.044715 x^3).

// The product of x, c1 (= 1 + f) and 0.5 in the orders exporters write it, from c1's reader on:
// its nodes and its output.
std::optional<std::pair<std::vector<NodeId>, ValueId>> half_x_times(const Graph& g, ValueId x,
                                                                    ValueId c1) {
  const NodeId first = sole_reader(g, c1);
  const Node* m1 = binary_reading(g, first, "Mul", c1);
  if (m1 == nullptr) return std::nullopt;
  const ValueId o = other_operand(*m1, c1);
  const ValueId y1 = m1->outputs[0];
  if (o == x || is_near(scalar(g, o), 0.5)) {  // (x c1) 0.5 or (c1 0.5) x
    const NodeId second = sole_reader(g, y1);
    const Node* m2 = binary_reading(g, second, "Mul", y1);
    if (m2 == nullptr) return std::nullopt;
    const ValueId o2 = other_operand(*m2, y1);
    const bool ok = o == x ? is_near(scalar(g, o2), 0.5) : o2 == x;
    if (!ok) return std::nullopt;
    return std::pair<std::vector<NodeId>, ValueId>{{first, second}, m2->outputs[0]};
  }
  // (x 0.5) c1
  const NodeId half = g.value(o).producer;
  const Node* h = binary_reading(g, half, "Mul", x);
  if (h == nullptr || sole_reader(g, o) != first ||
      !is_near(scalar(g, other_operand(*h, x)), 0.5)) {
    return std::nullopt;
  }
  return std::pair<std::vector<NodeId>, ValueId>{{half, first}, y1};
}

// From f's node on: 1 + f, then the product.
std::optional<Rewrite> gelu_from(const Graph& g, std::vector<NodeId> nodes, NodeId f, ValueId x,
                                 std::string_view approximate) {
  const NodeId plus = sole_reader(g, out(g, f));
  const Node* add = binary_reading(g, plus, "Add", out(g, f));
  if (add == nullptr || !is_near(scalar(g, other_operand(*add, out(g, f))), 1.0)) {
    return std::nullopt;
  }
  const auto tail = half_x_times(g, x, out(g, plus));
  if (!tail) return std::nullopt;
  nodes.push_back(f);
  nodes.push_back(plus);
  nodes.insert(nodes.end(), tail->first.begin(), tail->first.end());
  return Rewrite{std::move(nodes), "",
                 "Gelu",           {x},
                 tail->second,     {string_attribute("approximate", approximate)}};
}

std::optional<Rewrite> gelu_erf(const Graph& g, NodeId e) {
  const Node& erf = g.node(e);
  if (!is_op(erf, "Erf") || erf.inputs.size() != 1) return std::nullopt;
  const ValueId a = erf.inputs[0];
  const NodeId s = g.value(a).producer;
  if (s < 0 || sole_reader(g, a) != e || g.node(s).inputs.size() != 2) return std::nullopt;
  const Node& scaled = g.node(s);
  ValueId x = kNoValue;
  if (is_op(scaled, "Div") && is_near(scalar(g, scaled.inputs[1]), std::numbers::sqrt2)) {
    x = scaled.inputs[0];
  } else if (is_op(scaled, "Mul")) {
    for (size_t k = 0; k < 2; ++k) {
      if (is_near(scalar(g, scaled.inputs[k]), 1 / std::numbers::sqrt2)) x = scaled.inputs[1 - k];
    }
  }
  if (!is_real(g, x)) return std::nullopt;
  return gelu_from(g, {s}, e, x, "none");
}

// x^3 as Pow(x, 3), x * (x * x) or (x * x) * x: its nodes, in order.
std::optional<std::vector<NodeId>> cube_of(const Graph& g, ValueId cube, ValueId x) {
  const NodeId c = g.value(cube).producer;
  if (c < 0 || g.node(c).inputs.size() != 2) return std::nullopt;
  const Node& n = g.node(c);
  if (is_op(n, "Pow") && n.inputs[0] == x && is_near(scalar(g, n.inputs[1]), 3.0)) {
    return std::vector<NodeId>{c};
  }
  if (!binary_reading(g, c, "Mul", x)) return std::nullopt;
  const ValueId sq = other_operand(n, x);
  const NodeId s = g.value(sq).producer;
  if (s < 0 || sole_reader(g, sq) != c) return std::nullopt;
  const Node& sn = g.node(s);
  if (!is_op(sn, "Mul") || sn.inputs.size() != 2 || sn.inputs[0] != x || sn.inputs[1] != x) {
    return std::nullopt;
  }
  return std::vector<NodeId>{s, c};
}

std::optional<Rewrite> gelu_tanh(const Graph& g, NodeId t) {
  const Node& th = g.node(t);
  if (!is_op(th, "Tanh") || th.inputs.size() != 1) return std::nullopt;
  // sqrt(2 / pi) * u, u = x + 0.044715 x^3
  const ValueId inner = th.inputs[0];
  const NodeId b = g.value(inner).producer;
  if (b < 0 || sole_reader(g, inner) != t || !is_op(g.node(b), "Mul")) return std::nullopt;
  const Node& beta = g.node(b);
  ValueId u = kNoValue;
  for (size_t k = 0; k < 2 && beta.inputs.size() == 2; ++k) {
    if (is_near(scalar(g, beta.inputs[k]), std::sqrt(2 / std::numbers::pi))) u = beta.inputs[1 - k];
  }
  if (u == kNoValue || sole_reader(g, u) != b) return std::nullopt;
  const NodeId p = g.value(u).producer;
  if (p < 0 || !is_op(g.node(p), "Add") || g.node(p).inputs.size() != 2) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    const ValueId x = g.node(p).inputs[k];
    const ValueId term = g.node(p).inputs[1 - k];
    const NodeId kn = g.value(term).producer;
    if (kn < 0 || sole_reader(g, term) != p || !is_op(g.node(kn), "Mul") ||
        g.node(kn).inputs.size() != 2 || !is_real(g, x)) {
      continue;
    }
    for (size_t j = 0; j < 2; ++j) {
      if (!is_near(scalar(g, g.node(kn).inputs[j]), 0.044715)) continue;
      const ValueId cube = g.node(kn).inputs[1 - j];
      if (sole_reader(g, cube) != kn) continue;
      std::optional<std::vector<NodeId>> nodes = cube_of(g, cube, x);
      if (!nodes) continue;
      nodes->insert(nodes->end(), {kn, p, b});
      return gelu_from(g, std::move(*nodes), t, x, "tanh");
    }
  }
  return std::nullopt;
}

// ---- HardSwish: x * Clip(x + 3, 0, 6) / 6, as Paddle's exporter writes it (the division by 6
// before or after the product, or a product by 1/6): one op, which then folds into the node
// before it as an epilogue.

// Whether node `id` is a Clip to [0, 6], its bounds decoded as the registry decodes them for an
// epilogue (attributes below opset 11, constant inputs from it).
bool clips_to_six(const Graph& g, NodeId id) {
  if (id < 0) return false;
  const Node& c = g.node(id);
  if (!is_op(c, "Clip") || c.schema == nullptr || c.schema->as_epilogue == nullptr) return false;
  const std::optional<Epilogue> e = c.schema->as_epilogue(g, c);
  return e && e->op == EpilogueOp::clip && e->alpha == 0.0F && is_near(e->beta, 6.0);
}

// Node `id` when it divides `v` by 6 or multiplies it by 1/6.
bool sixth_of(const Graph& g, NodeId id, ValueId v) {
  if (const Node* d = binary_reading(g, id, "Div", v); d != nullptr && d->inputs[0] == v) {
    return is_near(scalar(g, d->inputs[1]), 6.0);
  }
  const Node* m = binary_reading(g, id, "Mul", v);
  return m != nullptr && is_near(scalar(g, other_operand(*m, v)), 1.0 / 6.0);
}

std::optional<Rewrite> hard_swish(const Graph& g, NodeId id) {
  const Node& add = g.node(id);
  if (!is_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) return std::nullopt;
  for (const size_t k : {size_t{0}, size_t{1}}) {
    const ValueId x = add.inputs[k];
    if (!is_real(g, x) || !is_near(scalar(g, add.inputs[1 - k]), 3.0)) continue;
    const NodeId clip = sole_reader(g, out(g, id));
    if (!clips_to_six(g, clip) || g.node(clip).inputs[0] != out(g, id)) return std::nullopt;
    const ValueId c = out(g, clip);
    const NodeId next = sole_reader(g, c);
    NodeId last = -1;
    if (const Node* m = binary_reading(g, next, "Mul", c);
        m != nullptr && other_operand(*m, c) == x) {
      last = sole_reader(g, m->outputs[0]);  // product first: x * c, then / 6
      if (!sixth_of(g, last, m->outputs[0])) return std::nullopt;
    } else {
      if (!sixth_of(g, next, c)) return std::nullopt;  // division first: c / 6, then x * that
      last = sole_reader(g, out(g, next));
      const Node* m2 = binary_reading(g, last, "Mul", out(g, next));
      if (m2 == nullptr || other_operand(*m2, out(g, next)) != x) return std::nullopt;
    }
    return Rewrite{{id, clip, next, last}, "", "HardSwish", {x}, out(g, last), {}};
  }
  return std::nullopt;
}

// ---- MatMul then Add of a bias along the last axis: one product with a bias (a Linear's).

std::optional<Rewrite> matmul_add(const Graph& g, NodeId id) {
  const Node& mm = g.node(id);
  if (!is_op(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1) return std::nullopt;
  const Shape& as = g.value(mm.inputs[0]).shape;
  const Shape& bs = g.value(mm.inputs[1]).shape;
  const ValueId y = mm.outputs[0];
  const Shape& ys = g.value(y).shape;
  if (!is_real(g, mm.inputs[0]) || !is_real(g, mm.inputs[1]) || !as.ranked || !bs.ranked ||
      as.rank() < 2 || bs.rank() < 2 || !ys.ranked) {
    return std::nullopt;
  }
  const NodeId a = sole_reader(g, y);
  const Node* add = binary_reading(g, a, "Add", y);
  if (add == nullptr) return std::nullopt;
  const ValueId bias = other_operand(*add, y);
  const Shape& cs = g.value(bias).shape;
  if (bias == y || !is_real(g, bias) || !cs.ranked || cs.rank() == 0 || cs.rank() > ys.rank()) {
    return std::nullopt;
  }
  for (size_t i = 0; i + 1 < cs.rank(); ++i) {
    if (cs.dims[i].value() != 1) return std::nullopt;
  }
  const auto n = cs.dims.back().value();
  if (!n || ys.dims.back().value() != n || g.value(add->outputs[0]).shape != ys) {
    return std::nullopt;
  }
  return Rewrite{{id, a},         "footprint", "MatMulAdd", {mm.inputs[0], mm.inputs[1], bias},
                 add->outputs[0], {}};
}

// ---- Channel shuffle (ShuffleNet): x [N, C, H, W] reshaped to [N, g, C/g, H, W], its two group
// axes swapped, reshaped back: a permutation of the channels, which channels-last runs per pixel
// instead of changing the layout around the Transpose.

std::optional<Rewrite> channel_shuffle(const Graph& g, NodeId id) {
  const Node& split = g.node(id);
  if (!is_op(split, "Reshape") || split.inputs.empty() || split.outputs.size() != 1) {
    return std::nullopt;
  }
  const ValueId x = split.inputs[0];
  const Shape& xs = g.value(x).shape;
  const Shape& gs = g.value(split.outputs[0]).shape;
  if (!is_real(g, x) || !xs.ranked || xs.rank() != 4 || !gs.ranked || gs.rank() != 5) {
    return std::nullopt;
  }
  const auto channels = xs.dims[1].value();
  const auto groups = gs.dims[1].value();
  const auto per_group = gs.dims[2].value();
  if (!channels || !groups || !per_group || *groups * *per_group != *channels || *groups < 2 ||
      !(gs.dims[0] == xs.dims[0]) || !(gs.dims[3] == xs.dims[2]) || !(gs.dims[4] == xs.dims[3])) {
    return std::nullopt;
  }
  const NodeId swap = sole_reader(g, split.outputs[0]);
  if (swap < 0 || !is_op(g.node(swap), "Transpose") ||
      attr_ints(g.node(swap), "perm") != std::vector<int64_t>{0, 2, 1, 3, 4}) {
    return std::nullopt;
  }
  const NodeId merge = sole_reader(g, out(g, swap));
  if (merge < 0 || !is_op(g.node(merge), "Reshape") || g.node(merge).inputs[0] != out(g, swap) ||
      !(g.value(out(g, merge)).shape == xs)) {
    return std::nullopt;
  }
  return Rewrite{{id, swap, merge}, "footprint",
                 "ChannelShuffle",  {x},
                 out(g, merge),     {int_attribute("group", *groups)}};
}

// ---- Attention: MatMul(Q, Kt), a scale (Div or Mul by a constant scalar), a mask (Add of an
// additive one, or Where keeping scores under a condition and filling the rest), Softmax over
// the last axis, an inference Dropout, MatMul by V: one op whose scores never leave its
// workspace a block of query rows at a time.

// A Shape node taking all of its input's extents (no start or end).
bool whole_shape(const Node& n) {
  return is_op(n, "Shape") && n.attribute("start") == nullptr && n.attribute("end") == nullptr;
}

// The one reader of `v` that reads its elements, others reading only its shape (whole_shape);
// -1 when there is not exactly one or v is seen outside (a graph output).
NodeId data_reader(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  if (value.is_graph_output || value.kind != ValueKind::intermediate || !is_real(g, v)) return -1;
  NodeId reader = -1;
  for (const NodeId c : value.consumers) {
    if (whole_shape(g.node(c)) || c == reader) continue;
    if (reader != -1) return -1;
    reader = c;
  }
  return reader;
}

// Whether `m` broadcasts to `to` (ranked, extents known or equal as dims).
bool broadcasts_to(const Shape& m, const Shape& to) {
  if (!m.ranked || !to.ranked || m.rank() > to.rank()) return false;
  for (size_t i = 0; i < m.rank(); ++i) {
    const Dim& a = m.dims[m.rank() - 1 - i];
    const Dim& b = to.dims[to.rank() - 1 - i];
    if (!(a.value() && *a.value() == 1) && !(a == b)) return false;
  }
  return true;
}

// Q [.., Sq, d], Kt [.., d, Sk], V [.., Sk, dv] with the same leading dims: what the kernel runs.
bool attention_operands(const Graph& g, ValueId q, ValueId kt, ValueId v) {
  const Shape& qs = g.value(q).shape;
  const Shape& ks = g.value(kt).shape;
  const Shape& vs = g.value(v).shape;
  if (!is_real(g, q) || !is_real(g, kt) || !is_real(g, v) || !qs.ranked || !ks.ranked ||
      !vs.ranked || qs.rank() < 2 || qs.rank() != ks.rank() || qs.rank() != vs.rank()) {
    return false;
  }
  const size_t r = qs.rank();
  for (size_t i = 0; i + 2 < r; ++i) {
    if (!(qs.dims[i] == ks.dims[i]) || !(qs.dims[i] == vs.dims[i])) return false;
  }
  return qs.dims[r - 1] == ks.dims[r - 2] && ks.dims[r - 1] == vs.dims[r - 2];
}

// A Dropout that passes its input through: not training (training_mode absent or a constant
// false) or dropping nothing (a constant ratio of 0, as exports in training mode write it), its
// mask unread.
bool inference_dropout(const Graph& g, const Node& n) {
  if (!is_op(n, "Dropout") || n.inputs.empty() || n.inputs.size() > 3) return false;
  if (n.outputs.size() > 1 && n.outputs[1] != kNoValue &&
      (!g.value(n.outputs[1]).consumers.empty() || g.value(n.outputs[1]).is_graph_output)) {
    return false;
  }
  if (n.inputs.size() < 3 || n.inputs[2] == kNoValue) return true;
  const std::optional<double> training = scalar(g, n.inputs[2]);
  const std::optional<double> ratio = n.inputs[1] != kNoValue ? scalar(g, n.inputs[1]) : 0.5;
  return (training && *training == 0) || (ratio && *ratio == 0);
}

std::optional<Rewrite> attention(const Graph& g, NodeId sm) {
  const Node& s = g.node(sm);
  if (!is_op(s, "Softmax") || s.inputs.size() != 1 || !is_real(g, s.inputs[0])) {
    return std::nullopt;
  }
  const Shape& ss = g.value(s.inputs[0]).shape;
  if (!ss.ranked || ss.rank() < 2) return std::nullopt;
  int64_t axis = attr_int(s, "axis", g.opset(s.domain) < 13 ? 1 : -1);
  if (axis < 0) axis += static_cast<int64_t>(ss.rank());
  if (axis != static_cast<int64_t>(ss.rank()) - 1) return std::nullopt;
  // Backwards from the Softmax: the mask, the scale, the product.
  std::vector<NodeId> nodes{sm};
  ValueId chain = s.inputs[0];
  ValueId mask = kNoValue, keep = kNoValue, fill = kNoValue;
  std::vector<ValueId> hidden{chain};  // the scores on their way, each of the Softmax's shape
  auto producer_reading = [&](ValueId v) -> NodeId {
    const NodeId p = g.value(v).producer;
    return p >= 0 && data_reader(g, v) >= 0 && g.node(p).outputs.size() == 1 ? p : -1;
  };
  NodeId p = producer_reading(chain);
  if (p >= 0 && is_op(g.node(p), "Where") && g.node(p).inputs.size() == 3) {
    const Node& w = g.node(p);
    const Shape& fs = g.value(w.inputs[2]).shape;
    if (g.value(w.inputs[0]).dtype != DType::boolean || !is_real(g, w.inputs[2]) || !fs.ranked ||
        fs.rank() > 0 || !broadcasts_to(g.value(w.inputs[0]).shape, ss)) {
      return std::nullopt;
    }
    keep = w.inputs[0];
    fill = w.inputs[2];
    chain = w.inputs[1];
    hidden.push_back(chain);
    nodes.push_back(p);
    p = producer_reading(chain);
  } else if (p >= 0 && is_op(g.node(p), "Add") && g.node(p).inputs.size() == 2) {
    const Node& a = g.node(p);
    // The operand that is the product's path: the one a Div, Mul or MatMul wrote.
    for (size_t k = 0; k < 2; ++k) {
      const NodeId q = g.value(a.inputs[k]).producer;
      if (q < 0 || data_reader(g, a.inputs[k]) != p) continue;
      const Node& qn = g.node(q);
      if (is_op(qn, "MatMul") || is_op(qn, "Div") || is_op(qn, "Mul")) {
        chain = a.inputs[k];
        mask = a.inputs[1 - k];
        break;
      }
    }
    if (mask == kNoValue || !is_real(g, mask) || !broadcasts_to(g.value(mask).shape, ss)) {
      return std::nullopt;
    }
    hidden.push_back(chain);
    nodes.push_back(p);
    p = producer_reading(chain);
  }
  double scale = 1;
  std::optional<double> divisor;  // a Div's constant: a 16-bit kernel divides as the Div did
  if (p >= 0 && (is_op(g.node(p), "Div") || is_op(g.node(p), "Mul")) &&
      g.node(p).inputs.size() == 2) {
    const Node& d = g.node(p);
    const bool div = d.op_type == "Div";
    const size_t k =
        !div && scalar(g, d.inputs[0]) ? 1 : 0;  // the operand that is not the constant
    const std::optional<double> c = scalar(g, d.inputs[1 - k]);
    if (!c || *c == 0 || (div && k != 0)) return std::nullopt;
    scale = div ? 1 / *c : *c;
    if (div) divisor = *c;
    chain = d.inputs[k];
    hidden.push_back(chain);
    nodes.push_back(p);
    p = producer_reading(chain);
  }
  if (p < 0 || !is_op(g.node(p), "MatMul") || g.node(p).inputs.size() != 2) return std::nullopt;
  const ValueId q = g.node(p).inputs[0];
  const ValueId kt = g.node(p).inputs[1];
  nodes.push_back(p);
  // Forwards: an inference Dropout (its mask unread), then the product by V.
  ValueId probs = s.outputs[0];
  NodeId next = sole_reader(g, probs);
  if (next >= 0 && inference_dropout(g, g.node(next))) {
    nodes.push_back(next);
    probs = g.node(next).outputs[0];
    next = sole_reader(g, probs);
  }
  if (next < 0 || !is_op(g.node(next), "MatMul") || g.node(next).inputs[0] != probs ||
      g.node(next).inputs[1] == probs) {
    return std::nullopt;
  }
  const ValueId v = g.node(next).inputs[1];
  if (!attention_operands(g, q, kt, v)) return std::nullopt;
  nodes.push_back(next);
  std::vector<ValueId> inputs{q, kt, v, mask, keep, fill};
  while (inputs.back() == kNoValue) inputs.pop_back();
  Rewrite r{std::move(nodes),
            "footprint",
            "Attention",
            std::move(inputs),
            g.node(next).outputs[0],
            {float_attribute("scale", static_cast<float>(scale))}};
  if (divisor) r.attributes.push_back(float_attribute("divisor", static_cast<float>(*divisor)));
  for (const ValueId h : hidden) {
    for (const NodeId c : g.value(h).consumers) {
      if (!whole_shape(g.node(c))) continue;
      if (g.value(h).shape != ss) return std::nullopt;
      r.shape_readers.push_back(c);
    }
  }
  r.shape_a = q;
  r.shape_b = kt;
  return r;
}

// ---- Rewriting

// "prefix/" shared by every replaced node's name, then the op: where the exporter's module was.
std::string name_of(const Graph& g, const Rewrite& r) {
  std::string_view prefix = g.node(r.nodes.front()).name;
  for (const NodeId id : r.nodes) {
    const std::string_view n = g.node(id).name;
    size_t k = 0;
    while (k < prefix.size() && k < n.size() && prefix[k] == n[k]) ++k;
    prefix = prefix.substr(0, k);
  }
  prefix =
      prefix.substr(0, prefix.rfind('/') == std::string_view::npos ? 0 : prefix.rfind('/') + 1);
  return std::string(prefix) + std::string(r.op);
}

std::string line_of(const Graph& g, const Rewrite& r, const Node& made) {
  const NodeId first = r.nodes.front();
  const NodeId last = r.nodes.back();
  std::string line = made.qualified_op() + " " + in_quotes(made.name) + " from " +
                     std::to_string(r.nodes.size()) + " nodes: " + g.node(first).label(first) +
                     " ... " + g.node(last).label(last);
  const std::string_view program = attr_string(made, "program", "");
  if (!program.empty()) line += " as " + std::string(program);
  return line;
}

// Shape(a, end -1), Shape(b, start -1) and their Concat: the extents of a's product by b, written
// where `reader` (a Shape of that product) wrote them.
std::vector<Node> product_shape(Graph& g, NodeId reader, ValueId a, ValueId b) {
  const ValueId out = g.node(reader).outputs[0];
  const ValueId rows = g.add_intermediate(g.value(out).name + "/rows");
  const ValueId columns = g.add_intermediate(g.value(out).name + "/columns");
  auto node = [&](std::string_view op, std::vector<ValueId> in, ValueId to,
                  const onnx::AttributeProto& attribute) {
    Node n;
    n.name = g.value(to).name;
    n.op_type = std::string(op);
    n.inputs = std::move(in);
    n.outputs = {to};
    n.attributes = g.own_attributes({attribute});
    n.schema = g.registry()->find("", op);
    n.source_offset = g.node(reader).source_offset;
    return n;
  };
  std::vector<Node> nodes;
  nodes.push_back(node("Shape", {a}, rows, int_attribute("end", -1)));
  nodes.push_back(node("Shape", {b}, columns, int_attribute("start", -1)));
  nodes.push_back(node("Concat", {rows, columns}, out, int_attribute("axis", 0)));
  return nodes;
}

}  // namespace

bool is_real(const Graph& g, ValueId v) {
  return v != kNoValue && dtype_traits(g.value(v).dtype).is_float();
}

NodeId sole_reader(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  if (value.is_graph_output || value.kind != ValueKind::intermediate || !is_real(g, v)) return -1;
  NodeId reader = -1;
  for (const NodeId c : value.consumers) {
    if (reader != -1 && c != reader) return -1;
    reader = c;
  }
  return reader;
}

size_t fuse_patterns(Graph& g, std::vector<std::string>& lines) {
  // LayerNorm and GELU first: a MatMul whose bias Add feeds one is rewritten either way.
  const Finder finders[] = {layer_norm, gelu_erf,        gelu_tanh, attention,
                            matmul_add, channel_shuffle, hard_swish};
  return rewrite(g, finders, lines);
}

bool makes_runnable(const Graph& g, const Rewrite& r) {
  const OpSchema* row = g.registry()->find(r.domain, r.op);
  const ValueId output[] = {r.output};
  return row != nullptr && (row->kernel != nullptr || !g.registry()->runs_kernels()) &&
         !dtype_refused(g, *row, r.inputs, output);
}

size_t rewrite(Graph& g, std::span<const Finder> finders, std::vector<std::string>& lines) {
  if (g.registry() == nullptr) return 0;
  std::vector<Rewrite> found;
  std::vector<int> taken(g.nodes().size(), -1);
  for (const Finder find : finders) {
    for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
      std::optional<Rewrite> r = find(g, id);
      if (!r || !makes_runnable(g, *r)) continue;
      const auto is_taken = [&](NodeId n) { return taken[n] >= 0; };
      if (std::any_of(r->nodes.begin(), r->nodes.end(), is_taken) ||
          std::any_of(r->shape_readers.begin(), r->shape_readers.end(), is_taken)) {
        continue;
      }
      std::sort(r->nodes.begin(), r->nodes.end());
      for (const NodeId n : r->nodes) taken[n] = static_cast<int>(found.size());
      for (const NodeId n : r->shape_readers) taken[n] = static_cast<int>(found.size());
      found.push_back(std::move(*r));
    }
  }
  if (found.empty()) return 0;
  std::vector<Node> made;
  std::vector<std::vector<Node>> shapes(g.nodes().size());
  size_t removed = 0;
  for (Rewrite& r : found) {
    for (const NodeId id : r.shape_readers) shapes[id] = product_shape(g, id, r.shape_a, r.shape_b);
    Node n;
    n.name = name_of(g, r);
    n.op_type = std::string(r.op);
    n.domain = std::string(r.domain);
    n.inputs = r.inputs;
    n.outputs = {r.output};
    if (!r.program.empty()) {
      r.attributes.push_back(string_attribute("program", g.own_text(std::move(r.program))));
    }
    n.attributes = g.own_attributes(std::move(r.attributes));
    n.schema = g.registry()->find(r.domain, r.op);
    n.source_offset = g.node(r.nodes.back()).source_offset;
    lines.push_back(line_of(g, r, n));
    removed += r.nodes.size() - 1;
    made.push_back(std::move(n));
  }
  // Each new node stands where the last node it replaces stood: whatever it reads is written
  // before that one.
  std::vector<Node> old = g.take_nodes();
  std::vector<Node> nodes;
  nodes.reserve(old.size() + 2 * shapes.size());
  for (size_t id = 0; id < old.size(); ++id) {
    const int k = taken[id];
    if (k < 0) {
      nodes.push_back(std::move(old[id]));
    } else if (!shapes[id].empty()) {
      for (Node& n : shapes[id]) nodes.push_back(std::move(n));
    } else if (static_cast<NodeId>(id) == found[static_cast<size_t>(k)].nodes.back()) {
      nodes.push_back(std::move(made[static_cast<size_t>(k)]));
    }
  }
  g.replace_nodes(std::move(nodes));
  // The product shapes' new values get their types and known extents.
  if (std::any_of(shapes.begin(), shapes.end(), [](const auto& s) { return !s.empty(); })) {
    infer_shapes(g);
  }
  return removed;
}

}  // namespace footprint::graph
