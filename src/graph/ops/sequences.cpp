// What ONNX's sequence and optional ops become once graph::lower_sequences has replaced each
// sequence by the tensors it holds (include/footprint/graph/lower_sequences.hpp): rows of domain
// "footprint" that read and write tensors only. SequenceConstruct, SequenceInsert,
// SequenceErase, SequenceEmpty, SequenceAt, Optional, OptionalGetElement and Identity of a
// sequence leave no node (a list of values, or an Identity of one); these four compute something:
//
//   SequenceLength       no inputs; `length`: the sequence's length, a known int64 scalar
//   OptionalHasElement   no inputs; `has_element`: a known bool scalar
//   ConcatFromSequence   the elements as inputs; ONNX's axis and new_axis
//   SplitToSequence      x and ONNX's optional split; one output per element; axis, keepdims
#include <string>
#include <vector>

#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

void infer_sequence_length(const InferContext& ctx, InferResult& r) {
  set_value(r, 0, known_ints(DType::int64, {}, {Dim::known(ctx.attr_int("length", 0))}));
}

void infer_optional_has_element(const InferContext& ctx, InferResult& r) {
  const int64_t has = ctx.attr_int("has_element", 0) != 0 ? 1 : 0;
  set_value(r, 0, known_ints(DType::boolean, {}, {Dim::known(has)}));
}

// new_axis = 0: Concat's shape. new_axis = 1: the elements stacked along a new axis, which may
// be one past the elements' last (axis in [-r-1, r]).
void infer_concat_from_sequence(const InferContext& ctx, InferResult& r) {
  const TensorType& first = ctx.input(0);
  const bool stack = ctx.attr_int("new_axis", 0) != 0;
  const Shape* model = nullptr;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const TensorType& t = ctx.input(i);
    if (t.dtype != first.dtype) {
      ctx.fail("the sequence holds " + std::string(dtype_name(first.dtype)) + " and " +
               std::string(dtype_name(t.dtype)) + " tensors");
    }
    if (t.shape.ranked) model = &t.shape;
  }
  if (model == nullptr) {
    set_output(r, 0, first.dtype, Shape::unranked());
    return;
  }
  const size_t rank = model->rank() + (stack ? 1 : 0);
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
  std::vector<Dim> dims(rank, Dim::unknown());
  Dim along = Dim::known(stack ? static_cast<int64_t>(ctx.input_count()) : 0);
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const Shape& s = ctx.input(i).shape;
    if (!s.ranked) {
      if (!stack) along = Dim::unknown();
      continue;
    }
    if (s.rank() != model->rank()) {
      ctx.fail("the sequence holds tensors of ranks " + std::to_string(model->rank()) + " and " +
               std::to_string(s.rank()));
    }
    for (size_t d = 0, o = 0; o < rank; ++o) {
      if (o == axis) {
        if (!stack) along = along + s.dims[d++];
        continue;
      }
      const auto have = dims[o].value();
      const auto now = s.dims[d].value();
      if (have && now && *have != *now) {
        ctx.fail("the sequence's tensors differ in dim " + std::to_string(d) + ": " +
                 std::to_string(*have) + " and " + std::to_string(*now));
      }
      if (dims[o].is_unknown() || (!have && now)) dims[o] = s.dims[d];
      ++d;
    }
  }
  dims[axis] = along;
  set_output(r, 0, first.dtype, ranked(std::move(dims)));
}

// The parts' extents along the axis: `split` as a scalar (chunks of that size, the last one
// smaller), as a 1-D tensor (the parts), or absent (parts of 1).
void infer_split_to_sequence(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const size_t parts = ctx.output_count();
  if (!x.shape.ranked) {
    for (size_t i = 0; i < parts; ++i) set_output(r, i, x.dtype, Shape::unranked());
    return;
  }
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.shape.rank());
  const Dim& extent = x.shape.dims[axis];
  std::vector<Dim> sizes(parts, Dim::known(1));
  // keepdims 0 drops the axis where the parts are not given one by one (no split, or a scalar
  // one), as onnxruntime reads it (PyTorch exports unbind as a scalar split of 1 with keepdims 0),
  // though ONNX says a split given overrides it.
  const bool by_parts =
      ctx.has_input(1) && !(ctx.value(1) != nullptr && ctx.value(1)->dims.empty());
  const bool keep = by_parts || ctx.attr_int("keepdims", 1) != 0;
  if (ctx.has_input(1)) {
    const auto split = ctx.input_ints(1);
    const bool scalar = split && ctx.value(1)->dims.empty();
    if (!split) {
      // Sizes the data gives (a 1-D split read when running): each part at most the extent.
      const Shape& s = ctx.input(1).shape;
      if (!s.ranked || s.rank() != 1) ctx.fail("its split is a scalar known only when running");
      for (size_t i = 0; i < parts; ++i) {
        sizes[i] = data_dependent(ctx, extent, "part " + std::to_string(i));
      }
    } else if (scalar) {
      const auto e = extent.value();
      if (!e) ctx.fail("splits an extent known only when running into chunks");
      for (size_t i = 0; i < parts; ++i) {
        const int64_t begin = (*split)[0] * static_cast<int64_t>(i);
        sizes[i] = Dim::known(std::min((*split)[0], *e - begin));
      }
    } else {
      if (split->size() != parts) {
        ctx.fail("split has " + std::to_string(split->size()) + " entries for " +
                 std::to_string(parts) + " parts");
      }
      for (size_t i = 0; i < parts; ++i) sizes[i] = Dim::known((*split)[i]);
    }
  }
  for (size_t i = 0; i < parts; ++i) {
    std::vector<Dim> dims = x.shape.dims;
    if (!keep && !(sizes[i].value() && *sizes[i].value() == 1)) {
      ctx.fail("keepdims 0 drops the axis, but part " + std::to_string(i) + " is " +
               sizes[i].to_string() + " along it");
    }
    if (keep) {
      dims[axis] = sizes[i];
    } else {
      dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(axis));
    }
    set_output(r, i, x.dtype, ranked(std::move(dims)));
  }
}

OpSchema lowered(OpSchema row) {
  row.domain = "footprint";
  return row;
}

}  // namespace

void register_sequences(OpRegistry& r) {
  r.add(lowered(op("SequenceLength", 0, 0, infer_sequence_length)));
  r.add(lowered(op("OptionalHasElement", 0, 0, infer_optional_has_element)));
  r.add(lowered(op("ConcatFromSequence", 1, V, infer_concat_from_sequence)));
  r.add(lowered(op("SplitToSequence", 1, 2, infer_split_to_sequence, 0, V)));
}

}  // namespace footprint::graph::ops
