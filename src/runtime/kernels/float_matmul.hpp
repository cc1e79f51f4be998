#pragma once
// MatMul's float32 kernel (matmul.cpp) for rows that compute a float32 MatMul of operands they
// make themselves: MatMulNBits runs A x its dequantized weights (+ bias) through it. The context
// given holds A at input 0, B [K, N] at input 1 and an optional bias [N] at input 2 (added to
// every row, as footprint::MatMulAdd's C), and Y at output 0; the node is the caller's, so
// messages name it. The hooks are MatMul's own, so a caller's workspace and packed bytes are the
// ones its kernel then uses.
#include <cstdint>
#include <memory>
#include <vector>

#include "footprint/graph/inference.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::runtime::kernels {

std::unique_ptr<graph::KernelState> float_matmul_prepare(const graph::KernelContext& ctx);
void float_matmul_run(graph::KernelContext& ctx);
uint64_t float_matmul_workspace(const graph::Node& node,
                                const std::vector<graph::ConcreteTensor>& in,
                                const std::vector<graph::ConcreteTensor>& out);
uint64_t float_matmul_packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                             const std::vector<graph::ConcreteTensor>& out,
                             const std::vector<bool>& constant);

}  // namespace footprint::runtime::kernels
