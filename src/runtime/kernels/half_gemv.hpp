#pragma once
// A float16 or bfloat16 Gemm of a few rows (a classifier's head on one image, M <= 8): the
// weights stay 16-bit, widened in registers as each row of them streams past, instead of the
// float32 copy through_float32 gives every 16-bit product. At a few rows a product reads each
// weight once, so its time is the bytes of B: half of the float32 copy's.
//
//   if (half_gemv::takes(node, in, out)) return half_gemv::workspace(node, in, out);
//   ...
//   if (half_gemv::prepared(ctx)) return half_gemv::run(ctx);
//
// Exact as the other paths are: the state keeps B as [N, K] 16-bit rows (transB or not) and C
// widened, which `packed` reports (B's original is then released as any packed weight), and each
// A row is widened into the step's workspace (M K floats, which `workspace` reports). Each output
// is a float sum plus C, through the node's epilogues, rounded once into the 16-bit type.
#include <cstdint>
#include <memory>
#include <vector>

#include "footprint/graph/inference.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::runtime::kernels::half_gemv {

// Whether the path runs this Gemm: A, B, C (if any) and Y of one 16-bit float dtype (A and Y may
// be float32 carriers of it, graph/carry_float32.hpp: read and written as floats), A [M, K]
// with M <= 8 and no transA, alpha 1, C absent or a row [N] / [1, N] with beta 1.
bool takes(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
           const std::vector<graph::ConcreteTensor>& out);
bool takes(const graph::KernelContext& ctx);

// B's 16-bit copy and C's float one (bytes), and the widened A rows (bytes).
uint64_t packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                const std::vector<graph::ConcreteTensor>& out);
uint64_t workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                   const std::vector<graph::ConcreteTensor>& out);

// The state (B and C copied); fails naming the node where B or C is computed while running.
std::unique_ptr<graph::KernelState> prepare(const graph::KernelContext& ctx);
bool prepared(const graph::KernelContext& ctx);
void run(graph::KernelContext& ctx);

}  // namespace footprint::runtime::kernels::half_gemv
