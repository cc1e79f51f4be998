// onnxruntime's MatMulNBits (com.microsoft; its row and inference in graph/ops/matmul.cpp, the
// operands decoded by graph/ops/matmul_nbits.hpp): Y = A x W^T (+ bias), W [N, K] dequantized
// block-wise from B's 2-, 4- or 8-bit codes.
//
// The weights are dequantized once, when preparing, into float32 [K, N] that the state keeps
// (OpSchema::packed counts it; B, scales, zero points and g_idx are then released, the kernel
// reading only the copy), and MatMul's float32 kernel (float_matmul.hpp) runs A times them, the
// bias as MatMulAdd's. Where that kernel packs B into a layout of its own (a product it runs as
// a 1x1 convolution), the float32 copy is dropped once packed. So the dequantization is exact
// float32 arithmetic, (code - zero point) x scale, and the product is oneDNN's float32 matmul,
// whatever accuracy_level asks (0 and 1 ask for float32; 2 to 4 allow less, never require it).
// A direct 4-bit kernel would read 8x fewer weight bytes; measured on the quantized zoo's int4
// models (docs/RUNTIME.md, "MatMulNBits") the float32 path already runs at onnxruntime's speed or
// better there, so the copy is the simpler choice, paid for in memory (8x the 4-bit weights).
#include "footprint/graph/ops/matmul_nbits.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "dnnl_util.hpp"
#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "float_matmul.hpp"
#include "footprint/runtime/tensor.hpp"
#include "through_float32.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::ops::MatMulNBitsWeights;
using graph::ops::NBitsOperand;
using graph::ops::NBitsZeroPoints;
using Input = MatMulNBitsWeights::Input;

// The decoded weights and the float32 product's state.
class NBitsState final : public graph::KernelState {
 public:
  uint64_t owned_bytes() const override {
    return weights.size() + (inner != nullptr ? inner->owned_bytes() : 0);
  }

  MatMulNBitsWeights w;
  std::vector<int64_t> weight_dims;  // [K, N]
  AlignedBuffer weights;             // float32 [K, N]; empty once `inner` packed its own copy
  std::unique_ptr<graph::KernelState> inner;
};

MatMulNBitsWeights decode(const graph::Node& node, int32_t node_id, const Extents& e) {
  std::vector<NBitsOperand> operands(e.in.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!e.has_in(i)) continue;
    operands[i].dtype = e.in_dtype[i];
    operands[i].extents = graph::ops::Extents::of(std::span<const int64_t>(e.in[i]));
  }
  return MatMulNBitsWeights::decode(node, node_id, operands);
}

// The float32 product MatMul's kernel runs: A, W [K, N], the bias.
std::vector<graph::ConcreteTensor> product_inputs(const MatMulNBitsWeights& w,
                                                  const std::vector<graph::ConcreteTensor>& in) {
  std::vector<graph::ConcreteTensor> p(3);
  p[0] = in[Input::a];
  p[1] = {DType::float32, {w.k, w.n}};
  if (w.has_bias) p[2] = in[Input::bias];
  return p;
}

// Decoded from the hooks' concrete tensors; nullopt where the node is not one the kernel runs
// (it then fails when preparing, naming the node).
std::optional<MatMulNBitsWeights> decode_hook(const graph::Node& node,
                                              const std::vector<graph::ConcreteTensor>& in,
                                              const std::vector<graph::ConcreteTensor>& out) {
  try {
    const Extents e = extents_of(in, out);
    if (!e.has_in(Input::a) || e.in_dtype[Input::a] != DType::float32) return std::nullopt;
    return decode(node, -1, e);
  } catch (const Error&) {
    return std::nullopt;
  }
}

uint64_t nbits_workspace(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                         const std::vector<graph::ConcreteTensor>& out) {
  const auto w = decode_hook(node, in, out);
  return w ? float_matmul_workspace(node, product_inputs(*w, in), out) : 0;
}

// The float32 weights, or the copy the product packs from them instead.
uint64_t nbits_packed(const graph::Node& node, const std::vector<graph::ConcreteTensor>& in,
                      const std::vector<graph::ConcreteTensor>& out,
                      const std::vector<bool>& /*constant*/) {
  const auto w = decode_hook(node, in, out);
  if (!w) return 0;
  const uint64_t inner =
      float_matmul_packed(node, product_inputs(*w, in), out, {false, true, false});
  return inner > 0 ? inner : static_cast<uint64_t>(w->k * w->n) * sizeof(float);
}

std::string number_text(double v) {
  std::ostringstream s;  // shortest: "0", "-0.5", "nan"
  s << v;
  return s.str();
}

// W [K, N] from B's codes, the zero points and the scales (all constants, checked here).
void dequantize(const graph::KernelContext& ctx, const MatMulNBitsWeights& w, float* out) {
  const auto fail_input = [&](size_t i, const std::string& what) {
    ctx.fail(std::string(MatMulNBitsWeights::input_name(i)) + " " + what);
  };
  const auto* b = ctx.input(Input::b).as<const uint8_t>();
  const auto* scales = ctx.input(Input::scales).as<const float>();
  const size_t scale_count = static_cast<size_t>(w.n * w.blocks);
  for (size_t i = 0; i < scale_count; ++i) {
    // Zero and negative scales are a block's own: onnxruntime's symmetric quantizer picks the
    // sign that maps the block's largest magnitude to -2^(bits - 1) (the quantized zoo's GPT-2
    // has them), and an all-zero block may have a zero scale. Only a scale that is no number
    // makes no weight.
    if (!std::isfinite(scales[i])) {
      fail_input(Input::scales, "element " + std::to_string(i) + " is " + number_text(scales[i]) +
                                    ": a scale must be finite");
    }
  }
  const int32_t* g_idx = w.has_g_idx ? ctx.input(Input::g_idx).as<const int32_t>() : nullptr;
  if (g_idx != nullptr) {
    for (int64_t k = 0; k < w.k; ++k) {
      if (g_idx[k] < 0 || g_idx[k] >= w.blocks) {
        fail_input(Input::g_idx, "element " + std::to_string(k) + " is " +
                                     std::to_string(g_idx[k]) + ", not a block in [0, " +
                                     std::to_string(w.blocks) + ")");
      }
    }
  }
  const auto* packed_zero = w.zero_points_form == NBitsZeroPoints::packed
                                ? ctx.input(Input::zero_points).as<const uint8_t>()
                                : nullptr;
  const auto* float_zero = w.zero_points_form == NBitsZeroPoints::unpacked
                               ? ctx.input(Input::zero_points).as<const float>()
                               : nullptr;
  const int64_t row_bytes = w.blocks * w.blob_bytes;
  for (int64_t n = 0; n < w.n; ++n) {
    const uint8_t* row = b + n * row_bytes;
    for (int64_t k = 0; k < w.k; ++k) {
      const int64_t blk = g_idx != nullptr ? g_idx[k] : k / w.block_size;
      float zero = static_cast<float>(w.default_zero_point());
      if (packed_zero != nullptr) {
        zero = static_cast<float>(w.code(packed_zero + n * w.zero_point_row_bytes(), blk));
      } else if (float_zero != nullptr) {
        zero = float_zero[n * w.blocks + blk];
      }
      out[k * w.n + n] = (static_cast<float>(w.code(row, k)) - zero) * scales[n * w.blocks + blk];
    }
  }
}

// The node as MatMul's float32 kernel sees it: A, the state's W, the bias; Y.
through_float32_detail::Refs product_refs(const graph::KernelContext& ctx, const NBitsState& s) {
  auto& outputs =
      const_cast<graph::KernelContext&>(ctx);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  through_float32_detail::Refs r;
  r.inputs = 3;
  r.outputs = 1;
  r.in[0] = ctx.input(Input::a);
  r.in_present[0] = 1;
  r.in[1] = graph::TensorRef{DType::float32, s.weight_dims, s.weights.data()};
  r.in_present[1] = 1;
  if (s.w.has_bias) {
    r.in[2] = ctx.input(Input::bias);
    r.in_present[2] = 1;
  }
  r.out[0] = outputs.output(0);
  r.out_present[0] = 1;
  return r;
}

std::unique_ptr<graph::KernelState> nbits_prepare(const graph::KernelContext& ctx) {
  const Extents e = extents_of(ctx);
  auto s = std::make_unique<NBitsState>();
  s->w = decode(ctx.node(), ctx.node_id(), e);
  const MatMulNBitsWeights& w = s->w;
  if (e.in_dtype[Input::a] != DType::float32) {
    ctx.fail("A (input 0) is " + dtype_label(e.in_dtype[Input::a]) + ": the kernel runs float32");
  }
  for (const size_t i : {Input::b, Input::scales, Input::zero_points, Input::g_idx}) {
    const graph::TensorRef* t = ctx.input_or_null(i);
    if (t != nullptr && t->data == nullptr) {
      ctx.fail(std::string(MatMulNBitsWeights::input_name(i)) +
               " must be a constant: the weights are dequantized once, when preparing");
    }
  }
  s->weight_dims = {w.k, w.n};
  s->weights = AlignedBuffer(static_cast<size_t>(w.k * w.n) * sizeof(float));
  dequantize(ctx, w, reinterpret_cast<float*>(s->weights.data()));
  const through_float32_detail::Float32View view(ctx, nullptr, product_refs(ctx, *s), {}, nullptr);
  s->inner = float_matmul_prepare(view);
  // A product run as a convolution packed W into its own layout and reads only that.
  if (s->inner != nullptr && s->inner->owned_bytes() > 0) s->weights = AlignedBuffer();
  return s;
}

void nbits_run(graph::KernelContext& ctx) {
  auto* s = dynamic_cast<NBitsState*>(ctx.state());
  if (s == nullptr) ctx.fail("the kernel's state was not prepared");
  through_float32_detail::Float32View view(ctx, &ctx, product_refs(ctx, *s), ctx.workspace(),
                                           s->inner.get());
  float_matmul_run(view);
}

}  // namespace

void register_matmul_nbits(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("com.microsoft", "MatMulNBits");
  // The kernel reads only the dequantized copy: B, scales, zero points and g_idx go once read.
  row.packed_inputs =
      (1U << Input::b) | (1U << Input::scales) | (1U << Input::zero_points) | (1U << Input::g_idx);
  row.kernel_dtypes = DTypeSet{DType::float32};
  // A float16 or bfloat16 node runs the float32 kernel on float32 copies: its scales, float zero
  // points and bias (constants) converted once when preparing, A and Y in the step's scratch.
  constexpr uint32_t kConstants =
      (1U << Input::scales) | (1U << Input::zero_points) | (1U << Input::bias);
  through_float32<nbits_run, nbits_prepare, nbits_workspace, nbits_packed, kConstants>(row);
  // A row of A makes the same row of Y, as in MatMul's kernel, which runs it.
  row.rows_at_bound = true;
}

}  // namespace footprint::runtime::kernels
