#pragma once
// Depthwise 2-D convolution (group == input channels == output channels) on NCHW tensors, as a
// direct loop: oneDNN has no fast kernel for it in plain layouts (it falls back to a gemm per
// channel, several times slower than the model's whole budget on MobileNet-style networks).
// Each channel's plane is copied, zero-padded and split into stride phases, into the step's
// planned workspace, so that no window needs a bounds check and every tap is one vector
// multiply-add over 16 contiguous output columns, whatever the stride. The workspace hook reports
// that scratch (one plane per thread) to the planner.
#include <cstdint>
#include <memory>
#include <span>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/graph/ops/conv_window.hpp"

namespace footprint::runtime::kernels {

// x [N, C, H, W], w [C, 1, kh, kw], float32: the direct loop applies.
bool is_depthwise_2d(const graph::ops::ConvWindow& cw, std::span<const int64_t> x,
                     std::span<const int64_t> w, DType dtype);

// The workspace the loop needs for these extents with the current intra-op thread count.
uint64_t depthwise_conv_2d_workspace(const graph::ops::ConvWindow& cw, std::span<const int64_t> x,
                                     std::span<const int64_t> w, std::span<const int64_t> y);

// The loop's state for these extents (its geometry, so that a run decodes nothing); nullptr
// when there is nothing to compute.
std::unique_ptr<graph::KernelState> depthwise_conv_2d_prepare(const graph::ops::ConvWindow& cw,
                                                              std::span<const int64_t> x,
                                                              std::span<const int64_t> w,
                                                              std::span<const int64_t> y);

// Runs Conv on ctx when its prepared state is the loop's; false when it is not.
bool run_depthwise_conv_2d(graph::KernelContext& ctx);

}  // namespace footprint::runtime::kernels
