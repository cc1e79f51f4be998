#include "blocked_layout.hpp"

#include <algorithm>

namespace footprint::runtime::kernels {
namespace {

using dnnl::memory;

uint64_t aligned(uint64_t bytes) {
  return (bytes + 63) / 64 * 64;
}

dnnl::reorder::primitive_desc reorder_pd(const memory::desc& from, const memory::desc& to) {
  return {cpu_engine(), from, cpu_engine(), to, user_scratchpad()};
}

uint64_t scratch_of(const dnnl::primitive_desc_base& pd) {
  return pd.scratchpad_desc().get_size();
}

DnnlState reorder_state(const memory::desc& from, const memory::desc& to) {
  const auto pd = reorder_pd(from, to);
  return DnnlState(pd, dnnl::reorder(pd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

std::vector<std::pair<int, memory::desc>> conv_args(
    const dnnl::convolution_forward::primitive_desc& pd, bool has_bias) {
  std::vector<std::pair<int, memory::desc>> args{{DNNL_ARG_SRC, pd.src_desc()},
                                                 {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                                 {DNNL_ARG_DST, pd.dst_desc()}};
  if (has_bias) args.emplace_back(DNNL_ARG_BIAS, pd.bias_desc());
  return args;
}

}  // namespace

BlockedState::Layout BlockedState::layout_of(const dnnl::convolution_forward::primitive_desc& pd,
                                             const memory::desc& plain_src,
                                             const memory::desc& plain_weights,
                                             const memory::desc& plain_dst) {
  // The reorders and the primitive run one after the other, so they share one scratch region.
  Layout l;
  l.scratch = scratch_of(pd);
  uint64_t src_bytes = 0, dst_bytes = 0;
  if (pd.src_desc() != plain_src) {
    l.scratch = std::max(l.scratch, scratch_of(reorder_pd(plain_src, pd.src_desc())));
    src_bytes = aligned(pd.src_desc().get_size());
  }
  if (pd.weights_desc() != plain_weights) {
    l.scratch = std::max(l.scratch, PackedWeights::scratch_bytes(plain_weights, pd.weights_desc()));
  }
  if (pd.dst_desc() != plain_dst) {
    l.scratch = std::max(l.scratch, scratch_of(reorder_pd(pd.dst_desc(), plain_dst)));
    dst_bytes = aligned(pd.dst_desc().get_size());
  }
  l.src_offset = aligned(l.scratch);
  l.dst_offset = l.src_offset + src_bytes;
  l.total = l.dst_offset + dst_bytes;
  return l;
}

uint64_t BlockedState::workspace_bytes(const dnnl::convolution_forward::primitive_desc& pd,
                                       const memory::desc& plain_src,
                                       const memory::desc& plain_weights,
                                       const memory::desc& plain_dst) {
  return layout_of(pd, plain_src, plain_weights, plain_dst).total;
}

BlockedState::BlockedState(const dnnl::convolution_forward::primitive_desc& pd,
                           const memory::desc& plain_src, const memory::desc& plain_weights,
                           const memory::desc& plain_dst, bool has_bias, const void* weights)
    : layout_(layout_of(pd, plain_src, plain_weights, plain_dst)),
      reorder_src_(pd.src_desc() != plain_src),
      reorder_dst_(pd.dst_desc() != plain_dst),
      weights_(plain_weights, pd.weights_desc(), weights),
      primitive_(pd, dnnl::convolution_forward(pd), conv_args(pd, has_bias)) {
  if (reorder_src_) to_blocked_.emplace(reorder_state(plain_src, pd.src_desc()));
  if (reorder_dst_) to_plain_.emplace(reorder_state(pd.dst_desc(), plain_dst));
}

PackedWeights::PackedWeights(const memory::desc& plain, const memory::desc& packed,
                             const void* constant)
    : buffer_(packed.get_size()) {
  if (constant == nullptr) {
    pack_.emplace(reorder_state(plain, packed));
    pack_->bind(DNNL_ARG_TO, buffer_.data());
    return;
  }
  // Packed once, with oneDNN's own scratch: this runs while preparing, not inside the plan.
  memory from(plain, cpu_engine(), const_cast<void*>(constant));
  memory to(packed, cpu_engine(), buffer_.data());
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
}

uint64_t PackedWeights::scratch_bytes(const memory::desc& plain, const memory::desc& packed) {
  return scratch_of(reorder_pd(plain, packed));
}

const void* PackedWeights::weights(graph::KernelContext& ctx, const void* b) {
  if (pack_) {
    pack_->bind(DNNL_ARG_FROM, b);
    pack_->execute(ctx);
  }
  return buffer_.data();
}

void BlockedState::run(graph::KernelContext& ctx) {
  const std::span<std::byte> workspace = ctx.workspace();
  if (workspace.size() < layout_.total) {
    ctx.fail("the step's workspace (" + std::to_string(workspace.size()) +
             " bytes) is smaller than the blocked layouts need (" + std::to_string(layout_.total) +
             " bytes)");
  }
  std::byte* src = reorder_src_ ? workspace.data() + layout_.src_offset : nullptr;
  std::byte* dst = reorder_dst_ ? workspace.data() + layout_.dst_offset : nullptr;
  primitive_.bind(DNNL_ARG_WEIGHTS, weights_.weights(ctx, ctx.input(1).data));
  if (reorder_src_) {
    to_blocked_->bind(DNNL_ARG_FROM, ctx.input(0).data);
    to_blocked_->bind(DNNL_ARG_TO, src);
    to_blocked_->execute(ctx);
  }
  primitive_.bind(DNNL_ARG_SRC, reorder_src_ ? src : ctx.input(0).data);
  if (ctx.has_input(2)) primitive_.bind(DNNL_ARG_BIAS, ctx.input(2).data);
  primitive_.bind(DNNL_ARG_DST, reorder_dst_ ? dst : ctx.output(0).data);
  primitive_.execute(ctx);
  if (reorder_dst_) {
    to_plain_->bind(DNNL_ARG_FROM, dst);
    to_plain_->bind(DNNL_ARG_TO, ctx.output(0).data);
    to_plain_->execute(ctx);
  }
}

}  // namespace footprint::runtime::kernels
