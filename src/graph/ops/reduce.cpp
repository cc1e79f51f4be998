// Reductions (Reduce*, ArgMax/ArgMin) and ops that select along an axis (TopK), plus CumSum.
//
// Reduce* axes come from the attribute or, from opset 13 (ReduceSum) / 18 (the others), from the
// second input. Small known inputs are reduced too (ReduceProd of a shape is an element count).
#include <algorithm>

#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// Whether the op takes its axes as an input at this opset.
bool axes_from_input(const InferContext& ctx) {
  return ctx.node.op_type == "ReduceSum" ? ctx.opset >= 13 : ctx.opset >= 18;
}

// The reduced dims as a mask over the input's rank; nullopt when the axes are not known.
std::optional<std::vector<bool>> reduced_mask(const InferContext& ctx, size_t rank, bool& noop) {
  std::optional<std::vector<int64_t>> axes;
  noop = false;
  if (axes_from_input(ctx)) {
    if (ctx.has_input(1)) {
      axes = ctx.input_ints(1);
      const Shape& s = ctx.input(1).shape;
      // A known-empty axes input is as good as known.
      if (!axes && s.ranked && s.rank() == 1 && s.dims[0].value() == 0) axes.emplace();
      if (!axes) return std::nullopt;
    }
  } else {
    axes = ctx.attr_ints("axes");
  }
  std::vector<bool> mask(rank, false);
  if (!axes || axes->empty()) {
    noop = ctx.attr_int("noop_with_empty_axes", 0) != 0;
    if (!noop) std::fill(mask.begin(), mask.end(), true);
    return mask;
  }
  for (size_t a : normalize_axes(ctx, *axes, rank)) mask[a] = true;
  return mask;
}

std::optional<KnownValue> reduce_known(std::string_view op, const KnownValue& v,
                                       const std::vector<bool>& mask, bool keep) {
  const bool ints = v.is_integer() && !is_real(v.dtype);
  if (op != "ReduceSum" && op != "ReduceProd" && op != "ReduceMax" && op != "ReduceMin") {
    return std::nullopt;
  }
  std::vector<int64_t> out_dims;
  std::vector<int64_t> kept_dims;  // the output's dims with reduced ones as 1
  for (size_t d = 0; d < v.dims.size(); ++d) {
    kept_dims.push_back(mask[d] ? 1 : v.dims[d]);
    if (!mask[d] || keep) out_dims.push_back(kept_dims.back());
  }
  const std::vector<int64_t> in_strides = strides_of(v.dims);
  const std::vector<int64_t> out_strides = strides_of(kept_dims);
  const auto out_numel = checked_numel(kept_dims.data(), kept_dims.size());
  if (!out_numel) return std::nullopt;
  std::vector<std::optional<Dim>> acc_i(*out_numel);
  std::vector<std::optional<double>> acc_r(*out_numel);
  for (size_t n = 0; n < v.numel(); ++n) {
    int64_t o = 0;
    for (size_t d = 0; d < v.dims.size(); ++d) {
      const int64_t idx = (static_cast<int64_t>(n) / in_strides[d]) % v.dims[d];
      if (!mask[d]) o += idx * out_strides[d];
    }
    if (ints) {
      auto& a = acc_i[static_cast<size_t>(o)];
      const Dim& x = v.ints[n];
      a = !a                   ? x
          : op == "ReduceSum"  ? *a + x
          : op == "ReduceProd" ? *a * x
          : op == "ReduceMax"  ? max(*a, x)
                               : min(*a, x);
    } else {
      auto& a = acc_r[static_cast<size_t>(o)];
      const double x = v.reals[n];
      a = !a                   ? x
          : op == "ReduceSum"  ? *a + x
          : op == "ReduceProd" ? *a * x
          : op == "ReduceMax"  ? std::max(*a, x)
                               : std::min(*a, x);
    }
  }
  KnownValue out;
  out.dtype = v.dtype;
  out.dims = out_dims;
  for (size_t i = 0; i < *out_numel; ++i) {
    // An empty reduction: the identity of the op (max/min of nothing is not computed).
    if (ints) {
      if (!acc_i[i] && (op == "ReduceMax" || op == "ReduceMin")) return std::nullopt;
      out.ints.push_back(acc_i[i].value_or(Dim::known(op == "ReduceProd" ? 1 : 0)));
      if (out.ints.back().is_unknown()) return std::nullopt;
    } else {
      if (!acc_r[i] && (op == "ReduceMax" || op == "ReduceMin")) return std::nullopt;
      out.reals.push_back(acc_r[i].value_or(op == "ReduceProd" ? 1.0 : 0.0));
    }
  }
  return out;
}

void infer_reduce(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const bool keep = ctx.attr_int("keepdims", 1) != 0;
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  bool noop = false;
  const auto mask = reduced_mask(ctx, x.shape.rank(), noop);
  if (!mask) {
    // Axes known only by their count: without keepdims, the rank drops by that much.
    const Shape& a = ctx.input(1).shape;
    const bool counted = a.ranked && a.rank() == 1 && a.dims[0].value() &&
                         static_cast<size_t>(*a.dims[0].value()) <= x.shape.rank();
    set_output(r, 0, x.dtype,
               keep      ? unknown_dims(x.shape.rank())
               : counted ? unknown_dims(x.shape.rank() - static_cast<size_t>(*a.dims[0].value()))
                         : Shape::unranked());
    return;
  }
  std::vector<Dim> dims;
  for (size_t d = 0; d < x.shape.rank(); ++d) {
    if (!(*mask)[d]) {
      dims.push_back(x.shape.dims[d]);
    } else if (keep) {
      dims.push_back(Dim::known(1));
    }
  }
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
  if (const KnownValue* v = ctx.value(0)) {
    if (noop) {
      set_value(r, 0, *v);
    } else if (auto out = reduce_known(ctx.node.op_type, *v, *mask, keep)) {
      set_value(r, 0, std::move(*out));
    }
  }
}

// ArgMax / ArgMin: one axis, int64 indices.
void infer_arg_reduce(const InferContext& ctx, InferResult& r) {
  const Shape& x = ctx.input(0).shape;
  if (!x.ranked) {
    set_output(r, 0, DType::int64, Shape::unranked());
    return;
  }
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  std::vector<Dim> dims = x.dims;
  if (ctx.attr_int("keepdims", 1) != 0) {
    dims[axis] = Dim::known(1);
  } else {
    dims.erase(dims.begin() + static_cast<long>(axis));
  }
  set_output(r, 0, DType::int64, ranked(std::move(dims)));
}

// TopK: values and int64 indices with the axis cut to K (an input from opset 10).
void infer_topk(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  Shape out = x.shape;
  if (x.shape.ranked) {
    const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.shape.rank());
    Dim k = Dim::unknown();
    if (ctx.opset >= 10 || ctx.has_input(1)) {
      if (const auto v = ctx.has_input(1) ? dims_from_value(ctx.value(1)) : std::nullopt;
          v && v->size() == 1) {
        k = (*v)[0];
      }
    } else {
      k = Dim::known(ctx.attr_int("k", 0));
    }
    // K comes from the data (a runtime input): at most the axis, which the op requires.
    out.dims[axis] = k.is_unknown() ? data_dependent(ctx, x.shape.dims[axis]) : k;
  }
  set_output(r, 0, x.dtype, out);
  set_output(r, 1, DType::int64, out);
}

void infer_same(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
}

}  // namespace

void register_reduce(OpRegistry& r) {
  for (std::string_view name :
       {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    r.add(op(name, 1, 2, infer_reduce));
  }
  r.add(op("ArgMax", 1, 1, infer_arg_reduce));
  r.add(op("ArgMin", 1, 1, infer_arg_reduce));
  r.add(op("TopK", 1, 2, infer_topk, 2, 2));
  r.add(op("CumSum", 2, 2, infer_same));
}

}  // namespace footprint::graph::ops
