#pragma once
// DynamicQuantizeLinear's kernel (quantization.cpp) for kernels that quantize a float input
// themselves: onnxruntime's DynamicQuantizeMatMul quantizes A exactly as DynamicQuantizeLinear
// does before its integer product. The context holds x (float32) at input 0 and y (uint8, x's
// extents), its scale (float32 scalar) and zero point (uint8 scalar) at outputs 0 to 2.
#include "footprint/graph/kernel.hpp"

namespace footprint::runtime::kernels {

void dynamic_quantize_linear(graph::KernelContext& ctx);

}  // namespace footprint::runtime::kernels
