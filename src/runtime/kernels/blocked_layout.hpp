#pragma once
// A oneDNN primitive run on the layouts it prefers between plain ONNX tensors: its fast
// convolutions read and write channel-blocked activations (nChw16c) and weights (OIhw16i16o),
// while on plain layouts it falls back to im2col and a gemm, 1.3-2x slower for a 3x3 window.
//
// The memory contract holds as for every oneDNN kernel (dnnl_util.hpp): the blocked copies of
// the input and output live in the step's planned workspace next to the scratchpad, and the
// WorkspaceFn reports all of it from the same descriptor the PrepareFn builds. The weights are
// packed once when preparing, into a buffer the state owns; where they are a constant the state
// then replaces them (OpSchema::packed_inputs), so the executor can release a computed original.
//
//   auto pd = blocked_conv_pd(node, extents);            // format_tag::any everywhere
//   uint64_t ws = BlockedState::workspace_bytes(pd, plain_src, plain_dst);   // WorkspaceFn
//   auto st = std::make_unique<BlockedState>(pd, plain_src, plain_weights, plain_dst, weights);
//   st->run(ctx);   // src -> blocked, the primitive, blocked -> dst
#include <cstddef>
#include <cstdint>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "dnnl_util.hpp"
#include "footprint/runtime/tensor.hpp"

namespace footprint::runtime::kernels {

// Weights in the layout a oneDNN primitive chose for them (format_tag::any: the blocks its kernel
// streams), packed from their plain layout into a buffer this owns: once, here, when they are
// known while preparing (a constant), else on every run, before the primitive (the reorder's
// scratch then comes from the step's workspace: scratch_bytes).
//
//   PackedWeights w(plain_b, pd.weights_desc(), constant_b_or_null);    // PrepareFn
//   st.bind(DNNL_ARG_WEIGHTS, w.weights(ctx, ctx.input(1).data));       // KernelFn
class PackedWeights {
 public:
  PackedWeights(const dnnl::memory::desc& plain, const dnnl::memory::desc& packed,
                const void* constant);

  // The reorder's scratch on a run where the weights are computed.
  static uint64_t scratch_bytes(const dnnl::memory::desc& plain, const dnnl::memory::desc& packed);

  // The packed weights, packing `b` first when they were not a constant.
  const void* weights(graph::KernelContext& ctx, const void* b);

  uint64_t bytes() const { return buffer_.size(); }

 private:
  AlignedBuffer buffer_;
  std::optional<DnnlState> pack_;
};

class BlockedState final : public graph::KernelState {
 public:
  // `pd`: a convolution whose descriptors oneDNN chose (format_tag::any); plain_*: the layouts
  // of the ONNX tensors. `weights`: their bytes when they are known now (a constant), packed
  // once here; nullptr packs them on every run.
  BlockedState(const dnnl::convolution_forward::primitive_desc& pd,
               const dnnl::memory::desc& plain_src, const dnnl::memory::desc& plain_weights,
               const dnnl::memory::desc& plain_dst, bool has_bias, const void* weights);

  // The step's workspace: scratch shared by the primitive and the reorders, then the blocked
  // input and output (each 64-byte aligned; a side oneDNN keeps plain needs no copy).
  static uint64_t workspace_bytes(const dnnl::convolution_forward::primitive_desc& pd,
                                  const dnnl::memory::desc& plain_src,
                                  const dnnl::memory::desc& plain_weights,
                                  const dnnl::memory::desc& plain_dst);

  uint64_t owned_bytes() const override { return weights_.bytes(); }

  void run(graph::KernelContext& ctx);

  // Whether the primitive applies the node's epilogues (as post-ops); else the caller does.
  bool applies_epilogues = false;

 private:
  struct Layout {
    uint64_t scratch = 0, src_offset = 0, dst_offset = 0, total = 0;
  };
  static Layout layout_of(const dnnl::convolution_forward::primitive_desc& pd,
                          const dnnl::memory::desc& plain_src,
                          const dnnl::memory::desc& plain_weights,
                          const dnnl::memory::desc& plain_dst);

  Layout layout_;
  bool reorder_src_ = false, reorder_dst_ = false;
  PackedWeights weights_;
  std::optional<DnnlState> to_blocked_, to_plain_;
  DnnlState primitive_;
};

}  // namespace footprint::runtime::kernels
