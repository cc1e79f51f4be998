// Inference BatchNormalization is y = x * a + (B - mean * a) per channel, a = scale / sqrt(var +
// eps); caffe2's exporter adds a Mul and an Add by per-channel constants after it. After a
// convolution, x's channel m is the convolution's output channel m, so scaling W's slice m (and
// the bias) computes y in the convolution itself; after a normalisation, scaling its scale and
// shift does. Each pass over the activations, and each tensor between, is gone, and the
// activation after the chain (a Relu) becomes the host's epilogue. The folded parameters are
// ordinary constants: the runtime computes them once while preparing and releases the originals
// no step reads (analysis counts those as read only while preparing), then packs the folded
// weights as it packs any convolution's.
#include "fold_channel_affine.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "footprint/core/error.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"

namespace footprint::graph {
namespace {

constexpr float kDefaultEpsilon = 1e-5F;

bool is_plain(const Node& n, std::string_view op) {
  return n.domain.empty() && n.op_type == op && n.epilogues.empty() && n.subgraphs.empty();
}

// A constant the fold may compute with: real numbers in the dtype `t` of the host's output (a
// BatchNormalization may hold its statistics in another dtype since opset 15: not folded). Which
// dtypes the folding rows compute in is theirs to say (runs_made).
bool is_param(const Graph& g, ValueId v, DType t) {
  return v != kNoValue && g.value(v).dtype == t && g.value(v).constant &&
         dtype_traits(t).is_float();
}

// The dtype the host computes in: its output's.
DType host_dtype(const Graph& g, const Node& n) {
  return n.outputs.empty() || n.outputs[0] == kNoValue ? DType::undefined
                                                       : g.value(n.outputs[0]).dtype;
}

// A constant of `channels` elements along one axis (a normalisation's parameter).
bool is_channel_vector(const Graph& g, ValueId v, int64_t channels, DType t) {
  if (!is_param(g, v, t)) return false;
  const Shape& s = g.value(v).shape;
  return s.ranked && s.rank() == 1 && s.dims[0].value() == channels;
}

// Outputs past the first (training statistics, or saved ones before opset 9) that anything reads
// would lose their producer.
bool only_first_output_used(const Graph& g, const Node& n) {
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    const ValueId v = n.outputs[i];
    if (v == kNoValue) continue;
    if (g.value(v).is_graph_output || !g.value(v).consumers.empty()) return false;
  }
  return true;
}

// The node that alone reads `v`, an intermediate of real numbers no graph output is; -1
// otherwise.
NodeId sole_reader(const Graph& g, ValueId v) {
  const Value& value = g.value(v);
  if (value.kind != ValueKind::intermediate || value.is_graph_output ||
      !dtype_traits(value.dtype).is_float() || value.consumers.size() != 1) {
    return -1;
  }
  return value.consumers[0];
}

bool is_inference_norm(const Graph& g, const Node& n) {
  return is_plain(n, "BatchNormalization") && n.inputs.size() == 5 &&
         attr_int(n, "training_mode", 0) == 0 && only_first_output_used(g, n);
}

// Where a host's parameters are: a Conv's weights [M, ...] and optional bias, a normalisation's
// scale and shift (which its mean and variance do not change).
struct Host {
  NodeId id = -1;
  size_t weights = 0;  // input index scaled by a Mul
  size_t bias = 0;     // input index scaled by a Mul and shifted by an Add
  int64_t channels = 0;
};

std::optional<Host> host_of(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (n.outputs.size() != 1 && !is_inference_norm(g, n)) return std::nullopt;
  const DType t = host_dtype(g, n);
  if (is_plain(n, "Conv") && n.inputs.size() >= 2 && is_param(g, n.inputs[1], t)) {
    const Shape& w = g.value(n.inputs[1]).shape;
    if (!w.ranked || w.rank() < 1 || !w.dims[0].value()) return std::nullopt;
    const int64_t m = *w.dims[0].value();
    const bool bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
    if (bias && !is_channel_vector(g, n.inputs[2], m, t)) return std::nullopt;
    return Host{id, 1, 2, m};
  }
  if (is_inference_norm(g, n) && is_param(g, n.inputs[1], t)) {
    const Shape& s = g.value(n.inputs[1]).shape;
    if (!s.ranked || s.rank() != 1 || !s.dims[0].value()) return std::nullopt;
    const int64_t m = *s.dims[0].value();
    for (size_t i = 1; i < 5; ++i) {
      if (!is_channel_vector(g, n.inputs[i], m, t)) return std::nullopt;
    }
    return Host{id, 1, 2, m};
  }
  return std::nullopt;
}

// A constant that broadcasts along axis 1 of a rank-`rank` tensor of `channels` channels alone:
// its extents, aligned to the tensor's last axes, are all 1 but the channel axis's (M or 1).
bool per_channel(const Graph& g, ValueId v, size_t rank, int64_t channels, DType t) {
  if (!is_param(g, v, t)) return false;
  const Shape& s = g.value(v).shape;
  if (!s.ranked || s.rank() > rank) return false;
  for (size_t j = 0; j < s.rank(); ++j) {
    const std::optional<int64_t> d = s.dims[j].value();
    const size_t axis = rank - s.rank() + j;
    if (!d || (*d != 1 && (axis != 1 || *d != channels))) return false;
  }
  return true;
}

// One rewrite: the host's inputs `replaced` take the outputs of `made` (constant nodes placed
// before the host), the host moves to where `folded` stood and writes what it wrote.
struct Fold {
  NodeId host = -1;
  NodeId folded = -1;
  std::vector<std::pair<size_t, ValueId>> replaced;
  std::vector<Node> made;
  std::string line;
};

Node constant_node(Graph& g, std::string_view op, std::string name, std::vector<ValueId> inputs,
                   std::vector<ValueId> outputs, const Node& at) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::string(op);
  n.domain = "footprint";
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.schema = g.registry()->find("footprint", op);
  n.source_offset = at.source_offset;
  return n;
}

std::string line_of(const Graph& g, NodeId host, NodeId folded) {
  const Node& h = g.node(host);
  const Node& f = g.node(folded);
  return h.op_type + "+" + f.op_type + " " + in_quotes(h.name) + " from 2 nodes: " + h.label(host) +
         " ... " + f.label(folded);
}

// An inference BatchNormalization after a Conv -> FoldBatchNorm(W, scale, B, mean, var[, bias]).
std::optional<Fold> norm_into_conv(Graph& g, NodeId id) {
  const Node& bn = g.node(id);
  if (!is_inference_norm(g, bn)) return std::nullopt;
  const NodeId producer = g.value(bn.inputs[0]).producer;
  if (producer < 0 || sole_reader(g, bn.inputs[0]) != id) return std::nullopt;
  const std::optional<Host> h = host_of(g, producer);
  if (!h || !is_plain(g.node(producer), "Conv")) return std::nullopt;
  const Node& conv = g.node(producer);
  for (size_t i = 1; i < 5; ++i) {
    if (!is_channel_vector(g, bn.inputs[i], h->channels, host_dtype(g, conv))) return std::nullopt;
  }
  Fold f{producer, id, {}, {}, line_of(g, producer, id)};
  const ValueId w = g.add_intermediate(g.value(conv.inputs[1]).name + "/folded");
  const ValueId bias = g.add_intermediate(bn.name + "/folded_bias");
  std::vector<ValueId> in = {conv.inputs[1], bn.inputs[1], bn.inputs[2], bn.inputs[3],
                             bn.inputs[4]};
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue) in.push_back(conv.inputs[2]);
  Node n = constant_node(g, "FoldBatchNorm", bn.name + "/fold", std::move(in), {w, bias}, bn);
  n.attributes =
      g.own_attributes({float_attribute("epsilon", attr_float(bn, "epsilon", kDefaultEpsilon))});
  f.made.push_back(std::move(n));
  f.replaced = {{1, w}, {2, bias}};
  return f;
}

// A Mul or Add by a per-channel constant after a host -> ChannelAffine(weights, scale) and
// ChannelAffine(bias, scale, shift).
std::optional<Fold> affine_into_host(Graph& g, NodeId id) {
  const Node& e = g.node(id);
  const bool mul = is_plain(e, "Mul");
  if ((!mul && !is_plain(e, "Add")) || e.inputs.size() != 2 || e.outputs.size() != 1) {
    return std::nullopt;
  }
  for (const size_t k : {size_t{0}, size_t{1}}) {
    const ValueId x = e.inputs[k];
    const ValueId c = e.inputs[1 - k];
    const NodeId producer = g.value(x).producer;
    if (producer < 0 || sole_reader(g, x) != id || c == x) continue;
    const std::optional<Host> h = host_of(g, producer);
    const Shape& xs = g.value(x).shape;
    const Node& host = g.node(producer);
    if (!h || !xs.ranked || xs.rank() < 2 ||
        !per_channel(g, c, xs.rank(), h->channels, host_dtype(g, host))) {
      continue;
    }
    const bool bias = h->bias < host.inputs.size() && host.inputs[h->bias] != kNoValue;
    if (!mul && !bias) return std::nullopt;  // a Conv without a bias: nothing to shift
    Fold f{producer, id, {}, {}, line_of(g, producer, id)};
    if (mul) {
      const ValueId w = g.add_intermediate(g.value(host.inputs[h->weights]).name + "/scaled");
      f.made.push_back(constant_node(g, "ChannelAffine", e.name + "/fold_weights",
                                     {host.inputs[h->weights], c, kNoValue}, {w}, e));
      f.replaced.emplace_back(h->weights, w);
    }
    if (bias) {
      const ValueId b = g.add_intermediate(g.value(host.inputs[h->bias]).name + "/folded");
      f.made.push_back(constant_node(g, "ChannelAffine", e.name + "/fold_bias",
                                     {host.inputs[h->bias], mul ? c : kNoValue, mul ? kNoValue : c},
                                     {b}, e));
      f.replaced.emplace_back(h->bias, b);
    }
    return f;
  }
  return std::nullopt;
}

using Finder = std::optional<Fold> (*)(Graph& g, NodeId id);

// Whether the kernels of the constant nodes a fold makes run their dtype (OpSchema::kernel_dtypes):
// a float64 Conv and BatchNormalization stay as they are where FoldBatchNorm computes float32.
bool runs_made(const Graph& g, const Fold& f) {
  return std::none_of(f.made.begin(), f.made.end(),
                      [&](const Node& n) { return dtype_refused(g, n).has_value(); });
}

// One pass of `find` over the nodes; the folds it finds are disjoint (each host's output has one
// reader). Returns how many it made.
size_t fold_pass(Graph& g, Finder find, std::vector<std::string>& lines) {
  std::vector<Fold> folds;
  std::vector<char> taken(g.nodes().size(), 0);
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    std::optional<Fold> f = find(g, id);
    if (!f || !runs_made(g, *f) || taken[static_cast<size_t>(f->host)] ||
        taken[static_cast<size_t>(f->folded)]) {
      continue;
    }
    taken[static_cast<size_t>(f->host)] = taken[static_cast<size_t>(f->folded)] = 1;
    folds.push_back(std::move(*f));
  }
  if (folds.empty()) return 0;
  std::vector<int> host_of_fold(g.nodes().size(), -1);
  std::vector<int> folded_of(g.nodes().size(), -1);
  for (size_t k = 0; k < folds.size(); ++k) {
    host_of_fold[static_cast<size_t>(folds[k].host)] = static_cast<int>(k);
    folded_of[static_cast<size_t>(folds[k].folded)] = static_cast<int>(k);
    lines.push_back(folds[k].line);
  }
  // Each host moves to where the node it absorbs stood, after the constants it now reads: every
  // input of those is written before that place.
  std::vector<Node> old = g.take_nodes();
  std::vector<Node> nodes;
  nodes.reserve(old.size() + 2 * folds.size());
  for (size_t id = 0; id < old.size(); ++id) {
    if (host_of_fold[id] >= 0) continue;
    const int k = folded_of[id];
    if (k < 0) {
      nodes.push_back(std::move(old[id]));
      continue;
    }
    Fold& f = folds[static_cast<size_t>(k)];
    Node host = std::move(old[static_cast<size_t>(f.host)]);
    for (const auto& [input, value] : f.replaced) {
      if (host.inputs.size() <= input) host.inputs.resize(input + 1, kNoValue);
      host.inputs[input] = value;
    }
    host.outputs[0] = old[id].outputs[0];
    for (Node& n : f.made) nodes.push_back(std::move(n));
    nodes.push_back(std::move(host));
  }
  g.replace_nodes(std::move(nodes));
  infer_shapes(g);
  return folds.size();
}

}  // namespace

size_t fold_channel_affines(Graph& g, std::vector<std::string>& lines) {
  const OpRegistry* r = g.registry();
  if (r == nullptr || r->find("footprint", "FoldBatchNorm") == nullptr ||
      r->find("footprint", "ChannelAffine") == nullptr) {
    return 0;
  }
  // A chain (Conv, BatchNormalization, Mul, Add) folds one link per pass, from the host on.
  size_t removed = 0;
  for (;;) {
    const size_t made = fold_pass(g, norm_into_conv, lines) + fold_pass(g, affine_into_host, lines);
    if (made == 0) return removed;
    removed += made;
  }
}

}  // namespace footprint::graph
