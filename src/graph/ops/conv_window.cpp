#include "footprint/graph/ops/conv_window.hpp"

#include <algorithm>
#include <string>
#include <string_view>

#include "footprint/core/error.hpp"
#include "footprint/graph/node_attributes.hpp"

namespace footprint::graph::ops {
namespace {

[[noreturn]] void fail(const Node& n, int32_t node_id, const std::string& what) {
  throw Error("node " + n.label(node_id) + ": " + what);
}

// Attribute `name` with `count` entries, or `fallback` repeated when absent or empty.
std::vector<int64_t> per_axis(const Node& n, int32_t node_id, std::string_view name, size_t count,
                              int64_t fallback) {
  auto v = attr_ints(n, name);
  if (!v || v->empty()) return std::vector<int64_t>(count, fallback);
  if (v->size() != count) {
    fail(n, node_id,
         "attribute '" + std::string(name) + "' has " + std::to_string(v->size()) +
             " entries, expected " + std::to_string(count));
  }
  return *v;
}

AutoPad auto_pad_of(const Node& n, int32_t node_id) {
  const std::string_view v = attr_string(n, "auto_pad", "NOTSET");
  if (v == "NOTSET") return AutoPad::notset;
  if (v == "SAME_UPPER") return AutoPad::same_upper;
  if (v == "SAME_LOWER") return AutoPad::same_lower;
  if (v == "VALID") return AutoPad::valid;
  fail(n, node_id, "auto_pad '" + std::string(v) + "' is not one ONNX defines");
}

void require_positive(const Node& n, int32_t node_id, const std::vector<int64_t>& v,
                      std::string_view what) {
  if (std::any_of(v.begin(), v.end(), [](int64_t e) { return e <= 0; })) {
    fail(n, node_id, std::string(what) + " must be positive");
  }
}

// floor(v / 2), also for a negative v.
int64_t floor_half(int64_t v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

}  // namespace

ConvWindow ConvWindow::decode(const Node& n, int32_t node_id, size_t spatial) {
  ConvWindow w;
  w.spatial = spatial;
  if (auto k = attr_ints(n, "kernel_shape")) {
    if (k->size() != spatial) {
      fail(n, node_id, "kernel_shape does not match the input's spatial rank");
    }
    w.kernel_shape = std::move(*k);
    require_positive(n, node_id, w.kernel_shape, "kernel_shape");
  }
  w.strides = per_axis(n, node_id, "strides", spatial, 1);
  w.dilations = per_axis(n, node_id, "dilations", spatial, 1);
  w.pads = per_axis(n, node_id, "pads", 2 * spatial, 0);
  w.auto_pad = auto_pad_of(n, node_id);
  w.group = attr_int(n, "group", 1);
  w.output_padding = per_axis(n, node_id, "output_padding", spatial, 0);
  w.output_shape = attr_ints(n, "output_shape");
  require_positive(n, node_id, w.strides, "strides");
  require_positive(n, node_id, w.dilations, "dilations");
  if (w.group <= 0) fail(n, node_id, "group must be positive");
  return w;
}

Pads ConvWindow::forward_pads(size_t i, int64_t k, int64_t in, int64_t out) const {
  if (auto_pad == AutoPad::valid) return {};
  if (!same()) return {pads[i], pads[i + spatial]};
  const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + effective_kernel(i, k) - in);
  const int64_t begin = auto_pad == AutoPad::same_upper ? total / 2 : total - total / 2;
  return {begin, total - begin};
}

int64_t ConvWindow::transposed_pad_begin(size_t i, int64_t k, int64_t in, int64_t out) const {
  if (same() || output_shape.has_value()) {
    const int64_t total = strides[i] * (in - 1) + output_padding[i] + effective_kernel(i, k) - out;
    return auto_pad == AutoPad::same_upper ? floor_half(total) : total - floor_half(total);
  }
  return auto_pad == AutoPad::valid ? 0 : pads[i];
}

PoolWindow PoolWindow::decode(const Node& n, int32_t node_id, size_t spatial) {
  PoolWindow p;
  p.window = ConvWindow::decode(n, node_id, spatial);
  if (p.window.kernel_shape.empty()) fail(n, node_id, "attribute 'kernel_shape' is required");
  p.ceil_mode = attr_int(n, "ceil_mode", 0) != 0;
  p.count_include_pad = attr_int(n, "count_include_pad", 0) != 0;
  p.column_major = attr_int(n, "storage_order", 0) != 0;
  return p;
}

}  // namespace footprint::graph::ops
