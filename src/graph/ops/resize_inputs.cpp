#include "footprint/graph/ops/resize_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "footprint/core/error.hpp"
#include "footprint/graph/node_attributes.hpp"

namespace footprint::graph::ops {
namespace {

template <class E>
E parse_enum(const Node& n, int32_t node_id, std::string_view attr, std::string_view fallback,
             std::initializer_list<std::pair<std::string_view, E>> names) {
  const std::string_view v = attr_string(n, attr, fallback);
  for (const auto& [name, e] : names) {
    if (name == v) return e;
  }
  throw Error("node " + n.label(node_id) + ": " + std::string(attr) + " '" + std::string(v) +
              "' is not supported");
}

// Upsample and Resize-10: asymmetric coordinates, nearest rounds down; neither is an attribute.
void read_coordinates(const Node& n, int32_t node_id, bool legacy, ResizeInputs& r) {
  using C = CoordinateTransform;
  if (legacy) {
    r.coordinates = C::asymmetric;
    r.nearest = NearestMode::floor;
    return;
  }
  r.coordinates = parse_enum<C>(n, node_id, "coordinate_transformation_mode", "half_pixel",
                                {{"half_pixel", C::half_pixel},
                                 {"half_pixel_symmetric", C::half_pixel_symmetric},
                                 {"pytorch_half_pixel", C::pytorch_half_pixel},
                                 {"align_corners", C::align_corners},
                                 {"asymmetric", C::asymmetric},
                                 {"tf_half_pixel_for_nn", C::tf_half_pixel_for_nn},
                                 {"tf_crop_and_resize", C::tf_crop_and_resize}});
  r.nearest = parse_enum<NearestMode>(n, node_id, "nearest_mode", "round_prefer_floor",
                                      {{"round_prefer_floor", NearestMode::round_prefer_floor},
                                       {"round_prefer_ceil", NearestMode::round_prefer_ceil},
                                       {"floor", NearestMode::floor},
                                       {"ceil", NearestMode::ceil}});
}

}  // namespace

ResizeInputs ResizeInputs::decode(const Node& n, int32_t node_id, int64_t opset, ResizeOp op) {
  ResizeInputs r;
  const bool legacy = op == ResizeOp::upsample || opset < 11;
  if (!legacy) {
    r.roi_input = 1;
    r.scales_input = 2;
    r.sizes_input = 3;
  } else if (op == ResizeOp::upsample && (n.inputs.size() < 2 || n.inputs[1] == kNoValue)) {
    r.scales_attribute = true;
    r.attribute_scales = attr_floats(n, "scales").value_or(std::vector<float>{});
  } else {
    r.scales_input = 1;
  }
  r.mode = parse_enum<Interpolation>(n, node_id, "mode", "nearest",
                                     {{"nearest", Interpolation::nearest},
                                      {"linear", Interpolation::linear},
                                      {"bilinear", Interpolation::linear},
                                      {"cubic", Interpolation::cubic}});
  read_coordinates(n, node_id, legacy, r);
  r.cubic_coeff_a = attr_float(n, "cubic_coeff_a", -0.75F);
  r.exclude_outside = attr_int(n, "exclude_outside", 0) != 0;
  r.extrapolation_value = attr_float(n, "extrapolation_value", 0.0F);
  r.antialias = attr_int(n, "antialias", 0) != 0;
  r.axes = attr_ints(n, "axes").value_or(std::vector<int64_t>{});
  r.policy = parse_enum<AspectRatioPolicy>(n, node_id, "keep_aspect_ratio_policy", "stretch",
                                           {{"stretch", AspectRatioPolicy::stretch},
                                            {"not_larger", AspectRatioPolicy::not_larger},
                                            {"not_smaller", AspectRatioPolicy::not_smaller}});
  return r;
}

double kept_aspect_scale(AspectRatioPolicy policy, std::span<const int64_t> sizes,
                         std::span<const int64_t> in) {
  const bool smallest = policy == AspectRatioPolicy::not_larger;
  double common = smallest ? std::numeric_limits<double>::max() : 0.0;
  for (size_t i = 0; i < sizes.size() && i < in.size(); ++i) {
    const double r = static_cast<double>(sizes[i]) / static_cast<double>(in[i]);
    common = smallest ? std::min(common, r) : std::max(common, r);
  }
  return common;
}

int64_t kept_aspect_extent(double scale, int64_t in) {
  return static_cast<int64_t>(std::floor(scale * static_cast<double>(in) + 0.5));
}

}  // namespace footprint::graph::ops
