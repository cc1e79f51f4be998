#pragma once
// The sliding window of Conv, ConvTranspose and the pools, decoded from a node's attributes once.
//
// Shape inference, the workspace hooks and the kernels all take this struct, so ONNX's window
// rules (per-axis defaults, which pads auto_pad implies and how SAME splits them) are written in
// one place: a kernel cannot pad differently from the extent inference predicted.
//
//   const graph::ops::ConvWindow w = graph::ops::ConvWindow::decode(node, node_id, x_rank - 2);
//   const graph::ops::Pads p = w.forward_pads(0, kernel_h, in_h, out_h);  // p.begin, p.end
//
// Errors name the node (node_id -1 where the caller has none: a workspace hook).
#include <cstdint>
#include <optional>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph::ops {

enum class AutoPad : uint8_t { notset, same_upper, same_lower, valid };

struct Pads {
  int64_t begin = 0;
  int64_t end = 0;
};

struct ConvWindow {
  size_t spatial = 0;                 // spatial dims (the input's rank minus 2)
  std::vector<int64_t> kernel_shape;  // empty when not given (a Conv's weights give it)
  std::vector<int64_t> strides;       // one per spatial dim, positive
  std::vector<int64_t> dilations;     // one per spatial dim, positive
  std::vector<int64_t> pads;          // begins then ends; zeros when not given
  AutoPad auto_pad = AutoPad::notset;
  int64_t group = 1;
  std::vector<int64_t> output_padding;               // ConvTranspose; zeros when not given
  std::optional<std::vector<int64_t>> output_shape;  // ConvTranspose

  // Reads and validates every window attribute of `n` for `spatial` spatial dims.
  static ConvWindow decode(const Node& n, int32_t node_id, size_t spatial);

  bool same() const { return auto_pad == AutoPad::same_upper || auto_pad == AutoPad::same_lower; }
  // The extent a kernel of extent `k` covers on axis i.
  int64_t effective_kernel(size_t i, int64_t k) const { return (k - 1) * dilations[i] + 1; }
  // The pads ONNX applies on axis i of a forward window with concrete extents: the explicit
  // ones, none for VALID, or for SAME the total that gives `out` windows, split with the odd one
  // at the end for SAME_UPPER and at the beginning for SAME_LOWER.
  Pads forward_pads(size_t i, int64_t k, int64_t in, int64_t out) const;
  // The begin pad on axis i of a transposed window: with output_shape or SAME the total follows
  // from the extents and is split as ONNX's reference does; otherwise the explicit pad.
  int64_t transposed_pad_begin(size_t i, int64_t k, int64_t in, int64_t out) const;
};

// A pooling window: a ConvWindow (kernel_shape required) and the pool-only attributes.
struct PoolWindow {
  ConvWindow window;
  bool ceil_mode = false;
  bool count_include_pad = false;  // AveragePool
  bool column_major = false;       // MaxPool's storage_order 1: indices count columns first

  static PoolWindow decode(const Node& n, int32_t node_id, size_t spatial);
};

}  // namespace footprint::graph::ops
