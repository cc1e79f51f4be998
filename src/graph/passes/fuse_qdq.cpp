// QDQ models (onnxruntime's quantize_static, QuantFormat.QDQ; PyTorch's and TensorFlow's
// quantized exports) store a quantized convolution or product as the float op between
// DequantizeLinear nodes on its inputs and a QuantizeLinear on its output. Run as written, the
// weights are dequantized into float copies kept for every run and the activations pass through
// float tensors four times their size. The group is one QLinearConv, QLinearMatMul or (a Gemm)
// com.microsoft QGemm: int8 weights, int8 activations, int32 accumulation, as onnxruntime runs the
// same groups. Ops that only move elements (Transpose, Reshape, MaxPool, ...) between a
// DequantizeLinear and a QuantizeLinear of the same scale run on the int8 tensor instead.
//
// A group is rewritten only where that is the same computation: per-tensor activations, weights
// per tensor or per output channel, a bias quantized to int32 at the scale x_scale * w_scale with
// zero point 0 (how every quantizer writes it, checked element by element), the float result read
// by the QuantizeLinear alone, and the row's kernel running the dtypes (makes_runnable).
#include "fuse_qdq.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "footprint/graph/inference.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "footprint/graph/op_registry.hpp"
#include "fuse_patterns.hpp"

namespace footprint::graph {
namespace {

// Per-channel scales of the widest layers quantizers emit (4096 output channels), read to check
// the bias scale; larger ones are left as written.
constexpr size_t kMaxChannels = 4096;

bool is_onnx(const Node& n, std::string_view op) {
  return n.domain.empty() && n.op_type == op && n.epilogues.empty() && n.subgraphs.empty();
}

bool is_int8(DType t) {
  return t == DType::int8 || t == DType::uint8;
}

// A DequantizeLinear producing `v`: (quantized, scale, zero point) with the zero point present.
struct Dequantize {
  NodeId id = -1;
  ValueId q = kNoValue, scale = kNoValue, zero = kNoValue;
};

std::optional<Dequantize> dequantize_of(const Graph& g, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const NodeId id = g.value(v).producer;
  if (id < 0) return std::nullopt;
  const Node& n = g.node(id);
  if (!is_onnx(n, "DequantizeLinear") || n.inputs.size() != 3 || n.inputs[2] == kNoValue ||
      attr_int(n, "block_size", 0) != 0) {
    return std::nullopt;
  }
  return Dequantize{id, n.inputs[0], n.inputs[1], n.inputs[2]};
}

// The value's element count; 0 where an extent is not known.
size_t element_count(const Graph& g, ValueId v) {
  return static_cast<size_t>(g.value(v).shape.numel().value_or(0));
}

// The elements of a constant as doubles, when it is a small constant; nullopt otherwise.
std::optional<std::vector<double>> constant_reals(const Graph& g, ValueId v) {
  const onnx::TensorProto* t = g.value(v).constant ? g.constant_tensor(v) : nullptr;
  if (t == nullptr) return std::nullopt;
  const std::optional<KnownValue> k = known_value_of(*t, kMaxChannels, kMaxChannels);
  if (!k || !k->is_concrete()) return std::nullopt;
  std::vector<double> out;
  for (size_t i = 0; i < k->numel(); ++i) out.push_back(*k->real(i));
  return out;
}

bool is_constant(const Graph& g, ValueId v) {
  return v != kNoValue && g.value(v).constant;
}

// Activations quantized per tensor: an int8/uint8 tensor, a float32 scalar scale and a zero point
// of the tensor's dtype.
bool per_tensor(const Graph& g, const Dequantize& d) {
  return is_int8(g.value(d.q).dtype) && g.value(d.zero).dtype == g.value(d.q).dtype &&
         g.value(d.scale).dtype == DType::float32 && element_count(g, d.scale) == 1 &&
         element_count(g, d.zero) == 1;
}

// Constant weights quantized per tensor or along `axis` (of `channels` extents): what a QLinear
// row's weight scale and zero point mean.
bool weights(const Graph& g, const Dequantize& d, int64_t axis, size_t channels) {
  if (!is_constant(g, d.q) || !is_constant(g, d.scale) || !is_constant(g, d.zero) ||
      !is_int8(g.value(d.q).dtype) || g.value(d.zero).dtype != g.value(d.q).dtype ||
      g.value(d.scale).dtype != DType::float32) {
    return false;
  }
  const size_t n = element_count(g, d.scale);
  if (n == 1 && element_count(g, d.zero) == 1) return true;
  const Shape& ws = g.value(d.q).shape;
  const auto rank = static_cast<int64_t>(ws.rank());
  int64_t dq_axis = attr_int(g.node(d.id), "axis", 1);
  if (dq_axis < 0) dq_axis += rank;
  return n == channels && element_count(g, d.zero) == channels && dq_axis == axis &&
         g.value(d.scale).shape.rank() == 1;
}

// The int32 bias at scale x_scale * w_scale (per channel) and zero point 0, as QLinearConv reads B.
bool bias_at_product_scale(const Graph& g, const Dequantize& b, const Dequantize& x,
                           const Dequantize& w) {
  if (!is_constant(g, b.q) || g.value(b.q).dtype != DType::int32) return false;
  const auto bs = constant_reals(g, b.scale);
  const auto bz = constant_reals(g, b.zero);
  const auto xs = constant_reals(g, x.scale);
  const auto ws = constant_reals(g, w.scale);
  if (!bs || !bz || !xs || !ws || xs->size() != 1 || bz->empty()) return false;
  for (const double z : *bz) {
    if (z != 0) return false;
  }
  const size_t channels = element_count(g, b.q);
  if (bs->size() != channels && bs->size() != 1) return false;
  for (size_t c = 0; c < channels; ++c) {
    const auto w_scale = static_cast<float>((*ws)[ws->size() == 1 ? 0 : c]);
    const float expected = static_cast<float>((*xs)[0]) * w_scale;
    if (static_cast<float>((*bs)[bs->size() == 1 ? 0 : c]) != expected) return false;
  }
  return true;
}

// The QuantizeLinear that alone reads the float result `y`: (its node, scale, zero point).
std::optional<std::array<ValueId, 3>> requantized(const Graph& g, ValueId y, NodeId& q) {
  const Value& v = g.value(y);
  if (v.is_graph_output || v.consumers.size() != 1) return std::nullopt;
  q = v.consumers[0];
  const Node& n = g.node(q);
  if (!is_onnx(n, "QuantizeLinear") || n.inputs.size() != 3 || n.inputs[0] != y ||
      n.inputs[2] == kNoValue || n.outputs.size() != 1) {
    return std::nullopt;
  }
  const ValueId s = n.inputs[1];
  const ValueId z = n.inputs[2];
  if (g.value(s).dtype != DType::float32 || element_count(g, s) != 1 || element_count(g, z) != 1 ||
      !is_int8(g.value(z).dtype)) {
    return std::nullopt;
  }
  return std::array<ValueId, 3>{n.outputs[0], s, z};
}

// The dequantize nodes the group takes with it: those whose output the float op alone reads.
void take_alone_read(const Graph& g, const Dequantize& d, NodeId reader, std::vector<NodeId>& out) {
  const Value& v = g.value(g.node(d.id).outputs[0]);
  if (!v.is_graph_output && v.consumers.size() == 1 && v.consumers[0] == reader) {
    out.push_back(d.id);
  }
}

// The group of float node `id` (reading `x` and `w` dequantized) and the QuantizeLinear that
// alone reads its output, as one `op` reading (x, its scale and zero point, w, ..., y's scale and
// zero point); the dequantize nodes only it reads go with it. nullopt without that QuantizeLinear.
std::optional<Rewrite> group(const Graph& g, NodeId id, std::string_view op, const Dequantize& x,
                             const Dequantize& w) {
  NodeId q = -1;
  const auto y = requantized(g, g.node(id).outputs[0], q);
  if (!y) return std::nullopt;
  Rewrite r;
  take_alone_read(g, x, id, r.nodes);
  take_alone_read(g, w, id, r.nodes);
  r.nodes.push_back(id);
  r.nodes.push_back(q);
  r.op = op;
  r.inputs = {x.q, x.scale, x.zero, w.q, w.scale, w.zero, (*y)[1], (*y)[2]};
  r.output = (*y)[0];
  return r;
}

std::optional<Rewrite> qdq_conv(const Graph& g, NodeId id) {
  const Node& conv = g.node(id);
  if (!is_onnx(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1) {
    return std::nullopt;
  }
  const auto x = dequantize_of(g, conv.inputs[0]);
  const auto w = dequantize_of(g, conv.inputs[1]);
  if (!x || !w || !per_tensor(g, *x)) return std::nullopt;
  const Shape& ws = g.value(w->q).shape;
  if (!ws.ranked || ws.rank() < 3 || !ws.dims[0].value()) return std::nullopt;
  const auto m = static_cast<size_t>(*ws.dims[0].value());
  if (!weights(g, *w, 0, m)) return std::nullopt;
  std::optional<Dequantize> b;
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue) {
    b = dequantize_of(g, conv.inputs[2]);
    if (!b || !bias_at_product_scale(g, *b, *x, *w)) return std::nullopt;
  }
  std::optional<Rewrite> r = group(g, id, "QLinearConv", *x, *w);
  if (r && b) {
    take_alone_read(g, *b, id, r->nodes);
    r->inputs.push_back(b->q);
  }
  if (r) r->attributes.assign(conv.attributes.begin(), conv.attributes.end());
  return r;
}

std::optional<Rewrite> qdq_matmul(const Graph& g, NodeId id) {
  const Node& mm = g.node(id);
  if (!is_onnx(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1) {
    return std::nullopt;
  }
  const auto a = dequantize_of(g, mm.inputs[0]);
  const auto b = dequantize_of(g, mm.inputs[1]);
  if (!a || !b || !per_tensor(g, *a)) return std::nullopt;
  const Shape& bs = g.value(b->q).shape;
  if (!bs.ranked || bs.rank() != 2 || !bs.dims[1].value()) return std::nullopt;
  if (!weights(g, *b, 1, static_cast<size_t>(*bs.dims[1].value()))) return std::nullopt;
  return group(g, id, "QLinearMatMul", *a, *b);
}

// A Gemm of dequantized A, constant weights and an int32 bias at the product scale, requantized:
// onnxruntime's QGemm, which adds C to the sums before scaling them. That is the float Gemm's
// alpha A B + beta C only where alpha and beta are 1 (the quantizer's Gemms).
std::optional<Rewrite> qdq_gemm(const Graph& g, NodeId id) {
  const Node& gemm = g.node(id);
  if (!is_onnx(gemm, "Gemm") || gemm.inputs.size() < 2 || gemm.outputs.size() != 1 ||
      attr_float(gemm, "alpha", 1.0F) != 1.0F || attr_float(gemm, "beta", 1.0F) != 1.0F) {
    return std::nullopt;
  }
  const auto a = dequantize_of(g, gemm.inputs[0]);
  const auto b = dequantize_of(g, gemm.inputs[1]);
  if (!a || !b || !per_tensor(g, *a)) return std::nullopt;
  // The weights per output column: B [K, N] along axis 1, or transposed [N, K] along axis 0.
  const bool trans_b = attr_int(gemm, "transB", 0) != 0;
  const Shape& bs = g.value(b->q).shape;
  const size_t n_axis = trans_b ? 0 : 1;
  if (!bs.ranked || bs.rank() != 2 || !bs.dims[n_axis].value()) return std::nullopt;
  const auto n = static_cast<size_t>(*bs.dims[n_axis].value());
  if (!weights(g, *b, static_cast<int64_t>(n_axis), n)) return std::nullopt;
  std::optional<Dequantize> c;
  if (gemm.inputs.size() > 2 && gemm.inputs[2] != kNoValue) {
    c = dequantize_of(g, gemm.inputs[2]);
    if (!c || element_count(g, c->q) != n || g.value(c->q).shape.rank() != 1 ||
        !bias_at_product_scale(g, *c, *a, *b)) {
      return std::nullopt;
    }
  }
  std::optional<Rewrite> r = group(g, id, "QGemm", *a, *b);
  if (!r) return r;
  r->domain = "com.microsoft";
  // QGemm's inputs: A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp.
  if (c) take_alone_read(g, *c, id, r->nodes);
  r->inputs.insert(r->inputs.begin() + 6, c ? c->q : kNoValue);
  for (const auto& at : gemm.attributes) {
    if (at.name == "transA" || at.name == "transB") r->attributes.push_back(at);
  }
  return r;
}

// Ops that only move, select or compare their input's elements: between a DequantizeLinear and
// a QuantizeLinear of the same scale and zero point they give the bytes they would give run on
// the quantized tensor itself (quantizing a dequantized integer at its own scale gives it back;
// MaxPool's max commutes with dequantizing, whose scale is positive).
constexpr std::string_view kMovers[] = {"Reshape",  "Transpose",    "Squeeze",      "Unsqueeze",
                                        "Flatten",  "Slice",        "Gather",       "MaxPool",
                                        "Identity", "DepthToSpace", "SpaceToDepth", "Concat"};

bool is_mover(const Node& n) {
  for (const std::string_view op : kMovers) {
    if (is_onnx(n, op)) return true;
  }
  return false;
}

// Whether two per-tensor (scale, zero point) pairs are the same constants.
bool same_quantization(const Graph& g, ValueId scale_a, ValueId zero_a, ValueId scale_b,
                       ValueId zero_b) {
  if (g.value(zero_a).dtype != g.value(zero_b).dtype) return false;
  const auto sa = constant_reals(g, scale_a);
  const auto sb = constant_reals(g, scale_b);
  const auto za = constant_reals(g, zero_a);
  const auto zb = constant_reals(g, zero_b);
  return sa && sb && za && zb && sa->size() == 1 && sb->size() == 1 && za->size() == 1 &&
         zb->size() == 1 && (*sa)[0] == (*sb)[0] && (*za)[0] == (*zb)[0];
}

// DequantizeLinear -> mover -> QuantizeLinear at the same scale and zero point, as the mover run
// on the quantized tensor (onnxruntime drops the same pairs). The data inputs (Concat: every one;
// the others: the first) must all come dequantized at that scale; MaxPool without its indices.
std::optional<Rewrite> qdq_mover(const Graph& g, NodeId id) {
  const Node& q = g.node(id);
  if (!is_onnx(q, "QuantizeLinear") || q.inputs.size() != 3 || q.inputs[2] == kNoValue ||
      q.outputs.size() != 1) {
    return std::nullopt;
  }
  const NodeId mover = g.value(q.inputs[0]).producer;
  if (mover < 0) return std::nullopt;
  const Node& m = g.node(mover);
  if (!is_mover(m) || m.outputs.size() != 1) return std::nullopt;
  NodeId q_again = -1;
  const auto y = requantized(g, m.outputs[0], q_again);
  if (!y || q_again != id) return std::nullopt;
  const size_t data = m.op_type == "Concat" ? m.inputs.size() : 1;
  Rewrite r;
  r.op = m.op_type;
  r.inputs = m.inputs;
  for (size_t i = 0; i < data; ++i) {
    const auto d = dequantize_of(g, m.inputs[i]);
    if (!d || !per_tensor(g, *d) || !same_quantization(g, d->scale, d->zero, (*y)[1], (*y)[2])) {
      return std::nullopt;
    }
    r.inputs[i] = d->q;
    // A Concat reading one dequantized value twice takes its node once.
    if (std::find(r.nodes.begin(), r.nodes.end(), d->id) == r.nodes.end()) {
      take_alone_read(g, *d, mover, r.nodes);
    }
  }
  std::sort(r.nodes.begin(), r.nodes.end());
  r.nodes.push_back(mover);
  r.nodes.push_back(id);
  r.output = (*y)[0];
  r.attributes.assign(m.attributes.begin(), m.attributes.end());
  return r;
}

}  // namespace

size_t fuse_qdq(Graph& g, std::vector<std::string>& lines) {
  const Finder finders[] = {qdq_mover, qdq_conv, qdq_matmul, qdq_gemm};
  return rewrite(g, finders, lines);
}

}  // namespace footprint::graph
