#include "depthwise_conv.hpp"

#include <algorithm>
#include <array>

#include "dnnl_util.hpp"
#include "kernel_util.hpp"

namespace footprint::runtime::kernels {
namespace {

struct Geometry {
  int64_t c = 0, h = 0, w = 0, oh = 0, ow = 0, kh = 0, kw = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
};

// Element i of an ints attribute, without building a vector (this runs on every step).
int64_t attr_at(const graph::KernelContext& ctx, std::string_view name, size_t i,
                int64_t fallback) {
  const onnx::AttributeProto* a = ctx.attribute(name);
  if (a == nullptr) return fallback;
  int64_t out = fallback;
  size_t k = 0;
  a->ints.for_each([&](uint64_t raw) {
    if (k++ == i) out = static_cast<int64_t>(raw);
  });
  return out;
}

Geometry geometry_of(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const graph::TensorRef& wt = ctx.input(1);
  const graph::TensorRef& y = ctx.output(0);
  Geometry g;
  g.c = x.dim(1);
  g.h = x.dim(2);
  g.w = x.dim(3);
  g.oh = y.dim(2);
  g.ow = y.dim(3);
  g.kh = wt.dim(2);
  g.kw = wt.dim(3);
  g.sh = attr_at(ctx, "strides", 0, 1);
  g.sw = attr_at(ctx, "strides", 1, 1);
  g.dh = attr_at(ctx, "dilations", 0, 1);
  g.dw = attr_at(ctx, "dilations", 1, 1);
  const std::string_view auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t th = std::max<int64_t>(0, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.h);
    const int64_t tw = std::max<int64_t>(0, (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.w);
    g.ph = auto_pad == "SAME_UPPER" ? th / 2 : th - th / 2;
    g.pw = auto_pad == "SAME_UPPER" ? tw / 2 : tw - tw / 2;
  } else if (auto_pad != "VALID") {
    g.ph = attr_at(ctx, "pads", 0, 0);
    g.pw = attr_at(ctx, "pads", 1, 0);
  }
  return g;
}

// The output columns [lo, hi) whose input column for tap `k` lies inside the row.
std::pair<int64_t, int64_t> valid_columns(const Geometry& g, int64_t k) {
  const int64_t off = k * g.dw - g.pw;  // iw = ow * sw + off
  int64_t lo = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
  int64_t hi = g.w - 1 - off < 0 ? 0 : (g.w - 1 - off) / g.sw + 1;
  lo = std::min(lo, g.ow);
  hi = std::min(hi, g.ow);
  return {lo, std::max(lo, hi)};
}

void plane(const Geometry& g, const float* x, const float* w, float bias, float* y) {
  for (int64_t oh = 0; oh < g.oh; ++oh) {
    float* row = y + oh * g.ow;
    std::fill(row, row + g.ow, bias);
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t ih = oh * g.sh - g.ph + i * g.dh;
      if (ih < 0 || ih >= g.h) continue;
      const float* in = x + ih * g.w;
      for (int64_t k = 0; k < g.kw; ++k) {
        const float wk = w[i * g.kw + k];
        const auto [lo, hi] = valid_columns(g, k);
        const int64_t off = k * g.dw - g.pw;
        if (g.sw == 1) {
          const float* src = in + off;
          for (int64_t ow = lo; ow < hi; ++ow) row[ow] += wk * src[ow];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) row[ow] += wk * in[ow * g.sw + off];
        }
      }
    }
  }
}

}  // namespace

bool is_depthwise_2d(const graph::Node& n, std::span<const int64_t> x, std::span<const int64_t> w,
                     DType dtype) {
  if (dtype != DType::float32 || x.size() != 4 || w.size() != 4) return false;
  const int64_t group = node_int(n, "group", 1);
  return group > 1 && group == x[1] && w[0] == group && w[1] == 1;
}

void depthwise_conv_2d(graph::KernelContext& ctx) {
  const Geometry g = geometry_of(ctx);
  const graph::TensorRef& x = ctx.input(0);
  const auto* xs = x.as<const float>();
  const auto* ws = ctx.input(1).as<const float>();
  const float* bias = ctx.has_input(2) ? ctx.input(2).as<const float>() : nullptr;
  float* ys = ctx.output(0).as<float>();
  const auto planes = static_cast<size_t>(x.dim(0) * g.c);
  parallel_for(
      ctx.threads(), planes,
      [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p) {
          const auto c = static_cast<int64_t>(p) % g.c;
          plane(g, xs + static_cast<int64_t>(p) * g.h * g.w, ws + c * g.kh * g.kw,
                bias != nullptr ? bias[c] : 0.0f, ys + static_cast<int64_t>(p) * g.oh * g.ow);
        }
      },
      1);
}

}  // namespace footprint::runtime::kernels
