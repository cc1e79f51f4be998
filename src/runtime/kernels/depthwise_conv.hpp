#pragma once
// Depthwise 2-D convolution (group == input channels == output channels) in NCHW, as a direct
// loop: oneDNN has no fast kernel for it in plain layouts (it falls back to a gemm per channel,
// several times slower than the model's whole budget on MobileNet-style networks), and the
// direct form needs no scratch at all.
#include <cstdint>
#include <span>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::runtime::kernels {

// x [N, C, H, W], w [C, 1, kh, kw], float32: the direct loop applies.
bool is_depthwise_2d(const graph::Node& n, std::span<const int64_t> x, std::span<const int64_t> w,
                     DType dtype);

// Runs Conv on ctx when is_depthwise_2d holds for its inputs.
void depthwise_conv_2d(graph::KernelContext& ctx);

}  // namespace footprint::runtime::kernels
