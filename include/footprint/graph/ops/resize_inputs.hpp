#pragma once
// What a Resize or Upsample node asks for, decoded from its attributes and opset once: which
// input holds roi, scales and sizes, the interpolation and coordinate rules, and how sizes keep
// the aspect ratio. Shape inference and the kernel both take it, so the extent predicted for the
// output is the one the kernel interpolates into.
//
//   const auto r = graph::ops::ResizeInputs::decode(node, node_id, opset, ResizeOp::resize);
//   if (r.sizes_input >= 0 && r.policy != AspectRatioPolicy::stretch) {
//     const double s = graph::ops::kept_aspect_scale(r.policy, sizes, in);  // per resized axis
//     out[d] = graph::ops::kept_aspect_extent(s, in[d]);
//   }
//
// Errors name the node.
#include <cstdint>
#include <span>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph::ops {

enum class ResizeOp : uint8_t { resize, upsample };
enum class Interpolation : uint8_t { nearest, linear, cubic };
enum class CoordinateTransform : uint8_t {
  half_pixel,
  half_pixel_symmetric,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_half_pixel_for_nn,
  tf_crop_and_resize
};
enum class NearestMode : uint8_t { round_prefer_floor, round_prefer_ceil, floor, ceil };
enum class AspectRatioPolicy : uint8_t { stretch, not_larger, not_smaller };

struct ResizeInputs {
  // Which input holds each operand; -1 where the op's version has none.
  int roi_input = -1;
  int scales_input = -1;
  int sizes_input = -1;
  // Upsample-7 gives its scales as this attribute instead (one per dim).
  bool scales_attribute = false;
  std::vector<float> attribute_scales;

  Interpolation mode = Interpolation::nearest;
  CoordinateTransform coordinates = CoordinateTransform::half_pixel;
  NearestMode nearest = NearestMode::round_prefer_floor;
  float cubic_coeff_a = -0.75F;
  bool exclude_outside = false;
  float extrapolation_value = 0.0F;
  bool antialias = false;
  std::vector<int64_t> axes;  // as given (possibly negative); empty: every dim
  AspectRatioPolicy policy = AspectRatioPolicy::stretch;

  static ResizeInputs decode(const Node& n, int32_t node_id, int64_t opset, ResizeOp op);
};

// The one scale a kept aspect ratio applies to every resized axis, from the requested sizes and
// the input's extents on those axes: the smallest ratio (not_larger) or the largest
// (not_smaller). ONNX's Resize-18 rule.
double kept_aspect_scale(AspectRatioPolicy policy, std::span<const int64_t> sizes,
                         std::span<const int64_t> in);
// The output extent of an axis of extent `in` under that scale: rounded to the nearest integer,
// halves up.
int64_t kept_aspect_extent(double scale, int64_t in);

}  // namespace footprint::graph::ops
