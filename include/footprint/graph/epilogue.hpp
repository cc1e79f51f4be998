#pragma once
// An elementwise op folded into the output of the node before it (graph::fuse): a Conv followed
// by a Relu becomes one Conv whose kernel applies the Relu to each output element as it stores
// it, so the activation is one pass over memory instead of two, and its tensor is never made.
//
// What may be an epilogue is the op registry's to say (OpSchema::as_epilogue decodes a node
// into one), and which ops take them is their kernels' promise (OpSchema::epilogue_dtypes); the
// runtime applies them (src/runtime/kernels/epilogue.hpp).
#include <cstdint>
#include <string>

namespace footprint::graph {

enum class EpilogueOp : uint8_t {
  relu,          // max(x, 0)
  leaky_relu,    // x < 0 ? alpha x : x
  clip,          // min(max(x, alpha), beta)
  sigmoid,       // 1 / (1 + exp(-x))
  tanh,          // tanh(x)
  swish,         // x * sigmoid(x): Sigmoid and a Mul by its own input (SiLU)
  hard_sigmoid,  // max(0, min(1, alpha x + beta))
  hard_swish,    // x * max(0, min(1, x / 6 + 1 / 2))
  gelu_erf,      // x / 2 * (1 + erf(x / sqrt(2)))
  gelu_tanh,     // x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
};

struct Epilogue {
  EpilogueOp op = EpilogueOp::relu;
  float alpha = 0;
  float beta = 0;
  std::string from;  // the nodes it stands for, for reports: "Clip 'x/Clip'"
};

}  // namespace footprint::graph
