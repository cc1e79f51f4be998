#pragma once
// Node::epilogues (graph/epilogue.hpp) in the kernels that take them (Conv, MatMul, Gemm): as
// oneDNN post-ops where oneDNN has every one of the node's epilogues, so they are applied while
// the output is in registers; else after the kernel's own work, vectorised, over the output
// (or over each plane as a kernel of ours writes it).
//
//   auto [pd, applied] = with_epilogues(node, [&](bool epilogues) { return make(epilogues); });
//   ...                                 // make() calls append_epilogues(node, ops) when asked
//   finish_epilogues(ctx, applied);     // after the primitive: applies what it did not
#include <cstddef>
#include <span>
#include <string_view>
#include <utility>

#include "dnnl_util.hpp"
#include "footprint/graph/graph.hpp"

namespace footprint::runtime::kernels {

// Whether oneDNN has every one of n's epilogues as a post-op.
bool epilogues_in_post_ops(const graph::Node& n);
// Appends n's epilogues to `ops` when epilogues_in_post_ops(n).
void append_epilogues(const graph::Node& n, dnnl::post_ops& ops);
// user_scratchpad() with n's epilogues as post-ops where they can be.
dnnl::primitive_attr epilogue_attr(const graph::Node& n);

// A primitive descriptor for node n, `build(true)` with its epilogues as post-ops, or
// `build(false)` without them where they cannot be, or where oneDNN would then run its gemm-based
// kernels: those apply post-ops in a slow pass of their own (a MobileNetV2 1x1 convolution with
// ReLU6 took 7 ms there, 0.5 ms and a 0.1 ms pass of ours apart). A pure function of the node and
// its extents, so the scratch sized when planning is the scratch of the primitive prepared.
// Returns the descriptor and whether it applies the epilogues.
template <class Build>
auto with_epilogues(const graph::Node& n, Build&& build) {
  using Pd = decltype(build(true));
  if (n.epilogues.empty() || !epilogues_in_post_ops(n))
    return std::pair<Pd, bool>(build(false), false);
  Pd pd = build(true);
  if (std::string_view(pd.impl_info_str()).find("gemm") == std::string_view::npos) {
    return std::pair<Pd, bool>(std::move(pd), true);
  }
  return std::pair<Pd, bool>(build(false), false);
}

// y[i] = e_k(...e_1(y[i])) for n floats.
void apply_epilogues(std::span<const graph::Epilogue> epilogues, float* y, size_t n);
// Applies the node's epilogues to output 0 unless the primitive did (`applied`): a kernel's last
// call.
void finish_epilogues(graph::KernelContext& ctx, bool applied);

}  // namespace footprint::runtime::kernels
