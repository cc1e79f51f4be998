#include "infer_util.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "footprint/core/float16.hpp"

namespace footprint::graph::ops {

OpSchema op(std::string_view name, int min_in, int max_in, InferFn infer, int min_out,
            int max_out) {
  OpSchema s;
  s.op_type = name;
  s.min_inputs = min_in;
  s.max_inputs = max_in;
  s.min_outputs = min_out;
  s.max_outputs = max_out;
  s.infer = infer;
  return s;
}

OpSchema contrib(OpSchema row) {
  row.domain = kMicrosoftDomain;
  return row;
}

InferContext with_inputs(const InferContext& ctx, const std::vector<size_t>& which) {
  InferContext sub = ctx;
  sub.inputs.clear();
  sub.input_values.clear();
  for (const size_t i : which) {
    sub.inputs.push_back(ctx.has_input(i) ? ctx.inputs[i] : nullptr);
    sub.input_values.push_back(ctx.value(i));
  }
  return sub;
}

OpSchema view(std::string_view name, int min_in, int max_in, InferFn infer) {
  OpSchema s = op(name, min_in, max_in, infer);
  s.output_view_of = 0;
  return s;
}

void set_output(InferResult& r, size_t i, DType dtype, Shape shape) {
  if (i >= r.outputs.size()) return;
  r.outputs[i].dtype = dtype;
  r.outputs[i].shape = std::move(shape);
}

void set_value(InferResult& r, size_t i, KnownValue v) {
  if (i >= r.outputs.size()) return;
  set_output(r, i, v.dtype, Shape::of(v.dims));
  if (v.numel() <= KnownValue::kMaxElements && i < r.values.size()) r.values[i] = std::move(v);
}

void same_as_input(const InferContext& ctx, InferResult& r, size_t out, size_t in) {
  if (!ctx.has_input(in)) return;
  set_output(r, out, ctx.input(in).dtype, ctx.input(in).shape);
}

Shape ranked(std::vector<Dim> dims) {
  Shape s;
  s.ranked = true;
  s.dims = std::move(dims);
  return s;
}

Shape channels_last(Shape s) {
  if (s.ranked && s.rank() == 4) std::rotate(s.dims.begin() + 1, s.dims.begin() + 2, s.dims.end());
  return s;
}

Shape channels_first(Shape s) {
  if (s.ranked && s.rank() == 4) std::rotate(s.dims.begin() + 1, s.dims.end() - 1, s.dims.end());
  return s;
}

namespace {

// infer on input views first, first + step, ... (before `end`) made NCHW, its outputs made
// channels-last again.
void infer_on_nchw_views(const InferContext& ctx, InferResult& r, InferFn infer, size_t first,
                         size_t step, size_t end) {
  std::vector<TensorType> plain_inputs;
  plain_inputs.reserve(ctx.input_count());  // the views' addresses stay
  InferContext plain = ctx;
  for (size_t i = first; i < std::min(end, ctx.input_count()); i += step) {
    if (!ctx.has_input(i)) continue;
    TensorType x = ctx.input(i);
    if (!x.shape.ranked || x.shape.rank() != 4) {
      ctx.fail("reads channels-last tensors of rank 4, not " + x.shape.to_string());
    }
    x.shape = channels_first(std::move(x.shape));
    plain_inputs.push_back(std::move(x));
    plain.inputs[i] = &plain_inputs.back();
  }
  infer(plain, r);
  for (TensorType& out : r.outputs) out.shape = channels_last(std::move(out.shape));
}

}  // namespace

void infer_channels_last(const InferContext& ctx, InferResult& r, InferFn infer, size_t inputs) {
  infer_on_nchw_views(ctx, r, infer, 0, 1, inputs);
}

void infer_channels_last(const InferContext& ctx, InferResult& r, InferFn infer, size_t first,
                         size_t step) {
  infer_on_nchw_views(ctx, r, infer, first, step, ctx.input_count());
}

Shape unknown_dims(size_t rank) {
  return ranked(std::vector<Dim>(rank));
}

size_t normalize_axis(const InferContext& ctx, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  }
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

std::vector<size_t> normalize_axes(const InferContext& ctx, const std::vector<int64_t>& axes,
                                   size_t rank) {
  std::vector<size_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) out.push_back(normalize_axis(ctx, a, rank));
  return out;
}

Dim data_dependent(const InferContext& ctx, const Dim& bound, std::string_view part) {
  std::string origin = ctx.node.label(ctx.node_id);
  if (!part.empty()) origin.append(" ").append(part);
  return Dim::bounded(bound, origin);
}

Dim broadcast_dim(const InferContext& ctx, const Dim& a, const Dim& b) {
  const auto x = a.value();
  const auto y = b.value();
  if (x && *x == 1) return b;
  if (y && *y == 1) return a;
  if (x && y) {
    if (*x != *y) {
      ctx.fail("dims " + std::to_string(*x) + " and " + std::to_string(*y) + " do not broadcast");
    }
    return a;
  }
  // A known extent other than 1 is what the other must be (or broadcast from 1 to).
  if (x) return a;
  if (y) return b;
  if (a == b) return a;
  if (a.is_unknown() || b.is_unknown()) return Dim::unknown();
  // Two symbols: the result is whichever is not 1, i.e. the larger.
  return max(a, b);
}

Shape broadcast(const InferContext& ctx, const std::vector<const Shape*>& shapes) {
  size_t rank = 0;
  for (const Shape* s : shapes) {
    if (!s->ranked) return Shape::unranked();
    rank = std::max(rank, s->rank());
  }
  std::vector<Dim> dims(rank, Dim::known(1));
  for (const Shape* s : shapes) {
    const size_t offset = rank - s->rank();
    for (size_t i = 0; i < s->rank(); ++i) {
      dims[offset + i] = broadcast_dim(ctx, dims[offset + i], s->dims[i]);
    }
  }
  return ranked(std::move(dims));
}

std::optional<std::vector<int64_t>> ints_from_input_or_attr(const InferContext& ctx, size_t input,
                                                            std::string_view attr) {
  if (ctx.has_input(input)) return ctx.input_ints(input);
  return ctx.attr_ints(attr);
}

std::optional<std::vector<Dim>> dims_from_value(const KnownValue* v) {
  if (v == nullptr || !v->is_integer() || v->dims.size() > 1) return std::nullopt;
  return v->ints;
}

KnownValue known_ints(DType dtype, std::vector<int64_t> dims, std::vector<Dim> ints) {
  KnownValue v;
  v.dtype = dtype;
  v.dims = std::move(dims);
  v.ints = std::move(ints);
  return v;
}

KnownValue known_reals(DType dtype, std::vector<int64_t> dims, std::vector<double> reals) {
  KnownValue v;
  v.dtype = dtype;
  v.dims = std::move(dims);
  v.reals = std::move(reals);
  return v;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::optional<std::vector<int64_t>> broadcast_indices(const std::vector<int64_t>& out,
                                                      const std::vector<int64_t>& in) {
  if (in.size() > out.size()) return std::nullopt;
  const size_t offset = out.size() - in.size();
  const std::vector<int64_t> in_strides = strides_of(in);
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != 1 && in[i] != out[offset + i]) return std::nullopt;
  }
  const auto total = checked_numel(out.data(), out.size());
  if (!total) return std::nullopt;
  std::vector<int64_t> flat(*total);
  std::vector<int64_t> index(out.size(), 0);
  for (uint64_t n = 0; n < *total; ++n) {
    int64_t f = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i] != 1) f += index[offset + i] * in_strides[i];
    }
    flat[n] = f;
    // Advance the row-major index.
    for (size_t d = out.size(); d-- > 0;) {
      if (++index[d] < out[d]) break;
      index[d] = 0;
    }
  }
  return flat;
}

std::optional<std::vector<int64_t>> broadcast_static(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

KnownValue pick(const KnownValue& src, std::vector<int64_t> dims,
                const std::vector<int64_t>& flat) {
  KnownValue v;
  v.dtype = src.dtype;
  v.dims = std::move(dims);
  const bool ints = src.is_integer() && !is_real(src.dtype);
  for (int64_t i : flat) {
    if (ints) {
      v.ints.push_back(src.ints[static_cast<size_t>(i)]);
    } else {
      v.reals.push_back(src.reals[static_cast<size_t>(i)]);
    }
  }
  return v;
}

bool is_real(DType t) {
  return dtype_traits(t).read_real != nullptr && !dtype_traits(t).is_integer();
}

bool is_integral(DType t) {
  return dtype_traits(t).is_integer() && !dtype_traits(t).packed;
}

double round_to(DType t, double x) {
  if (t == DType::float32) return static_cast<float>(x);
  if (t != DType::float16 && t != DType::bfloat16) return x;
  // Through float, as the Cast kernel converts, so a propagated value equals the computed one
  // (rounding twice can differ from rounding once next to a tie). Beyond float's range both types
  // are infinite anyway.
  const bool beyond = std::isfinite(x) && std::fabs(x) > std::numeric_limits<float>::max();
  const float f = beyond ? (x > 0 ? INFINITY : -INFINITY) : static_cast<float>(x);
  return t == DType::float16 ? float_from_half(half_from_float(f))
                             : float_from_bfloat16(bfloat16_from_float(f));
}

std::optional<KnownValue> cast_value(const KnownValue& v, DType to) {
  KnownValue out;
  out.dtype = to;
  out.dims = v.dims;
  const bool from_int = v.is_integer() && !is_real(v.dtype);
  if (is_real(to)) {
    for (size_t i = 0; i < v.numel(); ++i) {
      const auto r = v.real(i);
      if (!r) return std::nullopt;
      out.reals.push_back(round_to(to, *r));
    }
    return out;
  }
  if (!is_integral(to)) return std::nullopt;
  for (size_t i = 0; i < v.numel(); ++i) {
    if (from_int) {
      const Dim& d = v.ints[i];
      if (to == DType::boolean) {
        const auto x = d.value();
        if (!x) return std::nullopt;
        out.ints.push_back(Dim::known(*x != 0 ? 1 : 0));
      } else {
        out.ints.push_back(d);
      }
      continue;
    }
    const double r = v.reals[i];
    if (!std::isfinite(r)) return std::nullopt;
    out.ints.push_back(
        Dim::known(to == DType::boolean ? (r != 0 ? 1 : 0) : static_cast<int64_t>(std::trunc(r))));
  }
  return out;
}

}  // namespace footprint::graph::ops
