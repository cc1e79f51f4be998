// Ops whose output is made rather than computed from input elements: Constant (every value_*
// attribute), ConstantOfShape, Shape (start/end), Size, Range, EyeLike, OneHot and the random
// generators. Shape and Size turn dims into known (possibly symbolic) values, which is where
// shape arithmetic starts.
#include <algorithm>
#include <cmath>

#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

void infer_constant(const InferContext& ctx, InferResult& r) {
  if (const onnx::TensorProto* t = ctx.attr_tensor("value")) {
    const std::vector<int64_t> dims(t->dims.begin(), t->dims.end());
    set_output(r, 0, static_cast<DType>(t->data_type), Shape::of(dims));
    if (auto v = known_value_of(*t)) set_value(r, 0, std::move(*v));
    return;
  }
  if (const auto* a = ctx.attribute("value_int")) {
    set_value(r, 0, known_ints(DType::int64, {}, {Dim::known(a->i)}));
  } else if (auto ints = ctx.attr_ints("value_ints")) {
    std::vector<Dim> elems;
    for (int64_t i : *ints) elems.push_back(Dim::known(i));
    set_value(r, 0, known_ints(DType::int64, {static_cast<int64_t>(ints->size())}, elems));
  } else if (const auto* f = ctx.attribute("value_float")) {
    set_value(r, 0, known_reals(DType::float32, {}, {f->f}));
  } else if (auto floats = ctx.attr_floats("value_floats")) {
    set_value(r, 0,
              known_reals(DType::float32, {static_cast<int64_t>(floats->size())},
                          std::vector<double>(floats->begin(), floats->end())));
  } else if (ctx.attribute("value_string") != nullptr) {
    set_output(r, 0, DType::string, ranked({}));
  } else if (const auto* s = ctx.attribute("value_strings")) {
    set_output(r, 0, DType::string, Shape::of({static_cast<int64_t>(s->strings.size())}));
  } else if (const auto* sp = ctx.attribute("sparse_value"); sp && sp->sparse_tensor()) {
    const onnx::SparseTensorProto& st = *sp->sparse_tensor();
    const DType dtype =
        st.values != nullptr ? static_cast<DType>(st.values->data_type) : DType::undefined;
    set_output(r, 0, dtype, Shape::of(std::vector<int64_t>(st.dims.begin(), st.dims.end())));
  } else {
    ctx.fail("has no value attribute");
  }
}

// The known fill value of ConstantOfShape (a one-element tensor; float 0 by default).
KnownValue fill_value(const InferContext& ctx) {
  if (const onnx::TensorProto* t = ctx.attr_tensor("value")) {
    if (auto v = known_value_of(*t, 1); v && v->numel() == 1) return *v;
    KnownValue v;
    v.dtype = static_cast<DType>(t->data_type);
    return v;
  }
  return known_reals(DType::float32, {}, {0.0});
}

void infer_constant_of_shape(const InferContext& ctx, InferResult& r) {
  const KnownValue fill = fill_value(ctx);
  const auto dims = dims_from_value(ctx.value(0));
  if (!dims) {
    const Shape& s = ctx.input(0).shape;
    const bool rank_known = s.ranked && s.rank() == 1 && s.dims[0].value();
    set_output(
        r, 0, fill.dtype,
        rank_known ? unknown_dims(static_cast<size_t>(*s.dims[0].value())) : Shape::unranked());
    return;
  }
  for (const Dim& d : *dims) {
    if (const auto v = d.value(); v && *v < 0) {
      ctx.fail("its shape input has the negative extent " + std::to_string(*v));
    }
  }
  const Shape shape = ranked(*dims);
  set_output(r, 0, fill.dtype, shape);
  const auto n = shape.numel();
  if (!n || *n > KnownValue::kMaxElements || fill.numel() != 1) return;
  std::vector<int64_t> extents;
  for (const Dim& d : shape.dims) extents.push_back(*d.value());
  KnownValue v = fill;
  v.dims = extents;
  if (!fill.ints.empty()) v.ints.assign(*n, fill.ints[0]);
  if (!fill.reals.empty()) v.reals.assign(*n, fill.reals[0]);
  set_value(r, 0, std::move(v));
}

// Shape (with start/end from opset 15): the dims as a known int64 vector.
void infer_shape(const InferContext& ctx, InferResult& r) {
  const Shape& x = ctx.input(0).shape;
  if (!x.ranked) {
    set_output(r, 0, DType::int64, unknown_dims(1));
    return;
  }
  const auto rank = static_cast<int64_t>(x.rank());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp(ctx.attr_int("start", 0));
  const int64_t end = clamp(ctx.attr_int("end", rank));
  std::vector<Dim> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(x.dims[static_cast<size_t>(i)]);
  const auto n = static_cast<int64_t>(dims.size());
  set_value(r, 0, known_ints(DType::int64, {n}, std::move(dims)));
}

void infer_size(const InferContext& ctx, InferResult& r) {
  const Shape& x = ctx.input(0).shape;
  set_output(r, 0, DType::int64, ranked({}));
  if (x.ranked) set_value(r, 0, known_ints(DType::int64, {}, {x.numel_expr()}));
}

// Range: max(ceil((limit - start) / delta), 0) elements of start's dtype.
void infer_range(const InferContext& ctx, InferResult& r) {
  const DType dtype = ctx.input(0).dtype;
  set_output(r, 0, dtype, unknown_dims(1));
  const KnownValue* start = ctx.value(0);
  const KnownValue* limit = ctx.value(1);
  const KnownValue* delta = ctx.value(2);
  if (start == nullptr || limit == nullptr || delta == nullptr || start->numel() != 1 ||
      limit->numel() != 1 || delta->numel() != 1) {
    return;
  }
  const auto s = start->real(0);
  const auto l = limit->real(0);
  const auto d = delta->real(0);
  if (s && l && d) {
    if (*d == 0) ctx.fail("delta is 0");
    const auto n = static_cast<int64_t>(std::max(std::ceil((*l - *s) / *d), 0.0));
    if (static_cast<uint64_t>(n) > KnownValue::kMaxElements) {
      set_output(r, 0, dtype, Shape::of({n}));
      return;
    }
    KnownValue v;
    v.dtype = dtype;
    v.dims = {n};
    for (int64_t i = 0; i < n; ++i) {
      if (is_real(dtype)) {
        v.reals.push_back(*s + static_cast<double>(i) * *d);
      } else {
        v.ints.push_back(Dim::known(static_cast<int64_t>(*s) + i * static_cast<int64_t>(*d)));
      }
    }
    set_value(r, 0, std::move(v));
    return;
  }
  // Integer bounds with a symbol (Range(0, N, 1)): the count as an expression.
  if (!is_real(dtype) && d && *d > 0) {
    const Dim span = limit->ints[0] - start->ints[0];
    const Dim step = Dim::known(static_cast<int64_t>(*d));
    const bool from_zero = start->ints[0].value() == 0;
    set_output(r, 0, dtype, ranked({ceil_div(from_zero ? span : max(span, Dim::known(0)), step)}));
  }
}

DType dtype_attr(const InferContext& ctx, DType fallback) {
  const auto* a = ctx.attribute("dtype");
  return a == nullptr ? fallback : static_cast<DType>(a->i);
}

void infer_eye_like(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  set_output(r, 0, dtype_attr(ctx, x.dtype), x.shape);
}

// OneHot: the indices' shape with `depth` inserted at `axis`, in the values' dtype.
void infer_one_hot(const InferContext& ctx, InferResult& r) {
  const Shape& idx = ctx.input(0).shape;
  const DType dtype = ctx.input(2).dtype;
  if (!idx.ranked) {
    set_output(r, 0, dtype, Shape::unranked());
    return;
  }
  Dim depth = Dim::unknown();
  if (const KnownValue* v = ctx.value(1); v != nullptr && v->numel() == 1) {
    if (const auto d = v->real(0)) depth = Dim::known(static_cast<int64_t>(*d));
  }
  std::vector<Dim> dims = idx.dims;
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), idx.rank() + 1);
  dims.insert(dims.begin() + static_cast<long>(axis), depth);
  set_output(r, 0, dtype, ranked(std::move(dims)));
}

// RandomNormal / RandomUniform: shape and dtype from attributes.
void infer_random(const InferContext& ctx, InferResult& r) {
  const auto shape = ctx.attr_ints("shape");
  set_output(r, 0, dtype_attr(ctx, DType::float32), shape ? Shape::of(*shape) : Shape::unranked());
}

// RandomNormalLike / RandomUniformLike / Bernoulli: the input's shape.
void infer_random_like(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  set_output(r, 0, dtype_attr(ctx, x.dtype), x.shape);
}

void infer_multinomial(const InferContext& ctx, InferResult& r) {
  const Shape& x = ctx.input(0).shape;
  const Dim batch = x.ranked && x.rank() == 2 ? x.dims[0] : Dim::unknown();
  set_output(r, 0, dtype_attr(ctx, DType::int32),
             ranked({batch, Dim::known(ctx.attr_int("sample_size", 1))}));
}

// Constant's output is the tensor in its `value` attribute.
OpSchema stored_value(OpSchema s) {
  s.stored_value_attribute = "value";
  return s;
}

OpSchema random(OpSchema s) {
  s.deterministic = false;
  return s;
}

}  // namespace

void register_generators(OpRegistry& r) {
  r.add(stored_value(op("Constant", 0, 0, infer_constant)));
  r.add(op("ConstantOfShape", 1, 1, infer_constant_of_shape));
  r.add(op("Shape", 1, 1, infer_shape));
  // Shape of a channels-last [N, H, W, C] tensor, in NCHW's order (graph::to_channels_last).
  OpSchema nhwc_shape = op("NhwcShape", 1, 1, [](const InferContext& ctx, InferResult& out) {
    TensorType x = ctx.input(0);
    if (!x.shape.ranked || x.shape.rank() != 4) {
      ctx.fail("reads channels-last tensors of rank 4, not " + x.shape.to_string());
    }
    x.shape = channels_first(std::move(x.shape));
    InferContext plain = ctx;
    plain.inputs[0] = &x;
    infer_shape(plain, out);
  });
  nhwc_shape.domain = "footprint";
  r.add(nhwc_shape);
  r.add(op("Size", 1, 1, infer_size));
  r.add(op("Range", 3, 3, infer_range));
  r.add(op("EyeLike", 1, 1, infer_eye_like));
  r.add(op("OneHot", 3, 3, infer_one_hot));
  r.add(random(op("RandomNormal", 0, 0, infer_random)));
  r.add(random(op("RandomUniform", 0, 0, infer_random)));
  r.add(random(op("RandomNormalLike", 1, 1, infer_random_like)));
  r.add(random(op("RandomUniformLike", 1, 1, infer_random_like)));
  r.add(random(op("Bernoulli", 1, 1, infer_random_like)));
  r.add(random(op("Multinomial", 1, 1, infer_multinomial)));
}

}  // namespace footprint::graph::ops
