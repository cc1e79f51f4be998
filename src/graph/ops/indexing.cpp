// Ops that select, join or pad: Concat, Split, Slice, Gather / GatherElements / GatherND,
// Scatter*, Pad, and the data-dependent Compress, NonZero, Unique; ReverseSequence.
//
// Slice and Gather on small known tensors are computed, so Shape(x)[0] or Shape(x)[2:] stay
// known (and symbolic) through shape arithmetic.
#include <algorithm>
#include <cstdlib>
#include <limits>

#include "families.hpp"
#include "footprint/graph/ops/qlinear_operands.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// ---- Concat

std::optional<KnownValue> concat_known(const InferContext& ctx, size_t axis) {
  std::vector<const KnownValue*> parts;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.value(i) == nullptr) return std::nullopt;
    parts.push_back(ctx.value(i));
  }
  const KnownValue& first = *parts[0];
  KnownValue out;
  out.dtype = first.dtype;
  out.dims = first.dims;
  if (axis >= out.dims.size()) return std::nullopt;
  out.dims[axis] = 0;
  for (const KnownValue* p : parts) out.dims[axis] += p->dims[axis];
  // Row-major: for each index before the axis, each part's block after it, in order.
  const auto outer = checked_numel(first.dims.data(), axis);
  if (!outer) return std::nullopt;
  const bool ints = !is_real(first.dtype);
  for (uint64_t o = 0; o < *outer; ++o) {
    for (const KnownValue* p : parts) {
      const size_t block = p->numel() / std::max<uint64_t>(*outer, 1);
      for (size_t k = 0; k < block; ++k) {
        const size_t at = o * block + k;
        if (ints) {
          out.ints.push_back(p->ints[at]);
        } else {
          out.reals.push_back(p->reals[at]);
        }
      }
    }
  }
  return out;
}

void infer_concat(const InferContext& ctx, InferResult& r) {
  const DType dtype = ctx.input(0).dtype;
  const Shape* model = nullptr;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.input(i).shape.ranked) model = &ctx.input(i).shape;
  }
  if (model == nullptr) {
    set_output(r, 0, dtype, Shape::unranked());
    return;
  }
  const size_t rank = model->rank();
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
  std::vector<Dim> dims(rank);
  Dim sum = Dim::known(0);
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const Shape& s = ctx.input(i).shape;
    if (!s.ranked) {
      sum = Dim::unknown();
      continue;
    }
    if (s.rank() != rank) {
      ctx.fail("inputs have ranks " + std::to_string(rank) + " and " + std::to_string(s.rank()));
    }
    sum = sum + s.dims[axis];
    for (size_t d = 0; d < rank; ++d) {
      if (d == axis) continue;
      const auto have = dims[d].value();
      const auto now = s.dims[d].value();
      if (have && now && *have != *now) {
        ctx.fail("inputs differ in dim " + std::to_string(d) + ": " + std::to_string(*have) +
                 " and " + std::to_string(*now));
      }
      if (dims[d].is_unknown() || (!have && now)) dims[d] = s.dims[d];
    }
  }
  dims[axis] = sum;
  set_output(r, 0, dtype, ranked(std::move(dims)));
  if (auto v = concat_known(ctx, axis)) set_value(r, 0, std::move(*v));
}

// ---- Split

// Copies along `axis` the slab [begin, begin + count) of a known tensor.
KnownValue slab(const KnownValue& v, size_t axis, int64_t begin, int64_t count) {
  std::vector<int64_t> dims = v.dims;
  dims[axis] = count;
  const std::vector<int64_t> in_strides = strides_of(v.dims);
  const std::vector<int64_t> out_strides = strides_of(dims);
  const auto n = checked_numel(dims.data(), dims.size()).value_or(0);
  std::vector<int64_t> flat(n);
  for (uint64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t idx = (static_cast<int64_t>(i) / out_strides[d]) % dims[d];
      if (d == axis) idx += begin;
      src += idx * in_strides[d];
    }
    flat[i] = src;
  }
  return pick(v, std::move(dims), flat);
}

// onnxruntime's QLinearConcat (Y_scale, Y_zero_point, then X, X_scale, X_zero_point for each
// tensor): Concat's shape over the Xs, in their dtype (Y_zero_point's); the operands as
// graph/ops/qlinear_operands.hpp reads them.
void infer_qlinear_concat(const InferContext& ctx, InferResult& r) {
  const QLinearOperands q = check_qlinear_operands(ctx, QLinearOp::concat);
  std::vector<size_t> xs;
  for (size_t k = 0; k < q.tensors; ++k) xs.push_back(q.tensor(k));
  infer_concat(with_inputs(ctx, xs), r);
  set_output(r, 0, ctx.input(q.type_input()).dtype, r.outputs[0].shape);
  r.values.clear();
}

void infer_split(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const size_t outputs = ctx.output_count();
  if (!x.shape.ranked) {
    for (size_t i = 0; i < outputs; ++i) set_output(r, i, x.dtype, Shape::unranked());
    return;
  }
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.shape.rank());
  std::optional<std::vector<int64_t>> split;
  bool split_given = false;
  if (ctx.has_input(1)) {
    split_given = true;
    split = ctx.input_ints(1);
  } else if (auto attr = ctx.attr_ints("split"); attr && !attr->empty()) {
    split_given = true;
    split = attr;
  }
  const Dim& extent = x.shape.dims[axis];
  std::vector<Dim> parts(outputs, Dim::unknown());
  if (split) {
    if (split->size() != outputs) {
      ctx.fail("split has " + std::to_string(split->size()) + " entries for " +
               std::to_string(outputs) + " outputs");
    }
    int64_t total = 0;
    for (size_t i = 0; i < outputs; ++i) {
      parts[i] = Dim::known((*split)[i]);
      total += (*split)[i];
    }
    if (extent.value() && *extent.value() != total) {
      ctx.fail("split sums to " + std::to_string(total) + ", the axis has " +
               std::to_string(*extent.value()));
    }
  } else if (!split_given) {
    const auto n = static_cast<int64_t>(outputs);
    // Equal parts; from opset 18 the last may be smaller (ceil for the others).
    const auto e = extent.value();
    for (size_t i = 0; i < outputs; ++i) {
      if (e && ctx.opset >= 18) {
        const int64_t chunk = (*e + n - 1) / n;
        parts[i] =
            Dim::known(std::max<int64_t>(0, std::min(chunk, *e - chunk * static_cast<int64_t>(i))));
      } else {
        if (e && *e % n != 0) {
          ctx.fail("the axis extent " + std::to_string(*e) + " does not split into " +
                   std::to_string(n) + " equal parts");
        }
        parts[i] = exact_div(extent, Dim::known(n));
      }
    }
  }
  for (size_t i = 0; i < outputs; ++i) {
    Shape s = x.shape;
    s.dims[axis] = parts[i];
    set_output(r, i, x.dtype, s);
  }
  const KnownValue* v = ctx.value(0);
  if (v == nullptr) return;
  int64_t begin = 0;
  for (size_t i = 0; i < outputs; ++i) {
    const auto count = parts[i].value();
    if (!count) return;
    set_value(r, i, slab(*v, axis, begin, *count));
    begin += *count;
  }
}

// ---- Slice

struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};

// starts/ends/axes/steps: attributes before opset 10, inputs from 10. nullopt: not known.
std::optional<SliceArgs> slice_args(const InferContext& ctx, size_t rank) {
  SliceArgs a;
  if (ctx.opset >= 10 || ctx.has_input(1)) {
    auto starts = ctx.input_ints(1);
    auto ends = ctx.input_ints(2);
    if (!starts || !ends) return std::nullopt;
    a.starts = *starts;
    a.ends = *ends;
    if (ctx.has_input(3)) {
      auto axes = ctx.input_ints(3);
      if (!axes) return std::nullopt;
      a.axes = *axes;
    }
    if (ctx.has_input(4)) {
      auto steps = ctx.input_ints(4);
      if (!steps) return std::nullopt;
      a.steps = *steps;
    }
  } else {
    a.starts = ctx.attr_ints("starts").value_or(std::vector<int64_t>{});
    a.ends = ctx.attr_ints("ends").value_or(std::vector<int64_t>{});
    a.axes = ctx.attr_ints("axes").value_or(std::vector<int64_t>{});
  }
  if (a.axes.empty()) {
    for (size_t i = 0; i < a.starts.size(); ++i) a.axes.push_back(static_cast<int64_t>(i));
  }
  if (a.steps.empty()) a.steps.assign(a.starts.size(), 1);
  if (a.ends.size() != a.starts.size() || a.axes.size() != a.starts.size() ||
      a.steps.size() != a.starts.size()) {
    ctx.fail("starts, ends, axes and steps differ in length");
  }
  for (int64_t& axis : a.axes) axis = static_cast<int64_t>(normalize_axis(ctx, axis, rank));
  for (int64_t s : a.steps) {
    if (s == 0) ctx.fail("a step is 0");
  }
  return a;
}

// Clamped start and element count along a dim of known extent.
void slice_known(int64_t extent, int64_t start, int64_t end, int64_t step, int64_t& first,
                 int64_t& count) {
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += extent;
    return std::clamp(v, lo, hi);
  };
  if (step > 0) {
    start = clamp(start, 0, extent);
    end = clamp(end, 0, extent);
    count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = clamp(start, -1, extent - 1);
    end = clamp(end, -1, extent - 1);
    count = start > end ? (start - end - step - 1) / -step : 0;
  }
  first = start;
}

// The element count along a symbolic extent (a size, so non-negative); positive steps only.
Dim slice_symbolic(const Dim& extent, int64_t start, int64_t end, int64_t step) {
  if (step < 0 || extent.is_unknown()) return Dim::unknown();
  // Bounds past INT32_MAX mean "to the end", as exporters write them.
  constexpr int64_t kToEnd = std::numeric_limits<int32_t>::max();
  const Dim stride = Dim::known(step);
  if (end >= kToEnd) {
    // From `start` to the end: extent - start elements, or the last -start ones.
    if (start == 0) return ceil_div(extent, stride);
    return ceil_div(start > 0 ? max(extent - Dim::known(start), Dim::known(0))
                              : min(Dim::known(-start), extent),
                    stride);
  }
  const Dim s = start >= 0 ? (start == 0 ? Dim::known(0) : min(Dim::known(start), extent))
                           : max(extent + Dim::known(start), Dim::known(0));
  const Dim e =
      end >= 0 ? min(Dim::known(end), extent) : max(extent + Dim::known(end), Dim::known(0));
  const Dim span = start == 0 ? e : max(e - s, Dim::known(0));
  return ceil_div(span, stride);
}

// Starts or ends that come from the data: each sliced axis keeps at most its extent (a step of
// known size s: every s-th element), the other axes are what they were.
Shape slice_bounds(const InferContext& ctx, const Shape& x) {
  const size_t rank = x.rank();
  std::vector<int64_t> axes;
  std::optional<std::vector<int64_t>> steps;
  if (ctx.opset >= 10 || ctx.has_input(1)) {
    if (ctx.has_input(3)) {
      const auto known = ctx.input_ints(3);
      if (known) axes = *known;
    } else if (const Shape& starts = ctx.input(1).shape; starts.ranked && starts.rank() == 1) {
      if (const auto n = starts.dims[0].value()) {
        for (int64_t i = 0; i < *n; ++i) axes.push_back(i);
      }
    }
    if (ctx.has_input(4)) steps = ctx.input_ints(4);
  }
  // Per axis: 0 not sliced, else the stride's magnitude (1 when unknown: every element).
  std::vector<int64_t> stride(rank, axes.empty() ? 1 : 0);
  const std::vector<size_t> normalized = normalize_axes(ctx, axes, rank);
  for (size_t k = 0; k < normalized.size(); ++k) {
    const bool known = steps && k < steps->size() && (*steps)[k] != 0;
    stride[normalized[k]] = known ? std::abs((*steps)[k]) : 1;
  }
  std::vector<Dim> dims = x.dims;
  for (size_t i = 0; i < rank; ++i) {
    if (stride[i] == 0) continue;
    dims[i] =
        data_dependent(ctx, ceil_div(dims[i], Dim::known(stride[i])), "axis " + std::to_string(i));
  }
  return ranked(std::move(dims));
}

void infer_slice(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  const size_t rank = x.shape.rank();
  const auto args = slice_args(ctx, rank);
  if (!args) {
    set_output(r, 0, x.dtype, slice_bounds(ctx, x.shape));
    return;
  }
  std::vector<Dim> dims = x.shape.dims;
  std::vector<int64_t> firsts(rank, 0);
  std::vector<int64_t> steps(rank, 1);
  for (size_t i = 0; i < args->axes.size(); ++i) {
    const auto axis = static_cast<size_t>(args->axes[i]);
    if (const auto e = x.shape.dims[axis].value()) {
      int64_t count = 0;
      slice_known(*e, args->starts[i], args->ends[i], args->steps[i], firsts[axis], count);
      dims[axis] = Dim::known(count);
      steps[axis] = args->steps[i];
    } else {
      dims[axis] =
          slice_symbolic(x.shape.dims[axis], args->starts[i], args->ends[i], args->steps[i]);
    }
  }
  set_output(r, 0, x.dtype, ranked(dims));
  const KnownValue* v = ctx.value(0);
  if (v == nullptr || !r.outputs[0].shape.is_static()) return;
  std::vector<int64_t> out_dims;
  out_dims.reserve(dims.size());
  for (const Dim& d : dims) out_dims.push_back(*d.value());
  const std::vector<int64_t> in_strides = strides_of(v->dims);
  const std::vector<int64_t> out_strides = strides_of(out_dims);
  const auto n = checked_numel(out_dims.data(), out_dims.size()).value_or(0);
  std::vector<int64_t> flat(n);
  for (uint64_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t idx = (static_cast<int64_t>(i) / out_strides[d]) % out_dims[d];
      src += (firsts[d] + idx * steps[d]) * in_strides[d];
    }
    flat[i] = src;
  }
  set_value(r, 0, pick(*v, std::move(out_dims), flat));
}

// ---- Gather family

std::optional<KnownValue> gather_known(const KnownValue& data, const KnownValue& indices,
                                       size_t axis) {
  const auto idx = indices.int_values();
  if (!idx) return std::nullopt;
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + static_cast<long>(axis));
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + static_cast<long>(axis) + 1, data.dims.end());
  const auto outer = checked_numel(data.dims.data(), axis).value_or(0);
  const int64_t extent = data.dims[axis];
  const auto inner =
      checked_numel(data.dims.data() + axis + 1, data.dims.size() - axis - 1).value_or(0);
  std::vector<int64_t> flat;
  for (uint64_t o = 0; o < outer; ++o) {
    for (int64_t i : *idx) {
      if (i < 0) i += extent;
      if (i < 0 || i >= extent) return std::nullopt;
      for (uint64_t k = 0; k < inner; ++k) {
        flat.push_back(static_cast<int64_t>(
            (o * static_cast<uint64_t>(extent) + static_cast<uint64_t>(i)) * inner + k));
      }
    }
  }
  return pick(data, std::move(dims), flat);
}

void infer_gather(const InferContext& ctx, InferResult& r) {
  const TensorType& data = ctx.input(0);
  const TensorType& indices = ctx.input(1);
  if (!data.shape.ranked || !indices.shape.ranked) {
    set_output(r, 0, data.dtype, Shape::unranked());
    return;
  }
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), data.shape.rank());
  std::vector<Dim> dims(data.shape.dims.begin(), data.shape.dims.begin() + static_cast<long>(axis));
  dims.insert(dims.end(), indices.shape.dims.begin(), indices.shape.dims.end());
  dims.insert(dims.end(), data.shape.dims.begin() + static_cast<long>(axis) + 1,
              data.shape.dims.end());
  set_output(r, 0, data.dtype, ranked(std::move(dims)));
  if (ctx.value(0) != nullptr && ctx.value(1) != nullptr) {
    if (auto v = gather_known(*ctx.value(0), *ctx.value(1), axis)) set_value(r, 0, std::move(*v));
  }
}

// GatherElements: the indices' shape, the data's dtype.
void infer_gather_elements(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, ctx.input(0).dtype, ctx.input(1).shape);
}

// GatherND: indices.shape[:-1] + data.shape[batch_dims + k:], k = indices.shape[-1].
void infer_gather_nd(const InferContext& ctx, InferResult& r) {
  const TensorType& data = ctx.input(0);
  const Shape& idx = ctx.input(1).shape;
  const auto b = static_cast<size_t>(ctx.attr_int("batch_dims", 0));
  if (!data.shape.ranked || !idx.ranked || idx.rank() == 0 || !idx.dims.back().value()) {
    set_output(r, 0, data.dtype, Shape::unranked());
    return;
  }
  const auto k = static_cast<size_t>(*idx.dims.back().value());
  if (b + k > data.shape.rank()) ctx.fail("indices address more dims than the data has");
  std::vector<Dim> dims(idx.dims.begin(), idx.dims.end() - 1);
  dims.insert(dims.end(), data.shape.dims.begin() + static_cast<long>(b + k),
              data.shape.dims.end());
  set_output(r, 0, data.dtype, ranked(std::move(dims)));
}

void infer_same(const InferContext& ctx, InferResult& r) {
  same_as_input(ctx, r);
}

// ---- Pad

// CenterCropPad (opset 18): each axis of `axes` (all, by default) cropped or padded to the
// extent the `shape` input gives it, centred.
void infer_center_crop_pad(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  const size_t rank = x.shape.rank();
  std::vector<size_t> axes;
  if (const auto given = ctx.attr_ints("axes")) {
    for (const int64_t a : *given) axes.push_back(normalize_axis(ctx, a, rank));
  } else {
    for (size_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  const auto shape = ctx.input_ints(1);
  if (shape && shape->size() != axes.size()) {
    ctx.fail("shape holds " + std::to_string(shape->size()) + " extents for " +
             std::to_string(axes.size()) + " axes");
  }
  std::vector<Dim> dims = x.shape.dims;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (shape && (*shape)[k] < 0) ctx.fail("shape holds a negative extent");
    dims[axes[k]] = shape ? Dim::known((*shape)[k]) : Dim::unknown();
  }
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
}

void infer_pad(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked) {
    set_output(r, 0, x.dtype, Shape::unranked());
    return;
  }
  const size_t rank = x.shape.rank();
  std::optional<std::vector<int64_t>> pads =
      ctx.opset >= 11 || ctx.has_input(1) ? ctx.input_ints(1) : ctx.attr_ints("pads");
  if (!pads && ctx.opset < 11) pads = ctx.attr_ints("paddings");  // opset 1
  std::vector<size_t> axes;
  if (ctx.has_input(3)) {
    // Unknown axes leave the padded dims unknown too.
    if (const auto a = ctx.input_ints(3)) {
      axes = normalize_axes(ctx, *a, rank);
    } else {
      pads.reset();
    }
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (!pads) {
    set_output(r, 0, x.dtype, unknown_dims(rank));
    return;
  }
  if (pads->size() != 2 * axes.size()) {
    ctx.fail("pads has " + std::to_string(pads->size()) + " entries for " +
             std::to_string(axes.size()) + " axes");
  }
  std::vector<Dim> dims = x.shape.dims;
  for (size_t i = 0; i < axes.size(); ++i) {
    dims[axes[i]] = dims[axes[i]] + Dim::known((*pads)[i] + (*pads)[i + axes.size()]);
  }
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
}

// ---- Data-dependent sizes

// How many of the first `limit` elements of a known tensor are non-zero; unknown otherwise.
Dim count_nonzero(const KnownValue* v, size_t limit) {
  if (v == nullptr) return Dim::unknown();
  int64_t n = 0;
  for (size_t i = 0; i < v->numel() && i < limit; ++i) {
    const auto x = v->real(i);
    if (!x) return Dim::unknown();
    n += *x != 0 ? 1 : 0;
  }
  return Dim::known(n);
}

// The count of a known condition, or else one known only when running, at most `limit`.
Dim selected_count(const InferContext& ctx, const KnownValue* cond, const Dim& limit) {
  const auto n = limit.value();
  const Dim count = count_nonzero(n ? cond : nullptr, static_cast<size_t>(n.value_or(0)));
  return count.is_known() ? count : data_dependent(ctx, limit);
}

// Compress keeps the slices whose condition is true: at most the slices there are (the condition
// may be shorter), exactly how many when the condition is known.
void infer_compress(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const KnownValue* cond = ctx.value(1);
  if (ctx.attribute("axis") == nullptr || !x.shape.ranked) {
    set_output(r, 0, x.dtype, ranked({selected_count(ctx, cond, x.shape.numel_expr())}));
    return;
  }
  Shape s = x.shape;
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), s.rank());
  s.dims[axis] = selected_count(ctx, cond, s.dims[axis]);
  set_output(r, 0, x.dtype, s);
}

// NonZero: [rank, count], the count at most the input's element count.
void infer_nonzero(const InferContext& ctx, InferResult& r) {
  const Shape& x = ctx.input(0).shape;
  const Dim rank = x.ranked ? Dim::known(static_cast<int64_t>(x.rank())) : Dim::unknown();
  set_output(r, 0, DType::int64, ranked({rank, selected_count(ctx, ctx.value(0), x.numel_expr())}));
}

// Unique: Y (the unique values, flattened or along `axis`), then int64 indices,
// inverse_indices and counts. Y's length, the indices and the counts are one data-dependent
// count, at most the input's elements (slices along an axis).
void infer_unique(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  Dim inverse = x.shape.numel_expr();  // one index per input element (per slice with an axis)
  Dim count = data_dependent(ctx, inverse);
  Shape y = ranked({count});
  if (ctx.attribute("axis") != nullptr && x.shape.ranked) {
    y = x.shape;
    const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), y.rank());
    inverse = y.dims[axis];
    count = data_dependent(ctx, inverse);
    y.dims[axis] = count;
  } else if (ctx.attribute("axis") != nullptr) {
    y = Shape::unranked();
    inverse = count = Dim::unknown();
  }
  set_output(r, 0, x.dtype, y);
  set_output(r, 1, DType::int64, ranked({count}));
  set_output(r, 2, DType::int64, ranked({inverse}));
  set_output(r, 3, DType::int64, ranked({count}));
}

}  // namespace

void register_indexing(OpRegistry& r) {
  r.add(op("Concat", 1, V, infer_concat));
  r.add(contrib(op("QLinearConcat", 5, V, infer_qlinear_concat)));
  OpSchema nhwc_concat = op("NhwcConcat", 1, V, [](const InferContext& ctx, InferResult& out) {
    infer_channels_last(ctx, out, infer_concat, ctx.input_count());
  });
  nhwc_concat.domain = "footprint";
  r.add(nhwc_concat);
  // QLinearConcat on channels-last tensors: its Xs (inputs 2, 5, ...) [N, H, W, C], the axis
  // NCHW's.
  OpSchema nhwc_qconcat =
      op("NhwcQLinearConcat", 5, V, [](const InferContext& ctx, InferResult& out) {
        infer_channels_last(ctx, out, infer_qlinear_concat, 2, 3);
      });
  nhwc_qconcat.domain = "footprint";
  r.add(nhwc_qconcat);
  r.add(op("Split", 1, 2, infer_split, 1, V));
  r.add(op("Slice", 1, 5, infer_slice));
  // Slice on a channels-last [N, H, W, C] tensor, its axes NCHW's (graph::to_channels_last).
  OpSchema nhwc_slice = op("NhwcSlice", 1, 5, [](const InferContext& ctx, InferResult& out) {
    infer_channels_last(ctx, out, infer_slice, 1);
    out.values.clear();  // a known value would be in NCHW order
  });
  nhwc_slice.domain = "footprint";
  r.add(nhwc_slice);
  r.add(op("Gather", 2, 2, infer_gather));
  r.add(op("GatherElements", 2, 2, infer_gather_elements));
  r.add(op("GatherND", 2, 2, infer_gather_nd));
  r.add(op("ScatterND", 3, 3, infer_same));
  r.add(op("ScatterElements", 3, 3, infer_same));
  r.add(op("Scatter", 3, 3, infer_same));
  r.add(op("Pad", 1, 4, infer_pad));
  r.add(op("CenterCropPad", 2, 2, infer_center_crop_pad));
  r.add(op("Compress", 2, 2, infer_compress));
  r.add(op("ReverseSequence", 2, 2, infer_same));
  r.add(op("NonZero", 1, 1, infer_nonzero));
  r.add(op("Unique", 1, 1, infer_unique, 1, 4));
}

}  // namespace footprint::graph::ops
