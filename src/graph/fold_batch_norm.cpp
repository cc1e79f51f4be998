// Inference BatchNormalization is y = x * a + (B - mean * a) per channel, a = scale / sqrt(var +
// eps). After a convolution, x's channel m is the convolution's output channel m, so scaling W's
// slice m by a and the bias likewise computes y in the convolution itself: the normalisation's
// pass over the activations, and the tensor between the two, are gone, and the activation after
// the normalisation (a Relu) becomes the convolution's epilogue. The folded weights are an
// ordinary constant: the runtime computes them once while preparing and releases the originals
// no step reads (analysis counts those as read only while preparing), then packs the folded ones
// as it packs any convolution's.
#include "fold_batch_norm.hpp"

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

struct Fold {
  NodeId conv = -1;
  NodeId norm = -1;
};

bool is_plain(const Node& n, std::string_view op) {
  return n.domain.empty() && n.op_type == op && n.epilogues.empty() && n.subgraphs.empty();
}

bool is_float_constant(const Graph& g, ValueId v) {
  return v != kNoValue && g.value(v).dtype == DType::float32 && g.value(v).constant;
}

// A float32 constant of `channels` elements along one axis (a BatchNormalization parameter).
bool is_channel_vector(const Graph& g, ValueId v, int64_t channels) {
  if (!is_float_constant(g, v)) return false;
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

std::optional<Fold> conv_then_norm(const Graph& g, NodeId id) {
  const Node& bn = g.node(id);
  if (!is_plain(bn, "BatchNormalization") || bn.inputs.size() != 5 ||
      attr_int(bn, "training_mode", 0) != 0 || !only_first_output_used(g, bn)) {
    return std::nullopt;
  }
  const ValueId x = bn.inputs[0];
  const Value& xv = g.value(x);
  if (xv.kind != ValueKind::intermediate || xv.is_graph_output || xv.producer < 0 ||
      xv.dtype != DType::float32 || xv.consumers != std::vector<NodeId>{id}) {
    return std::nullopt;
  }
  const Node& conv = g.node(xv.producer);
  if (!is_plain(conv, "Conv") || conv.outputs.size() != 1 || conv.inputs.size() < 2) {
    return std::nullopt;
  }
  const ValueId w = conv.inputs[1];
  if (!is_float_constant(g, w) || !g.value(w).shape.ranked || g.value(w).shape.rank() < 1) {
    return std::nullopt;
  }
  const std::optional<int64_t> channels = g.value(w).shape.dims[0].value();
  if (!channels) return std::nullopt;
  for (size_t i = 1; i < 5; ++i) {
    if (!is_channel_vector(g, bn.inputs[i], *channels)) return std::nullopt;
  }
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue &&
      !is_channel_vector(g, conv.inputs[2], *channels)) {
    return std::nullopt;
  }
  return Fold{xv.producer, id};
}

// footprint::FoldBatchNorm(W, scale, B, mean, var[, bias]) -> W', bias', standing where the
// normalisation stood (every input is written before that).
Node fold_node(Graph& g, const Node& conv, const Node& bn, ValueId w, ValueId bias) {
  Node n;
  n.name = bn.name + "/fold";
  n.op_type = "FoldBatchNorm";
  n.domain = "footprint";
  n.inputs = {conv.inputs[1], bn.inputs[1], bn.inputs[2], bn.inputs[3], bn.inputs[4]};
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue) n.inputs.push_back(conv.inputs[2]);
  n.outputs = {w, bias};
  n.attributes =
      g.own_attributes({float_attribute("epsilon", attr_float(bn, "epsilon", kDefaultEpsilon))});
  n.schema = g.registry()->find("footprint", "FoldBatchNorm");
  n.source_offset = bn.source_offset;
  return n;
}

}  // namespace

size_t fold_batch_norms(Graph& g, std::vector<std::string>& lines) {
  if (g.registry() == nullptr || g.registry()->find("footprint", "FoldBatchNorm") == nullptr) {
    return 0;
  }
  std::vector<Fold> folds;
  for (NodeId id = 0; id < static_cast<NodeId>(g.nodes().size()); ++id) {
    if (std::optional<Fold> f = conv_then_norm(g, id)) folds.push_back(*f);
  }
  if (folds.empty()) return 0;
  // By node: the fold a convolution leaves (moved to its normalisation's place), and the one a
  // normalisation's place takes.
  std::vector<int> conv_of(g.nodes().size(), -1);
  std::vector<int> norm_of(g.nodes().size(), -1);
  for (size_t k = 0; k < folds.size(); ++k) {
    conv_of[static_cast<size_t>(folds[k].conv)] = static_cast<int>(k);
    norm_of[static_cast<size_t>(folds[k].norm)] = static_cast<int>(k);
  }
  std::vector<Node> made;
  made.reserve(folds.size());
  for (const Fold& f : folds) {
    const Node& conv = g.node(f.conv);
    const Node& bn = g.node(f.norm);
    lines.push_back("Conv+BatchNormalization " + in_quotes(conv.name) +
                    " from 2 nodes: " + conv.label(f.conv) + " ... " + bn.label(f.norm));
    const ValueId w = g.add_intermediate(g.value(conv.inputs[1]).name + "/folded");
    const ValueId bias = g.add_intermediate(bn.name + "/folded_bias");
    made.push_back(fold_node(g, conv, bn, w, bias));
  }
  std::vector<Node> old = g.take_nodes();
  std::vector<Node> nodes;
  nodes.reserve(old.size() + folds.size());
  for (size_t id = 0; id < old.size(); ++id) {
    if (conv_of[id] >= 0) continue;
    const int k = norm_of[id];
    if (k < 0) {
      nodes.push_back(std::move(old[id]));
      continue;
    }
    Node& fold = made[static_cast<size_t>(k)];
    Node conv = std::move(old[static_cast<size_t>(folds[static_cast<size_t>(k)].conv)]);
    conv.inputs.resize(3, kNoValue);
    conv.inputs[1] = fold.outputs[0];
    conv.inputs[2] = fold.outputs[1];
    conv.outputs[0] = old[id].outputs[0];
    nodes.push_back(std::move(fold));
    nodes.push_back(std::move(conv));
  }
  g.replace_nodes(std::move(nodes));
  infer_shapes(g);
  return folds.size();
}

}  // namespace footprint::graph
