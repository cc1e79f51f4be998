// Matrix products: Gemm, MatMul (numpy semantics: 1-D promotion, broadcast batch dims), Einsum
// equations and Det. The integer and quantized MatMuls, whose extents are MatMul's, are rows of
// integer_products.cpp.
#include <optional>
#include <string>

#include "families.hpp"
#include "footprint/graph/ops/einsum_equation.hpp"
#include "footprint/graph/ops/matmul_nbits.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// The contracted extents must agree when both are known.
void check_inner(const InferContext& ctx, const Dim& a, const Dim& b) {
  const auto x = a.value();
  const auto y = b.value();
  if (x && y && *x != *y) {
    ctx.fail("inner dims " + std::to_string(*x) + " and " + std::to_string(*y) + " differ");
  }
}

}  // namespace

Shape matmul_shape(const InferContext& ctx, const Shape& a, const Shape& b) {
  if (!a.ranked || !b.ranked) return Shape::unranked();
  if (a.rank() == 0 || b.rank() == 0) ctx.fail("MatMul operands must not be scalars");
  // 1-D operands are promoted to matrices and the added dim removed from the result.
  std::vector<Dim> da = a.dims;
  std::vector<Dim> db = b.dims;
  if (a.rank() == 1) da.insert(da.begin(), Dim::known(1));
  if (b.rank() == 1) db.push_back(Dim::known(1));
  check_inner(ctx, da.back(), db[db.size() - 2]);
  const Shape batch_a = ranked(std::vector<Dim>(da.begin(), da.end() - 2));
  const Shape batch_b = ranked(std::vector<Dim>(db.begin(), db.end() - 2));
  std::vector<Dim> out = broadcast(ctx, {&batch_a, &batch_b}).dims;
  if (a.rank() > 1) out.push_back(da[da.size() - 2]);
  if (b.rank() > 1) out.push_back(db.back());
  return ranked(std::move(out));
}

namespace {

void infer_matmul(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, ctx.input(0).dtype, matmul_shape(ctx, ctx.input(0).shape, ctx.input(1).shape));
}

// footprint::MatMulAdd (graph::fuse's MatMul then Add): A B + C, C of the output's last extent
// (leading ones allowed), added to every row.
void infer_matmul_add(const InferContext& ctx, InferResult& r) {
  const Shape y = matmul_shape(ctx, ctx.input(0).shape, ctx.input(1).shape);
  const Shape& c = ctx.input(2).shape;
  if (c.ranked && y.ranked && !y.dims.empty() && !c.dims.empty()) {
    const auto cn = c.dims.back().value();
    const auto yn = y.dims.back().value();
    if (cn && yn && *cn != *yn) {
      ctx.fail("C's last extent " + std::to_string(*cn) + " is not the output's " +
               std::to_string(*yn));
    }
  }
  set_output(r, 0, ctx.input(0).dtype, y);
}

// footprint::Attention (graph::fuse's MatMul, scale, mask, Softmax, MatMul): softmax(Q Kt scale,
// masked) V; its output is the second product's.
void infer_attention(const InferContext& ctx, InferResult& r) {
  const Shape scores = matmul_shape(ctx, ctx.input(0).shape, ctx.input(1).shape);
  set_output(r, 0, ctx.input(0).dtype, matmul_shape(ctx, scores, ctx.input(2).shape));
}

// onnxruntime's MatMulIntegerToFloat (A, B, a_scale, b_scale[, a_zp, b_zp, bias]): the product's
// shape, in the scales' float dtype.
void infer_matmul_integer_to_float(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, ctx.input(2).dtype, matmul_shape(ctx, ctx.input(0).shape, ctx.input(1).shape));
}

// onnxruntime's DynamicQuantizeMatMul (A float, B int8, b_scale[, b_zp, bias]): A's dtype.
void infer_dynamic_quantize_matmul(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, ctx.input(0).dtype, matmul_shape(ctx, ctx.input(0).shape, ctx.input(1).shape));
}

// onnxruntime's MatMulNBits (A [..., K], B packed [N, K / block_size, block_size * bits / 8],
// scales[, zero_points, g_idx, bias]; attributes K and N), decoded and checked by
// MatMulNBitsWeights (graph/ops/matmul_nbits.hpp), which the kernel takes too: A's dtype,
// [..., N].
void infer_matmul_nbits(const InferContext& ctx, InferResult& r) {
  std::vector<NBitsOperand> operands(ctx.input_count());
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!ctx.has_input(i)) continue;
    operands[i].dtype = ctx.input(i).dtype;
    if (ctx.input(i).shape.ranked) operands[i].extents = Extents::of(ctx.input(i).shape);
  }
  const auto w = MatMulNBitsWeights::decode(ctx.node, ctx.node_id, operands);
  const TensorType& a = ctx.input(0);
  if (!a.shape.ranked) {
    set_output(r, 0, a.dtype, Shape::unranked());
    return;
  }
  Shape out = a.shape;
  out.dims.back() = Dim::known(w.n);
  set_output(r, 0, a.dtype, std::move(out));
}

void infer_gemm(const InferContext& ctx, InferResult& r) {
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  if (!a.shape.ranked || !b.shape.ranked) {
    set_output(r, 0, a.dtype, unknown_dims(2));
    return;
  }
  if (a.shape.rank() != 2 || b.shape.rank() != 2) {
    ctx.fail("Gemm operands must be matrices, got " + a.shape.to_string() + " and " +
             b.shape.to_string());
  }
  const bool ta = ctx.attr_int("transA", 0) != 0;
  const bool tb = ctx.attr_int("transB", 0) != 0;
  const Dim& m = a.shape.dims[ta ? 1 : 0];
  const Dim& ka = a.shape.dims[ta ? 0 : 1];
  const Dim& kb = b.shape.dims[tb ? 1 : 0];
  const Dim& n = b.shape.dims[tb ? 0 : 1];
  check_inner(ctx, ka, kb);
  set_output(r, 0, a.dtype, ranked({m, n}));
}

// onnxruntime's QGemm (A, a_scale, a_zp, B, b_scale, b_zp[, C, y_scale, y_zp]): Gemm's shape over
// A, B and C; quantized to y_zp's dtype when y_scale is given, else float as the scales.
void infer_qgemm(const InferContext& ctx, InferResult& r) {
  infer_gemm(with_inputs(ctx, {0, 3, 6}), r);
  const DType out = ctx.has_input(7) ? (ctx.has_input(8) ? ctx.input(8).dtype : DType::uint8)
                                     : ctx.input(1).dtype;
  set_output(r, 0, out, r.outputs[0].shape);
}

void infer_einsum(const InferContext& ctx, InferResult& r) {
  std::vector<size_t> ranks;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const Shape& s = ctx.input(i).shape;
    if (!s.ranked) {
      set_output(r, 0, ctx.input(0).dtype, Shape::unranked());
      return;
    }
    ranks.push_back(s.rank());
  }
  const EinsumEquation e = EinsumEquation::resolve(
      ctx.attr_string("equation", ""), ranks, [&](const std::string& what) { ctx.fail(what); });
  // Each letter's extent: its axes' extents, a 1 broadcasting.
  std::vector<std::optional<Dim>> extent(e.letters);
  for (size_t i = 0; i < e.operands.size(); ++i) {
    const Shape& s = ctx.input(i).shape;
    for (size_t axis = 0; axis < e.operands[i].size(); ++axis) {
      std::optional<Dim>& x = extent[e.operands[i][axis]];
      x = x ? broadcast_dim(ctx, *x, s.dims[axis]) : s.dims[axis];
    }
  }
  std::vector<Dim> dims;
  for (const size_t letter : e.output) dims.push_back(extent[letter].value_or(Dim::known(1)));
  set_output(r, 0, ctx.input(0).dtype, ranked(std::move(dims)));
}

// Det: one determinant per matrix of the trailing two dims.
void infer_det(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked || x.shape.rank() < 2) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  set_output(r, 0, x.dtype, ranked(std::vector<Dim>(x.shape.dims.begin(), x.shape.dims.end() - 2)));
}

}  // namespace

void register_matmul(OpRegistry& r) {
  r.add(op("Gemm", 2, 3, infer_gemm));
  r.add(op("MatMul", 2, 2, infer_matmul));
  OpSchema matmul_add = op("MatMulAdd", 3, 3, infer_matmul_add);
  matmul_add.domain = "footprint";
  r.add(matmul_add);
  // Inputs: Q, Kt, V, an additive mask, a keep condition and the fill where it is false.
  OpSchema attention = op("Attention", 3, 6, infer_attention);
  attention.domain = "footprint";
  r.add(attention);
  r.add(contrib(op("QGemm", 6, 9, infer_qgemm)));
  r.add(contrib(op("MatMulIntegerToFloat", 4, 7, infer_matmul_integer_to_float)));
  r.add(contrib(op("DynamicQuantizeMatMul", 3, 5, infer_dynamic_quantize_matmul)));
  r.add(contrib(op("MatMulNBits", 3, 6, infer_matmul_nbits)));
  r.add(op("Einsum", 1, V, infer_einsum));
  r.add(op("Det", 1, 1, infer_det));
}

}  // namespace footprint::graph::ops
