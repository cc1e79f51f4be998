#include "footprint/graph/epilogue.hpp"

namespace footprint::graph {

std::string_view epilogue_name(EpilogueOp op) {
  switch (op) {
    case EpilogueOp::relu:
      return "Relu";
    case EpilogueOp::leaky_relu:
      return "LeakyRelu";
    case EpilogueOp::clip:
      return "Clip";
    case EpilogueOp::sigmoid:
      return "Sigmoid";
    case EpilogueOp::tanh:
      return "Tanh";
    case EpilogueOp::swish:
      return "SiLU";
    case EpilogueOp::hard_sigmoid:
      return "HardSigmoid";
    case EpilogueOp::hard_swish:
      return "HardSwish";
  }
  return "?";
}

}  // namespace footprint::graph
