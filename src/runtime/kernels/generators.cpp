// Kernels whose outputs are made rather than computed from input elements (graph/ops/generators.cpp
// sizes them): Constant (every numeric value_* attribute), ConstantOfShape, Range, EyeLike, Shape,
// Size and OneHot.
//
// Tensor attributes are decoded straight into the output buffer: a view of the payload (raw
// data, external data or a packed float/double run) is copied, and varint fields are decoded
// element by element, so nothing is staged on the heap.
#include <bit>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "index_space.hpp"
#include "tensor_reads.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;

// Writes the elements of `t` into `out` (out.size() bytes, elements of `esize` bytes).
void decode_into(const KernelContext& ctx, const onnx::TensorProto& t, std::span<std::byte> out) {
  const DType dtype = onnx::tensor_dtype(t);
  const size_t esize = element_size(dtype);
  if (esize == 0 || dtype == DType::complex64 || dtype == DType::complex128) fail_dtype(ctx, dtype);
  if (const auto view = onnx::tensor_view(t); !view.empty()) {
    if (view.size() != out.size()) ctx.fail("the tensor's payload does not match its dims");
    std::memcpy(out.data(), view.data(), out.size());
    return;
  }
  // Each typed-field element holds the element's bits in its low bytes (little-endian).
  size_t pos = 0;
  t.typed_data.for_each([&](uint64_t raw) {
    if (pos + esize <= out.size()) std::memcpy(out.data() + pos, &raw, esize);
    pos += esize;
  });
  if (pos != out.size()) ctx.fail("the tensor's payload does not match its dims");
}

std::span<std::byte> bytes_of(TensorRef& y) {
  return {static_cast<std::byte*>(y.data), y.bytes()};
}

// ---- Constant

template <class T, class F>
void write_repeated(const onnx::RepeatedScalar& values, TensorRef& y, F convert) {
  T* out = y.as<T>();
  size_t i = 0;
  const size_t n = y.numel();
  values.for_each([&](uint64_t raw) {
    if (i < n) out[i] = convert(raw);
    ++i;
  });
}

void constant_kernel(KernelContext& ctx) {
  TensorRef& y = ctx.output(0);
  auto to_float = [](uint64_t raw) { return std::bit_cast<float>(static_cast<uint32_t>(raw)); };
  auto to_int = [](uint64_t raw) { return static_cast<int64_t>(raw); };
  if (const onnx::TensorProto* t = ctx.attr_tensor("value")) {
    decode_into(ctx, *t, bytes_of(y));
  } else if (const auto* a = ctx.attribute("value_float")) {
    *y.as<float>() = a->f;
  } else if (const auto* fs = ctx.attribute("value_floats")) {
    write_repeated<float>(fs->floats, y, to_float);
  } else if (const auto* i = ctx.attribute("value_int")) {
    *y.as<int64_t>() = i->i;
  } else if (const auto* is = ctx.attribute("value_ints")) {
    write_repeated<int64_t>(is->ints, y, to_int);
  } else {
    ctx.fail("only numeric dense values are supported");
  }
}

// ---- ConstantOfShape: every element the `value` attribute's single element (float 0 default)

void constant_of_shape_kernel(KernelContext& ctx) {
  TensorRef& y = ctx.output(0);
  uint64_t bits = 0;
  if (const onnx::TensorProto* t = ctx.attr_tensor("value")) {
    const size_t esize = element_size(onnx::tensor_dtype(*t));
    if (esize == 0 || esize > sizeof(bits)) fail_dtype(ctx, onnx::tensor_dtype(*t));
    decode_into(ctx, *t, {reinterpret_cast<std::byte*>(&bits), esize});
  }
  dispatch_bits(ctx, y.dtype, [&](auto tag) {
    using T = decltype(tag);
    T v{};
    std::memcpy(&v, &bits, sizeof(T));
    std::fill_n(y.as<T>(), y.numel(), v);
  });
}

// ---- Range: start + i * delta for as many elements as inference gave the output

void range_kernel(KernelContext& ctx) {
  TensorRef& y = ctx.output(0);
  using RangeTypes = TypeList<float, double, int16_t, int32_t, int64_t>;
  dispatch_or_fail<RangeTypes>(ctx, y.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T start = *ctx.input(0).as<const T>();
    const T delta = *ctx.input(2).as<const T>();
    T* out = y.as<T>();
    for (size_t i = 0; i < y.numel(); ++i)
      out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  });
}

// ---- EyeLike: ones on the diagonal shifted by k

void eye_like_kernel(KernelContext& ctx) {
  TensorRef& y = ctx.output(0);
  if (y.rank() != 2) ctx.fail("the input must have rank 2");
  const int64_t k = ctx.attr_int("k", 0);
  const int64_t rows = y.dims[0];
  const int64_t cols = y.dims[1];
  dispatch_or_fail<NumericTypes>(ctx, y.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = y.as<T>();
    std::fill_n(out, y.numel(), T(0));
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t j = i + k;
      if (j >= 0 && j < cols) out[i * cols + j] = T(1);
    }
  });
}

// ---- Shape and Size

// Shape, and NhwcShape (graph::to_channels_last): a channels-last [N, H, W, C] tensor's extents
// in NCHW's order.
template <bool kChannelsLast>
void shape_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  const auto rank = static_cast<int64_t>(x.rank());
  if (kChannelsLast && rank != 4) ctx.fail("reads channels-last tensors of rank 4");
  auto dim = [&](size_t d) { return x.dims[kChannelsLast ? kChannelsLastAxis[d] : d]; };
  int64_t start = ctx.attr_int("start", 0);
  if (start < 0) start += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  auto* out = y.as<int64_t>();
  for (size_t i = 0; i < y.numel(); ++i) out[i] = dim(static_cast<size_t>(start) + i);
}

// footprint::SequenceLength and footprint::OptionalHasElement (graph::lower_sequences): the one
// integer attribute the lowering gave them.
void sequence_length_kernel(KernelContext& ctx) {
  *ctx.output(0).as<int64_t>() = ctx.attr_int("length", 0);
}

void optional_has_element_kernel(KernelContext& ctx) {
  *ctx.output(0).as<bool>() = ctx.attr_int("has_element", 0) != 0;
}

void size_kernel(KernelContext& ctx) {
  *ctx.output(0).as<int64_t>() = static_cast<int64_t>(ctx.input(0).numel());
}

// ---- OneHot

// Element i of a numeric tensor as an integer (OneHot takes indices of any numeric dtype).
int64_t numeric_at(const KernelContext& ctx, const TensorRef& t, size_t i) {
  int64_t v = 0;
  dispatch_or_fail<ArithTypes>(ctx, t.dtype, [&](auto tag) {
    using T = decltype(tag);
    // int8 values are signed: sign extension is meant.
    // NOLINTNEXTLINE(bugprone-signed-char-misuse)
    v = static_cast<int64_t>(t.as<const T>()[i]);
  });
  return v;
}

void one_hot_kernel(KernelContext& ctx) {
  const TensorRef& idx = ctx.input(0);
  const TensorRef& values = ctx.input(2);
  TensorRef& y = ctx.output(0);
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), y.rank());
  const int64_t depth = y.dims[axis];
  const size_t outer = product(y.dims, 0, axis);
  const size_t inner = product(y.dims, axis + 1, y.rank());
  if (values.numel() != 2) ctx.fail("values must have 2 elements");
  dispatch_bits(ctx, y.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T off = values.as<const T>()[0];
    const T on = values.as<const T>()[1];
    T* out = y.as<T>();
    std::fill_n(out, y.numel(), off);
    for (size_t o = 0; o < outer; ++o) {
      for (size_t j = 0; j < inner; ++j) {
        int64_t k = numeric_at(ctx, idx, o * inner + j);
        if (k < 0) k += depth;
        if (k >= 0 && k < depth)
          out[(o * static_cast<size_t>(depth) + static_cast<size_t>(k)) * inner + j] = on;
      }
    }
  });
}

}  // namespace

void register_generators(graph::OpRegistry& r) {
  r.row("", "Constant").kernel = constant_kernel;
  r.row("", "ConstantOfShape").kernel = constant_of_shape_kernel;
  r.row("", "Range").kernel = range_kernel;
  r.row("", "EyeLike").kernel = eye_like_kernel;
  r.row("", "Shape").kernel = shape_kernel<false>;
  r.row("footprint", "NhwcShape").kernel = shape_kernel<true>;
  r.row("", "Size").kernel = size_kernel;
  r.row("footprint", "SequenceLength").kernel = sequence_length_kernel;
  r.row("footprint", "OptionalHasElement").kernel = optional_has_element_kernel;
  r.row("", "OneHot").kernel = one_hot_kernel;
  // Constants decode whole-byte elements but complex ones (decode_into); their dtype is the
  // output's, as Range's and EyeLike's; Shape and Size read only extents.
  const DTypeSet decoded =
      DTypeSet::whole_bytes().without(DType::complex64).without(DType::complex128);
  const auto output_dtypes = [&](const char* op, DTypeSet dtypes) {
    graph::OpSchema& row = r.row("", op);
    row.kernel_dtypes = dtypes;
    row.kernel_dtype_of = -1;
  };
  output_dtypes("Constant", decoded);
  output_dtypes("ConstantOfShape", decoded & movable_dtypes());
  output_dtypes("Range", dtypes_of(TypeList<float, double, int16_t, int32_t, int64_t>{}));
  output_dtypes("EyeLike", dtypes_of(NumericTypes{}));
  for (const char* op : {"Shape", "Size"}) r.row("", op).kernel_dtypes = DTypeSet::all();
  r.row("footprint", "NhwcShape").kernel_dtypes = DTypeSet::all();
  for (const char* op : {"SequenceLength", "OptionalHasElement"}) {
    graph::OpSchema& row = r.row("footprint", op);  // no inputs: the dtype is the output's
    row.kernel_dtypes = DTypeSet::all();
    row.kernel_dtype_of = -1;
  }
  r.row("", "OneHot").kernel_dtypes = dtypes_of(ArithTypes{});  // the indices
}

}  // namespace footprint::runtime::kernels
