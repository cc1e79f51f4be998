#pragma once
// The example model of scripts/run: MobileNetV2 (Sandler et al., 2018) at width 0.35 on 96x96
// inputs, the smallest configuration the paper's family publishes, built in code with
// graph::GraphBuilder.
//
// Why this network: it is the standard architecture for memory-bound devices, and its memory
// behaviour is what footprint is about. Inverted residual blocks expand a thin tensor six-fold,
// filter it depthwise and project it back, so the activation peak sits inside a block, at an
// expanded tensor of the highest resolution (at 96x96, the second block's 48 channels of 48x48
// before its stride-2 depthwise convolution), while most of the weight bytes are in the head and
// the classifier. Linear bottlenecks (no activation after the projection) and ReLU6 (Clip 0..6)
// are the paper's; there is no BatchNorm because an exported inference model has it folded into
// the convolutions anyway. Channels follow the paper's table 2 scaled by 0.35 and rounded to
// multiples of 8 (as the reference implementation does), the 1280-channel head is kept, and the
// classifier is a Gemm over the globally averaged features giving logits (no Softmax: logits keep
// the comparison with other runtimes sensitive).
//
// Weights are He-scaled uniform values from a seeded 64-bit LCG (no platform RNG), so every build
// writes the same bytes and activations neither vanish nor explode through 52 convolutions.
#include <cstdint>
#include <filesystem>

#include "footprint/graph/builder.hpp"
#include "footprint/runtime/tensor.hpp"

namespace footprint::examples {

struct MobileNetV2Config {
  int64_t height = 96;
  int64_t width = 96;
  double width_multiplier = 0.35;
  int64_t classes = 1000;
  uint64_t seed = 1;
};

// Adds the network to `b`: input `x: float[N,3,H,W]` (N symbolic), output `logits:
// float[N,classes]`. Returns the output. `b` should use runtime::op_registry() (or another registry
// with the same inference rules).
graph::Var build_mobilenet_v2(graph::GraphBuilder& b, const MobileNetV2Config& config = {});

// The network as an ONNX file at `path` (opset 18).
void write_mobilenet_v2(const std::filesystem::path& path, const MobileNetV2Config& config = {});

// A deterministic input `x` of batch `n`: values in [-1, 1), the range MobileNetV2 is trained on.
runtime::Tensor mobilenet_v2_input(int64_t n, const MobileNetV2Config& config = {});

}  // namespace footprint::examples
