// Kernels of the detection ops (graph/ops/detection.cpp sizes them): NonMaxSuppression, whose
// count of kept boxes is known only once it has run (it reports its output's extents), and
// RoiAlign.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/graph/graph.hpp"
#include "parallel_for.hpp"
#include "tensor_reads.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;

// ---- NonMaxSuppression(boxes [B, S, 4], scores [B, C, S], max_output_boxes_per_class,
// iou_threshold, score_threshold) -> selected [n, 3] of (batch, class, box)

struct Corners {
  float x_min, y_min, x_max, y_max;
};

// center_point_box 0: [y1, x1, y2, x2], any two opposite corners; 1: [x_center, y_center, w, h].
Corners corners_of(const float* b, bool center) {
  if (center) {
    const float hw = b[2] / 2;
    const float hh = b[3] / 2;
    return {b[0] - hw, b[1] - hh, b[0] + hw, b[1] + hh};
  }
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2])};
}

// The boxes a class has kept, as columns (so one candidate is tested against all of them in one
// vectorised pass): corners and areas.
struct KeptBoxes {
  float* x_min = nullptr;
  float* y_min = nullptr;
  float* x_max = nullptr;
  float* y_max = nullptr;
  float* area = nullptr;
  size_t count = 0;
};

float area_of(const Corners& c) {
  return (c.x_max - c.x_min) * (c.y_max - c.y_min);
}

// Whether `c` overlaps any kept box by more than `threshold` of their union. Boxes without area
// never suppress one another. Every kept box is tested (no early exit), which vectorises; the
// blocks stop at the first one that suppresses.
bool suppressed_by_any(const KeptBoxes& kept, const Corners& c, float threshold) {
  constexpr size_t kBlock = 256;
  const float area_c = area_of(c);
  if (area_c <= 0) return false;
  for (size_t begin = 0; begin < kept.count; begin += kBlock) {
    const size_t end = std::min(kept.count, begin + kBlock);
    int any = 0;
    for (size_t j = begin; j < end; ++j) {
      const float w = std::min(kept.x_max[j], c.x_max) - std::max(kept.x_min[j], c.x_min);
      const float h = std::min(kept.y_max[j], c.y_max) - std::max(kept.y_min[j], c.y_min);
      const float inter = w * h;
      const float uni = kept.area[j] + area_c - inter;
      // A division by a union of 0 is masked by the tests beside it.
      any |= static_cast<int>((w > 0) & (h > 0) & (kept.area[j] > 0) & (uni > 0) &
                              (inter / uni > threshold));
    }
    if (any != 0) return true;
  }
  return false;
}

struct NmsParams {
  int64_t per_class = 0;
  float iou = 0;
  bool has_score_threshold = false;
  float score_threshold = 0;
  bool center = false;
};

NmsParams nms_params(const KernelContext& ctx) {
  NmsParams p;
  if (ctx.has_input(2) && ctx.input(2).numel() > 0) {
    p.per_class = std::max<int64_t>(scalar_int(ctx, ctx.input(2)), 0);
  }
  if (ctx.has_input(3) && ctx.input(3).numel() > 0) {
    p.iou = static_cast<float>(scalar_real(ctx, ctx.input(3)));
  }
  if (ctx.has_input(4) && ctx.input(4).numel() > 0) {
    p.has_score_threshold = true;
    p.score_threshold = static_cast<float>(scalar_real(ctx, ctx.input(4)));
  }
  p.center = ctx.attr_int("center_point_box", 0) != 0;
  return p;
}

// Scratch: each class's candidates (box indices) and, for the boxes it kept, their indices and
// their corners and areas as columns: S of each at most.
constexpr uint64_t kNmsScratchPerBox = 2 * sizeof(int64_t) + 5 * sizeof(float);

uint64_t nms_workspace(const graph::Node& /*n*/, const std::vector<graph::ConcreteTensor>& in,
                       const std::vector<graph::ConcreteTensor>& /*out*/) {
  if (in.empty() || in[0].dims.size() != 3) return 0;
  return static_cast<uint64_t>(std::max<int64_t>(in[0].dims[1], 0)) * kNmsScratchPerBox;
}

void nms_kernel(KernelContext& ctx) {
  const TensorRef& boxes = ctx.input(0);
  const TensorRef& scores = ctx.input(1);
  TensorRef& selected = ctx.output(0);
  if (boxes.dtype != DType::float32 || scores.dtype != DType::float32)
    ctx.fail("boxes and scores must be float32");
  if (boxes.rank() != 3 || boxes.dim(2) != 4 || scores.rank() != 3 ||
      scores.dim(0) != boxes.dim(0) || scores.dim(2) != boxes.dim(1)) {
    ctx.fail("boxes must be [B, S, 4] and scores [B, C, S], are " + extents_text(boxes.dims) +
             " and " + extents_text(scores.dims));
  }
  const NmsParams p = nms_params(ctx);
  const auto batches = static_cast<size_t>(boxes.dim(0));
  const auto classes = static_cast<size_t>(scores.dim(1));
  const auto spatial = static_cast<size_t>(boxes.dim(1));
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < spatial * kNmsScratchPerBox) ctx.fail("the planned scratch is too small");
  auto* candidates = reinterpret_cast<int64_t*>(ws.data());
  int64_t* kept_index = candidates + spatial;
  auto* columns = reinterpret_cast<float*>(kept_index + spatial);
  KeptBoxes kept{columns, columns + spatial, columns + 2 * spatial, columns + 3 * spatial,
                 columns + 4 * spatial};
  const size_t capacity = static_cast<size_t>(selected.dim(0));
  int64_t* out = selected.as<int64_t>();
  size_t count = 0;
  for (size_t b = 0; b < batches && p.per_class > 0; ++b) {
    const float* box = boxes.as<const float>() + b * spatial * 4;
    for (size_t c = 0; c < classes; ++c) {
      const float* score = scores.as<const float>() + (b * classes + c) * spatial;
      size_t n = 0;
      for (size_t s = 0; s < spatial; ++s) {
        if (!p.has_score_threshold || score[s] > p.score_threshold)
          candidates[n++] = static_cast<int64_t>(s);
      }
      // Highest score first; equal scores in box order, so the result does not depend on the
      // sort.
      std::sort(candidates, candidates + n, [score](int64_t x, int64_t y) {
        return score[x] > score[y] || (score[x] == score[y] && x < y);
      });
      kept.count = 0;
      for (size_t i = 0; i < n && static_cast<int64_t>(kept.count) < p.per_class; ++i) {
        const Corners cand = corners_of(box + candidates[i] * 4, p.center);
        bool suppressed = false;
        with_wide_vectors([&] { suppressed = suppressed_by_any(kept, cand, p.iou); });
        if (suppressed) continue;
        const size_t k = kept.count++;
        kept_index[k] = candidates[i];
        kept.x_min[k] = cand.x_min;
        kept.y_min[k] = cand.y_min;
        kept.x_max[k] = cand.x_max;
        kept.y_max[k] = cand.y_max;
        kept.area[k] = area_of(cand);
      }
      if (count + kept.count > capacity) ctx.fail("kept more boxes than its bound");
      for (size_t j = 0; j < kept.count; ++j, ++count) {
        out[count * 3] = static_cast<int64_t>(b);
        out[count * 3 + 1] = static_cast<int64_t>(c);
        out[count * 3 + 2] = kept_index[j];
      }
    }
  }
  const int64_t extents[2] = {static_cast<int64_t>(count), 3};
  ctx.set_output_extents(0, extents);
}

// ---- RoiAlign(X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2), batch_indices [R])
//        -> [R, C, output_height, output_width]

// One sampling point's four neighbours (offsets into a channel's plane) and their bilinear
// weights; all weights 0 for a point outside the map.
struct Sample {
  int64_t at[4] = {0, 0, 0, 0};
  float w[4] = {0, 0, 0, 0};
};

Sample sample_at(float y, float x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0f || y > static_cast<float>(height) || x < -1.0f || x > static_cast<float>(width))
    return s;
  y = std::max(y, 0.0f);
  x = std::max(x, 0.0f);
  auto y_low = static_cast<int64_t>(y);
  auto x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1;
  int64_t x_high = x_low + 1;
  if (y_low >= height - 1) {
    y_low = y_high = height - 1;
    y = static_cast<float>(y_low);
  }
  if (x_low >= width - 1) {
    x_low = x_high = width - 1;
    x = static_cast<float>(x_low);
  }
  const float ly = y - static_cast<float>(y_low);
  const float lx = x - static_cast<float>(x_low);
  const float hy = 1 - ly;
  const float hx = 1 - lx;
  s.at[0] = y_low * width + x_low;
  s.at[1] = y_low * width + x_high;
  s.at[2] = y_high * width + x_low;
  s.at[3] = y_high * width + x_high;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

struct RoiAlignParams {
  bool max_mode = false;
  int64_t sampling_ratio = 0;
  float spatial_scale = 1;
  float offset = 0;  // half_pixel (opset 16's default) shifts coordinates by half a pixel
};

RoiAlignParams roi_align_params(const KernelContext& ctx) {
  RoiAlignParams p;
  const std::string_view mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.fail("mode " + std::string(mode) + " is not supported");
  p.max_mode = mode == "max";
  p.sampling_ratio = ctx.attr_int("sampling_ratio", 0);
  p.spatial_scale = ctx.attr_float("spatial_scale", 1.0f);
  const std::string_view transform = ctx.attr_string(
      "coordinate_transformation_mode", ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    ctx.fail("coordinate_transformation_mode " + std::string(transform) + " is not supported");
  p.offset = transform == "half_pixel" ? 0.5f : 0.0f;
  return p;
}

// One region: every channel's output_height x output_width bins, each the average (or the
// largest weighted neighbour) of a grid of bilinear samples.
void roi_align_one(const RoiAlignParams& p, const float* roi, const float* image, float* out,
                   int64_t channels, int64_t height, int64_t width, int64_t out_h, int64_t out_w) {
  const float start_w = roi[0] * p.spatial_scale - p.offset;
  const float start_h = roi[1] * p.spatial_scale - p.offset;
  float roi_w = roi[2] * p.spatial_scale - p.offset - start_w;
  float roi_h = roi[3] * p.spatial_scale - p.offset - start_h;
  if (p.offset == 0) {  // without the half pixel, a region is at least one pixel
    roi_w = std::max(roi_w, 1.0f);
    roi_h = std::max(roi_h, 1.0f);
  }
  const float bin_h = roi_h / static_cast<float>(out_h);
  const float bin_w = roi_w / static_cast<float>(out_w);
  const int64_t grid_h =
      p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(bin_h));
  const int64_t grid_w =
      p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(bin_w));
  const float count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
  const int64_t plane = height * width;
  const int64_t bins = out_h * out_w;
  std::fill(out, out + channels * bins, 0.0f);
  for (int64_t ph = 0; ph < out_h; ++ph) {
    for (int64_t pw = 0; pw < out_w; ++pw) {
      const int64_t bin = ph * out_w + pw;
      bool first = true;
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        const float y = start_h + static_cast<float>(ph) * bin_h +
                        (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(grid_h);
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          const float x = start_w + static_cast<float>(pw) * bin_w +
                          (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(grid_w);
          const Sample s = sample_at(y, x, height, width);
          for (int64_t c = 0; c < channels; ++c) {
            const float* v = image + c * plane;
            float& o = out[c * bins + bin];
            if (p.max_mode) {
              const float m = std::max(std::max(s.w[0] * v[s.at[0]], s.w[1] * v[s.at[1]]),
                                       std::max(s.w[2] * v[s.at[2]], s.w[3] * v[s.at[3]]));
              o = first ? m : std::max(o, m);
            } else {
              o += s.w[0] * v[s.at[0]] + s.w[1] * v[s.at[1]] + s.w[2] * v[s.at[2]] +
                   s.w[3] * v[s.at[3]];
            }
          }
          first = false;
        }
      }
      if (!p.max_mode) {
        for (int64_t c = 0; c < channels; ++c) out[c * bins + bin] /= count;
      }
    }
  }
}

void roi_align_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const TensorRef& rois = ctx.input(1);
  const TensorRef& batch = ctx.input(2);
  TensorRef& y = ctx.output(0);
  if (x.dtype != DType::float32 || rois.dtype != DType::float32)
    ctx.fail("X and rois must be float32");
  if (x.rank() != 4 || rois.rank() != 2 || rois.dim(1) != 4 || batch.rank() != 1 ||
      batch.dim(0) != rois.dim(0)) {
    ctx.fail("X must be [N, C, H, W], rois [R, 4] and batch_indices [R], are " +
             extents_text(x.dims) + ", " + extents_text(rois.dims) + " and " +
             extents_text(batch.dims));
  }
  const RoiAlignParams p = roi_align_params(ctx);
  const int64_t channels = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t out_h = y.dim(2), out_w = y.dim(3);
  const auto regions = static_cast<size_t>(rois.dim(0));
  if (batch.dtype != DType::int32 && batch.dtype != DType::int64)
    ctx.fail("batch_indices must be int32 or int64");
  auto image_of = [&batch](size_t r) -> int64_t {
    return batch.dtype == DType::int32 ? batch.as<const int32_t>()[r]
                                       : batch.as<const int64_t>()[r];
  };
  for (size_t r = 0; r < regions; ++r) {
    const int64_t n = image_of(r);
    if (n < 0 || n >= x.dim(0)) {
      ctx.fail("batch index " + std::to_string(n) + " of region " + std::to_string(r) +
               " is outside [0, " + std::to_string(x.dim(0)) + ")");
    }
  }
  const float* image = x.as<const float>();
  float* out = y.as<float>();
  const int64_t per_region = channels * out_h * out_w;
  parallel_for(
      ctx.threads(), regions,
      [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
          roi_align_one(
              p, rois.as<const float>() + r * 4, image + image_of(r) * channels * height * width,
              out + static_cast<int64_t>(r) * per_region, channels, height, width, out_h, out_w);
        }
      },
      1);
}

}  // namespace

void register_detection(graph::OpRegistry& r) {
  graph::OpSchema& nms = r.row("", "NonMaxSuppression");
  nms.kernel = nms_kernel;
  nms.workspace = nms_workspace;
  nms.reports_extents = true;
  r.row("", "RoiAlign").kernel = roi_align_kernel;
  nms.kernel_dtypes = r.row("", "RoiAlign").kernel_dtypes = DTypeSet{DType::float32};
}

}  // namespace footprint::runtime::kernels
