#pragma once
// LayerNorm, GELU, Linear and ShuffleNet's channel shuffle written the ways exporters write them
// below the opsets that have them as one op (or where no op has them): the inputs graph::fuse's
// patterns must recognise (and, with one intermediate read elsewhere, must leave alone).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "footprint/core/float16.hpp"
#include "footprint/graph/builder.hpp"

namespace footprint::testing {

inline graph::SharedValue seeded_floats(std::vector<int64_t> dims, uint32_t seed, float scale) {
  auto v = graph::HostValue::make(DType::float32, std::move(dims));
  uint32_t s = seed;
  for (float& e : v->span<float>()) {
    s = s * 1664525U + 1013904223U;
    e = (static_cast<float>(s >> 8) / 16777216.0F - 0.5F) * scale;
  }
  return v;
}

// A float32 constant as a graph of dtype t (float32, float16 or bfloat16) stores it, rounded to
// nearest even.
inline graph::SharedValue stored_as(const graph::SharedValue& f, DType t) {
  if (t == DType::float32) return f;
  auto v = graph::HostValue::make(t, f->dims());
  const auto from = f->span<const float>();
  const auto to = v->span<uint16_t>();
  for (size_t i = 0; i < from.size(); ++i) {
    to[i] = t == DType::float16 ? half_from_float(from[i]) : bfloat16_from_float(from[i]);
  }
  return v;
}

inline graph::Var float_scalar(graph::GraphBuilder& b, double x, DType t = DType::float32) {
  auto v = graph::HostValue::make(DType::float32, {});
  v->span<float>()[0] = static_cast<float>(x);
  return b.constant(stored_as(v, t));
}

// ReduceMean over the last axis, kept: axes as an attribute before opset 18, an input from it on.
inline graph::Var mean_last(graph::GraphBuilder& b, const graph::Var& x, int64_t opset) {
  using graph::Attr;
  if (opset < 18) return b.op1("ReduceMean", {x}, {Attr::of("axes", std::vector<int64_t>{-1})});
  auto axes = graph::HostValue::make(DType::int64, {1});
  axes->span<int64_t>()[0] = -1;
  return b.op1("ReduceMean", {x, b.constant(axes)});
}

struct LayerNormForm {
  int64_t opset = 14;
  bool pow = true;    // Pow(d, 2), else Mul(d, d)
  bool shift = true;  // the Add of B after the Mul of the scale
  uint32_t seed = 1;
};

// (x - mean) / sqrt(mean((x - mean)^2) + eps) * scale [+ shift] over x's last axis of extent d.
inline graph::Var decomposed_layer_norm(graph::GraphBuilder& b, const graph::Var& x, int64_t d,
                                        LayerNormForm f) {
  const graph::Var dev = b.sub(x, mean_last(b, x, f.opset));
  const graph::Var sq = f.pow ? b.op1("Pow", {dev, float_scalar(b, 2)}) : b.mul(dev, dev);
  const graph::Var var = b.add(mean_last(b, sq, f.opset), float_scalar(b, 1e-5));
  const graph::Var normed = b.div(dev, b.op1("Sqrt", {var}));
  auto scale = seeded_floats({d}, f.seed, 0.5F);
  for (float& s : scale->span<float>()) s += 1.0F;
  const graph::Var y = b.mul(normed, b.constant(scale));
  return f.shift ? b.add(y, b.constant(seeded_floats({d}, f.seed + 1, 0.5F))) : y;
}

// x * (1 + erf(x / sqrt 2)) * 0.5 with the product in one of the exporters' three orders:
// 0: (x c1) 0.5, 1: (x 0.5) c1, 2: (c1 0.5) x; `times_inverse` scales by 1/sqrt(2) instead.
inline graph::Var erf_gelu(graph::GraphBuilder& b, const graph::Var& x, int order,
                           bool times_inverse = false) {
  const graph::Var scaled = times_inverse ? b.mul(x, float_scalar(b, 1 / std::numbers::sqrt2))
                                          : b.div(x, float_scalar(b, std::numbers::sqrt2));
  const graph::Var c1 = b.add(b.op1("Erf", {scaled}), float_scalar(b, 1));
  if (order == 0) return b.mul(b.mul(x, c1), float_scalar(b, 0.5));
  if (order == 1) return b.mul(b.mul(x, float_scalar(b, 0.5)), c1);
  return b.mul(b.mul(c1, float_scalar(b, 0.5)), x);
}

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the cube as Pow(x, 3) or (x x) x.
inline graph::Var tanh_gelu(graph::GraphBuilder& b, const graph::Var& x, bool pow) {
  const graph::Var cube = pow ? b.op1("Pow", {x, float_scalar(b, 3)}) : b.mul(b.mul(x, x), x);
  const graph::Var u = b.add(x, b.mul(float_scalar(b, 0.044715), cube));
  const graph::Var t = b.op1("Tanh", {b.mul(float_scalar(b, std::sqrt(2 / std::numbers::pi)), u)});
  const graph::Var c1 = b.add(float_scalar(b, 1), t);
  return b.mul(b.mul(float_scalar(b, 0.5), x), c1);
}

// x [.., k] @ W [k, n] + bias [n] (or bias + product when `bias_first`).
inline graph::Var linear(graph::GraphBuilder& b, const graph::Var& x, int64_t k, int64_t n,
                         uint32_t seed, bool bias_first = false) {
  const graph::Var y = b.matmul(x, b.constant(seeded_floats({k, n}, seed, 0.4F)));
  const graph::Var bias = b.constant(seeded_floats({n}, seed + 1, 0.5F));
  return bias_first ? b.add(bias, y) : b.add(y, bias);
}

}  // namespace footprint::testing

namespace footprint::testing {

// How an exporter writes the steps between the two products of attention.
struct AttentionForm {
  enum class Scale { none, div, mul } scale = Scale::div;
  enum class Mask { none, add, where } mask = Mask::add;
  bool dropout = false;          // an inference Dropout (ratio 0, training on) after the Softmax
  double divisor = 8;            // the scores are divided by it, or multiplied by its inverse
  DType dtype = DType::float32;  // of the scale's and the fill's constants (the graph's floats)
};

// softmax(q kt [/ or *] c, masked) v over the last axis. `mask` is an additive float mask or a
// boolean keep condition, broadcast to the scores; the fill is -1e4 as GPT-2's exports write.
inline graph::Var decomposed_attention(graph::GraphBuilder& b, const graph::Var& q,
                                       const graph::Var& kt, const graph::Var& v,
                                       const graph::Var& mask, AttentionForm f) {
  using Scale = AttentionForm::Scale;
  using Mask = AttentionForm::Mask;
  graph::Var s = b.matmul(q, kt);
  if (f.scale == Scale::div) s = b.div(s, float_scalar(b, f.divisor, f.dtype));
  if (f.scale == Scale::mul) s = b.mul(float_scalar(b, 1 / f.divisor, f.dtype), s);
  if (f.mask == Mask::add) s = b.add(s, mask);
  if (f.mask == Mask::where) s = b.op1("Where", {mask, s, float_scalar(b, -1e4, f.dtype)});
  graph::Var p = b.op1("Softmax", {s}, {graph::Attr::of("axis", int64_t{-1})});
  if (f.dropout) {
    auto on = graph::HostValue::make(DType::boolean, {});
    on->span<bool>()[0] = true;
    p = b.op("Dropout", {p, float_scalar(b, 0), b.constant(on)}, {}, 2)[0];
  }
  return b.matmul(p, v);
}

inline graph::Var int64s(graph::GraphBuilder& b, const std::vector<int64_t>& values) {
  auto v = graph::HostValue::make(DType::int64, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), v->span<int64_t>().begin());
  return b.constant(v);
}

// ShuffleNet's channel shuffle of x [N, C, H, W]: Reshape to [N, groups, C / groups, H, W] (0
// copies N), Transpose by `perm` ({0, 2, 1, 3, 4} swaps the group axes), Reshape back.
inline graph::Var channel_shuffle(graph::GraphBuilder& b, const graph::Var& x, int64_t groups,
                                  std::vector<int64_t> perm = {0, 2, 1, 3, 4}) {
  const auto& d = x.shape().dims;
  const int64_t c = *d[1].value();
  const int64_t h = *d[2].value();
  const int64_t w = *d[3].value();
  const graph::Var split = b.reshape(x, int64s(b, {0, groups, c / groups, h, w}));
  const graph::Var swapped =
      b.op1("Transpose", {split}, {graph::Attr::of("perm", std::move(perm))});
  return b.reshape(swapped, int64s(b, {0, c, h, w}));
}

// HardSwish as Paddle's exporter writes it: x * Clip(x + 3, 0, 6) / 6, the Clip's bounds as
// attributes below opset 11 and inputs from it; `divide_first` divides the Clip by 6 before the
// product, `reciprocal` multiplies by 1/6 instead of dividing.
struct HardSwishForm {
  int64_t opset = 13;
  bool divide_first = false;
  bool reciprocal = false;
  double shift = 3;  // anything else is not a HardSwish
};

inline graph::Var decomposed_hard_swish(graph::GraphBuilder& b, const graph::Var& x,
                                        HardSwishForm f) {
  using graph::Attr;
  const graph::Var shifted = b.add(x, float_scalar(b, f.shift));
  const graph::Var clipped =
      f.opset < 11 ? b.op1("Clip", {shifted}, {Attr::of("min", 0.0F), Attr::of("max", 6.0F)})
                   : b.clip(shifted, float_scalar(b, 0), float_scalar(b, 6));
  auto sixth = [&](const graph::Var& v) {
    return f.reciprocal ? b.mul(v, float_scalar(b, 1.0 / 6.0)) : b.div(v, float_scalar(b, 6));
  };
  return f.divide_first ? b.mul(x, sixth(clipped)) : sixth(b.mul(x, clipped));
}

}  // namespace footprint::testing
