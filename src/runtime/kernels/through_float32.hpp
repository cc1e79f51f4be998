#pragma once
// Float16 and bfloat16 nodes of a row whose kernel computes float32 (oneDNN's convolutions and
// products): the 16-bit tensors are converted to float32 around the float32 kernel, which then
// sees a float32 node. Debian's oneDNN 2.6 builds no float16 convolution or matmul on a CPU
// without AVX512-FP16 (docs/RUNTIME.md, "16-bit floats"), so this is the float16 path there.
//
//   graph::OpSchema& row = r.row("", "Conv");
//   through_float32<run_conv, conv_prepare, conv_workspace, conv_packed, 0b110>(row);
//
// Every byte stays declared:
// - a constant 16-bit input is converted once, when preparing, into float32 the state keeps
//   (the row's `packed` counts it; where the row's packed_inputs has its bit, the original is
//   released as for any packed weight, since the kernel reads only the copy), unless the
//   float32 kernel packs it into a layout of its own: then the copy goes too, once packed;
// - the other 16-bit inputs and the 16-bit outputs get float32 copies in the step's scratch,
//   before the float32 kernel's own scratch (the row's `workspace` counts them), converted in
//   and out on every run: each output is rounded to nearest even once, after the float32 kernel
//   and its epilogues;
// - `kConstantInputs` names the inputs (a convolution's weights and bias) that the 16-bit node
//   must have as constants: no scratch is planned for them, and preparing fails naming the node
//   when one is computed while running.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "float16.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/graph/op_registry.hpp"
#include "parallel_for.hpp"

namespace footprint::runtime::kernels {

namespace through_float32_detail {

inline uint64_t round_up_64(uint64_t bytes) {
  return (bytes + 63) / 64 * 64;
}

inline uint64_t float32_bytes(std::span<const int64_t> dims) {
  uint64_t n = 1;
  for (const int64_t d : dims) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  return n * sizeof(float);
}

inline bool has_16bit(const std::vector<graph::ConcreteTensor>& in,
                      const std::vector<graph::ConcreteTensor>& out) {
  const auto is16 = [](const graph::ConcreteTensor& t) { return is_16bit(t.dtype); };
  return std::any_of(in.begin(), in.end(), is16) || std::any_of(out.begin(), out.end(), is16);
}

inline std::vector<graph::ConcreteTensor> as_float32(std::vector<graph::ConcreteTensor> ts) {
  for (graph::ConcreteTensor& t : ts) {
    if (is_16bit(t.dtype)) t.dtype = DType::float32;
  }
  return ts;
}

inline bool required_constant(uint32_t bits, size_t i) {
  return i < 32 && ((bits >> i) & 1U) != 0;
}

// 16-bit to float32 and back, a thread's chunk at a time.
void widen_into(int threads, const graph::TensorRef& from, float* to);
void narrow_into(int threads, const float* from, const graph::TensorRef& to);

// The float32 copies of the node's constant 16-bit inputs and the float32 kernel's own state.
class State final : public graph::KernelState {
 public:
  std::vector<std::vector<float>> constants;  // by input index; empty: not a 16-bit constant
  // Inputs whose float32 copy went once the float32 kernel packed them (bit i: input i).
  uint32_t packed_away = 0;
  std::unique_ptr<graph::KernelState> inner;  // destroyed first: it may point into `constants`

  uint64_t owned_bytes() const override;
};

// A node's tensors, held without allocating (a kernel run allocates nothing): the products and
// convolutions this wraps have at most six inputs (MatMulNBits) and one output.
struct Refs {
  static constexpr size_t kMax = 6;
  std::array<graph::TensorRef, kMax> in{}, out{};
  std::array<char, kMax> in_present{}, out_present{};
  size_t inputs = 0, outputs = 0;
};

// The node as its float32 kernel sees it: the 16-bit tensors replaced by their float32 copies,
// the scratch past those copies, and the float32 kernel's state.
class Float32View final : public graph::KernelContext {
 public:
  Float32View(const graph::KernelContext& outer, graph::KernelContext* mutable_outer,
              const Refs& refs, std::span<std::byte> scratch, graph::KernelState* state)
      : outer_(outer),
        mutable_outer_(mutable_outer),
        refs_(refs),
        scratch_(scratch),
        state_(state) {}

  const graph::Node& node() const override { return outer_.node(); }
  int32_t node_id() const override { return outer_.node_id(); }
  int64_t opset() const override { return outer_.opset(); }
  size_t input_count() const override { return refs_.inputs; }
  size_t output_count() const override { return refs_.outputs; }
  const graph::TensorRef* input_or_null(size_t i) const override {
    return i < refs_.inputs && refs_.in_present[i] != 0 ? &refs_.in[i] : nullptr;
  }
  graph::TensorRef* output_or_null(size_t i) override {
    return i < refs_.outputs && refs_.out_present[i] != 0 ? &refs_.out[i] : nullptr;
  }
  std::span<std::byte> workspace() override { return scratch_; }
  int threads() const override { return outer_.threads(); }
  graph::KernelState* state() const override { return state_; }
  void run_subgraph(std::string_view attribute, std::span<const graph::TensorRef> inputs,
                    std::span<graph::TensorRef> outputs) override;
  void set_output_extents(size_t i, std::span<const int64_t> extents) override;

  const graph::TensorRef& float32_output(size_t i) const { return refs_.out[i]; }

 private:
  const graph::KernelContext& outer_;
  graph::KernelContext* mutable_outer_;  // null while preparing
  Refs refs_;
  std::span<std::byte> scratch_;
  graph::KernelState* state_;
};

bool has_16bit(const graph::KernelContext& ctx);

// Prepares the float32 kernel for a 16-bit node: the constants' copies, then `inner` on the view.
std::unique_ptr<graph::KernelState> prepare(const graph::KernelContext& ctx, graph::PrepareFn inner,
                                            uint32_t constant_inputs);
// Runs the float32 kernel `inner` for a 16-bit node, converting in and out.
void run(graph::KernelContext& ctx, graph::KernelFn inner);
uint64_t workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                   const std::vector<graph::ConcreteTensor>& out, graph::WorkspaceFn inner,
                   uint32_t constant_inputs);
uint64_t packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                const std::vector<graph::ConcreteTensor>& out, const std::vector<bool>& constant,
                graph::PackedFn inner);

template <graph::KernelFn kInner>
void kernel(graph::KernelContext& ctx) {
  if (!has_16bit(ctx)) return kInner(ctx);
  run(ctx, kInner);
}

template <graph::PrepareFn kInner, uint32_t kConstantInputs>
std::unique_ptr<graph::KernelState> prepare_hook(const graph::KernelContext& ctx) {
  if (!has_16bit(ctx)) return kInner != nullptr ? kInner(ctx) : nullptr;
  return prepare(ctx, kInner, kConstantInputs);
}

template <graph::WorkspaceFn kInner, uint32_t kConstantInputs>
uint64_t workspace_hook(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                        const std::vector<graph::ConcreteTensor>& out) {
  return workspace(node, in, out, kInner, kConstantInputs);
}

template <graph::PackedFn kInner>
uint64_t packed_hook(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                     const std::vector<graph::ConcreteTensor>& out,
                     const std::vector<bool>& constant) {
  return packed(node, in, out, constant, kInner);
}

}  // namespace through_float32_detail

// After the kernel of a node whose outputs are float32 carriers (graph/carry_float32.hpp:
// Node::rounded_outputs), rounds each of them in place into Node::rounds_to, as the node's 16-bit
// kernel rounds what it stores. The runtime calls it after every such step.
void round_carried_outputs(graph::KernelContext& ctx);

// Sets `row`'s kernel, prepare, workspace and packed hooks to the float32 ones given, running
// float16 and bfloat16 nodes through float32 copies; adds the 16-bit floats to the row's kernel
// and epilogue dtypes where it runs float32 (the float32 kernel applies the epilogues before the
// one rounding).
template <graph::KernelFn kKernel, graph::PrepareFn kPrepare, graph::WorkspaceFn kWorkspace,
          graph::PackedFn kPacked, uint32_t kConstantInputs>
void through_float32(graph::OpSchema& row) {
  namespace d = through_float32_detail;
  row.kernel = d::kernel<kKernel>;
  row.prepare = d::prepare_hook<kPrepare, kConstantInputs>;
  row.workspace = d::workspace_hook<kWorkspace, kConstantInputs>;
  row.packed = d::packed_hook<kPacked>;
  // A 16-bit input that is a float32 carrier is read as it is, a carried output rounded after.
  row.float32_carriers = graph::Float32Carriers::per_tensor;
  const DTypeSet sixteen{DType::float16, DType::bfloat16};
  if (row.kernel_dtypes.contains(DType::float32)) row.kernel_dtypes = row.kernel_dtypes | sixteen;
  if (row.epilogue_dtypes.contains(DType::float32)) {
    row.epilogue_dtypes = row.epilogue_dtypes | sixteen;
  }
}

}  // namespace footprint::runtime::kernels
