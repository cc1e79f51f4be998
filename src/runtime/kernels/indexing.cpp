// Kernels of the ops that select, place or pad elements by index (graph/ops/indexing.cpp sizes
// them): Concat and Split, Slice, the Gather and Scatter families, Pad and ReverseSequence.
//
// Most are dispatched on the element size only (Bits<n>), so one instantiation serves every
// dtype of that width; indices are read through fixed buffers (tensor_reads.hpp), never the
// heap.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "float16.hpp"
#include "index_space.hpp"
#include "parallel_for.hpp"
#include "strided_copy.hpp"
#include "tensor_reads.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;

// ---- Concat and Split: blocks of whole rows after the axis

// The least a thread copies in a split copy (Concat, Pad).
constexpr size_t kParallelCopyBytes = size_t{1} << 20;

void concat_along(KernelContext& ctx, size_t axis) {
  TensorRef& y = ctx.output(0);
  const size_t esize = element_size(y.dtype);
  if (esize == 0) fail_dtype(ctx, y.dtype);
  const size_t outer = product(y.dims, 0, axis);
  const size_t out_row = product(y.dims, axis, y.rank()) * esize;
  auto* out = static_cast<std::byte*>(y.data);
  // Channels-last (NhwcConcat) copies each pixel's few channels from every input: many short
  // rows, split across the threads where each gets a MiB or more (waking a thread costs tens of
  // microseconds on a virtual machine: SqueezeNet's 1.5 MiB concats ran slower split in two).
  parallel_for(
      ctx.threads(), outer,
      [&](size_t begin, size_t end) {
        size_t at = 0;  // where in the output's row the input goes
        for (size_t i = 0; i < ctx.input_count(); ++i) {
          const TensorRef* x = ctx.input_or_null(i);
          if (x == nullptr) continue;
          const size_t row = product(x->dims, axis, x->rank()) * esize;
          const auto* in = static_cast<const std::byte*>(x->data);
          for (size_t o = begin; o < end && row > 0; ++o) {
            std::memcpy(out + o * out_row + at, in + o * row, row);
          }
          at += row;
        }
      },
      std::max<size_t>(1, kParallelCopyBytes / std::max<size_t>(out_row, 1)));
}

void concat_kernel(KernelContext& ctx) {
  concat_along(ctx, normalize_axis(ctx, ctx.attr_int("axis", 0), ctx.output(0).rank()));
}

// NhwcConcat (graph::to_channels_last): the node's axis is an NCHW one; its tensors are
// [N, H, W, C], where the channels are the last axis.
void nhwc_concat_kernel(KernelContext& ctx) {
  concat_along(ctx, kChannelsLastAxis.at(normalize_axis(ctx, ctx.attr_int("axis", 0), 4)));
}

// footprint::ConcatFromSequence (graph::lower_sequences): the elements as inputs. Stacking them
// along a new axis copies the same rows as concatenating along it, each element's row one slab.
void concat_from_sequence_kernel(KernelContext& ctx) {
  concat_along(ctx, normalize_axis(ctx, ctx.attr_int("axis", 0), ctx.output(0).rank()));
}

// Split, and footprint::SplitToSequence (graph::lower_sequences), whose parts may drop the axis
// (keepdims 0): a part's row is its extents from the axis on, which a dropped axis of 1 leaves
// the same.
void split_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  const size_t esize = element_size(x.dtype);
  if (esize == 0) fail_dtype(ctx, x.dtype);
  const size_t outer = product(x.dims, 0, axis);
  const size_t in_row = product(x.dims, axis, x.rank()) * esize;
  const auto* in = static_cast<const std::byte*>(x.data);
  size_t at = 0;
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    TensorRef* y = ctx.output_or_null(i);
    if (y == nullptr) continue;
    const size_t row = product(y->dims, axis, y->rank()) * esize;
    auto* out = static_cast<std::byte*>(y->data);
    for (size_t o = 0; o < outer && row > 0; ++o)
      std::memcpy(out + o * row, in + o * in_row + at, row);
    at += row;
  }
}

// footprint::SplitToSequence: a 1-D split is read when running (inference knows only that each
// part is at most the extent), and the parts' extents reported.
void split_to_sequence_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const TensorRef* split = ctx.input_or_null(1);
  if (split != nullptr && split->rank() == 1) {
    const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
    if (static_cast<size_t>(split->dims[0]) != ctx.output_count()) {
      ctx.fail("split has " + std::to_string(split->dims[0]) + " entries for " +
               std::to_string(ctx.output_count()) + " parts");
    }
    const auto size = [&](size_t i) -> int64_t {
      return split->dtype == DType::int32 ? split->as<const int32_t>()[i]
                                          : split->as<const int64_t>()[i];
    };
    int64_t total = 0;
    for (size_t i = 0; i < ctx.output_count(); ++i) {
      if (size(i) < 0)
        ctx.fail("split entry " + std::to_string(i) + " is " + std::to_string(size(i)));
      total += size(i);
    }
    if (total != x.dims[axis]) {
      ctx.fail("split sums to " + std::to_string(total) + ", the axis has " +
               std::to_string(x.dims[axis]));
    }
    for (size_t i = 0; i < ctx.output_count(); ++i) {
      Index extents{};
      std::copy(x.dims.begin(), x.dims.end(), extents.begin());
      extents[axis] = size(i);
      ctx.set_output_extents(i, {extents.data(), x.rank()});
    }
  }
  split_kernel(ctx);
}

// ---- Slice

// The first index along a dim of `extent` for `start`, clamped as ONNX specifies.
int64_t slice_first(int64_t extent, int64_t start, int64_t step) {
  if (start < 0) start += extent;
  return step > 0 ? std::clamp<int64_t>(start, 0, extent)
                  : std::clamp<int64_t>(start, -1, extent - 1);
}

// Slice, and NhwcSlice (graph::to_channels_last): the same starts, ends, axes and steps, which
// name NCHW's axes, on a channels-last [N, H, W, C] tensor.
template <bool kChannelsLast>
void slice_kernel(KernelContext& ctx) {
  const TensorRef& x_stored = ctx.input(0);
  TensorRef& y = ctx.output(0);
  const size_t rank = x_stored.rank();
  check_rank(ctx, rank);
  if (kChannelsLast && rank != 4) ctx.fail("reads channels-last tensors of rank 4");
  auto at = [&](size_t d) { return kChannelsLast ? kChannelsLastAxis[d] : d; };
  // x's extents in the axes the op names.
  Index logical{};
  for (size_t d = 0; d < rank; ++d) logical[d] = x_stored.dims[at(d)];
  TensorRef x = x_stored;
  x.dims = {logical.data(), rank};
  Index starts{}, ends{}, axes{}, steps{};
  size_t n = 0;
  size_t n_ends = 0;
  size_t n_axes = 0;
  size_t n_steps = 0;
  if (ctx.opset() >= 10 || ctx.input_count() > 1) {
    n = read_ints(ctx, ctx.input(1), starts);
    n_ends = read_ints(ctx, ctx.input(2), ends);
    if (const TensorRef* a = ctx.input_or_null(3)) n_axes = read_ints(ctx, *a, axes);
    if (const TensorRef* s = ctx.input_or_null(4)) n_steps = read_ints(ctx, *s, steps);
  } else {
    n = attr_ints_into(ctx, "starts", starts).value_or(0);
    n_ends = attr_ints_into(ctx, "ends", ends).value_or(0);
    n_axes = attr_ints_into(ctx, "axes", axes).value_or(0);
  }
  if (n_ends != n || (n_axes != 0 && n_axes != n) || (n_steps != 0 && n_steps != n)) {
    ctx.fail("starts, ends, axes and steps differ in length");
  }
  Index first{};
  Index step{};
  step.fill(1);
  // The output's extents from the values read here: inference may have known only a bound (a
  // start or an end computed when running).
  Index extents{};
  std::copy(x.dims.begin(), x.dims.end(), extents.begin());
  for (size_t i = 0; i < n; ++i) {
    const size_t axis = n_axes == 0 ? i : normalize_axis(ctx, axes[i], rank);
    step[axis] = n_steps == 0 ? 1 : steps[i];
    if (step[axis] == 0) ctx.fail("a step is 0");
    const int64_t extent = x.dims[axis];
    first[axis] = slice_first(extent, starts[i], step[axis]);
    int64_t end = ends[i] < 0 ? std::max<int64_t>(ends[i], -extent - 1) + extent : ends[i];
    end = step[axis] > 0 ? std::clamp<int64_t>(end, 0, extent)
                         : std::clamp<int64_t>(end, -1, extent - 1);
    const int64_t span = step[axis] > 0 ? end - first[axis] : first[axis] - end;
    const int64_t stride = std::abs(step[axis]);
    extents[axis] = span <= 0 ? 0 : (span + stride - 1) / stride;
  }
  Index stored_extents{};
  for (size_t d = 0; d < rank; ++d) stored_extents[at(d)] = extents[d];
  ctx.set_output_extents(0, {stored_extents.data(), rank});
  Index in_strides{};
  strides_into(x_stored.dims, in_strides);
  CopyIndex strides{};
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d) {
    const size_t m = at(d);
    strides[m] = in_strides[m] * step[d];
    if (y.dims[m] > 0) offset += first[d] * in_strides[m];
  }
  if (y.numel() == 0) return;
  gather_strided(ctx, x_stored, y, rank, copy_dims(y.dims), strides, offset);
}

bool slice_runs_channels_last(const graph::Node& n) {
  return n.inputs.size() > 1;  // starts and ends as inputs (opset 10 on), read as the op's
}

// ---- Gather family

// An index made non-negative against `extent`; fails when out of range.
int64_t index_in(const KernelContext& ctx, int64_t v, int64_t extent) {
  if (v < 0) v += extent;
  if (v < 0 || v >= extent) {
    ctx.fail("index " + std::to_string(v) + " is out of range for extent " +
             std::to_string(extent));
  }
  return v;
}

// An index tensor's element i (int32 or int64), as index_in makes it.
int64_t index_at(const KernelContext& ctx, const TensorRef& idx, size_t i, int64_t extent) {
  return index_in(
      ctx, idx.dtype == DType::int64 ? idx.as<const int64_t>()[i] : idx.as<const int32_t>()[i],
      extent);
}

void check_index_dtype(const KernelContext& ctx, const TensorRef& idx) {
  if (idx.dtype != DType::int64 && idx.dtype != DType::int32) {
    ctx.fail("indices must be int32 or int64, are " + dtype_label(idx.dtype));
  }
}

void gather_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const TensorRef& idx = ctx.input(1);
  TensorRef& y = ctx.output(0);
  check_index_dtype(ctx, idx);
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  const size_t esize = element_size(x.dtype);
  if (esize == 0) fail_dtype(ctx, x.dtype);
  const size_t outer = product(x.dims, 0, axis);
  const int64_t extent = x.dims[axis];
  const size_t block = product(x.dims, axis + 1, x.rank()) * esize;
  const size_t count = idx.numel();
  const auto* in = static_cast<const std::byte*>(x.data);
  auto* out = static_cast<std::byte*>(y.data);
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < count; ++i) {
      const auto k = static_cast<size_t>(index_at(ctx, idx, i, extent));
      std::memcpy(out + (o * count + i) * block, in + (o * static_cast<size_t>(extent) + k) * block,
                  block);
    }
  }
}

// Calls f(index_position, data_offset) for every element of `idx` (same rank as the data), where
// data_offset addresses the data element whose `axis` coordinate is the index's value. A row of
// the last dim at a time, the index dtype chosen once: the per-element work is a read, a range
// check and an offset.
template <class F>
void for_each_element_index(const KernelContext& ctx, const TensorRef& data, const TensorRef& idx,
                            size_t axis, F&& f) {
  check_rank(ctx, idx.rank());
  if (idx.rank() != data.rank()) ctx.fail("indices and data differ in rank");
  Index ds{};
  strides_into(data.dims, ds);
  const size_t n = idx.numel();
  const size_t rank = idx.rank();
  if (n == 0) return;
  const int64_t extent = data.dims[axis];
  const int64_t axis_stride = ds[axis];
  // The last dim's stride, except where it is the axis (its coordinate is the index's).
  const size_t last = rank == 0 ? 0 : rank - 1;
  const int64_t step = rank == 0 || last == axis ? 0 : ds[last];
  const auto row = static_cast<size_t>(rank == 0 ? 1 : idx.dims[last]);
  auto rows = [&](const auto* indices) {
    Index at{};
    int64_t base = 0;  // offset of the row's start in the data, the axis coordinate left out
    for (size_t start = 0; start < n; start += row) {
      for (size_t j = 0; j < row; ++j) {
        const int64_t k = index_in(ctx, indices[start + j], extent);
        f(start + j, base + static_cast<int64_t>(j) * step + k * axis_stride);
      }
      for (size_t d = last; d-- > 0;) {  // the next row: the dims before the last
        if (d != axis) base += ds[d];
        if (++at[d] < idx.dims[d]) break;
        if (d != axis) base -= at[d] * ds[d];
        at[d] = 0;
      }
    }
  };
  if (idx.dtype == DType::int64) {
    rows(idx.as<const int64_t>());
  } else {
    rows(idx.as<const int32_t>());
  }
}

void gather_elements_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const TensorRef& idx = ctx.input(1);
  TensorRef& y = ctx.output(0);
  check_index_dtype(ctx, idx);
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  dispatch_bits(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<const T>();
    T* out = y.as<T>();
    for_each_element_index(ctx, x, idx, axis, [&](size_t i, int64_t off) { out[i] = in[off]; });
  });
}

// GatherND / ScatterND address slabs of the data: indices [..., k] pick the first k coordinates
// (after batch_dims), and each tuple names a slab of the remaining dims.
struct NdLayout {
  size_t batches = 1;      // product of the batch dims
  size_t tuples = 1;       // index tuples per batch
  size_t k = 0;            // coordinates per tuple
  size_t slab = 1;         // elements per slab
  size_t batch_elems = 1;  // data elements per batch
  Index strides{};         // data strides of the k addressed dims, in elements
};

NdLayout nd_layout(const KernelContext& ctx, const TensorRef& data, const TensorRef& idx,
                   size_t batch_dims) {
  check_index_dtype(ctx, idx);
  check_rank(ctx, data.rank());
  if (idx.rank() == 0) ctx.fail("indices must have rank 1 or more");
  NdLayout l;
  l.k = static_cast<size_t>(idx.dims[idx.rank() - 1]);
  if (batch_dims + l.k > data.rank()) ctx.fail("indices address more dims than the data has");
  l.batches = product(data.dims, 0, batch_dims);
  l.tuples = product(idx.dims, batch_dims, idx.rank() - 1);
  l.slab = product(data.dims, batch_dims + l.k, data.rank());
  l.batch_elems = product(data.dims, batch_dims, data.rank());
  for (size_t j = 0; j < l.k; ++j) {
    l.strides[j] = static_cast<int64_t>(product(data.dims, batch_dims + j + 1, data.rank()));
  }
  return l;
}

// The data offset (within its batch) of tuple t of batch b.
int64_t nd_offset(const KernelContext& ctx, const NdLayout& l, const TensorRef& data,
                  const TensorRef& idx, size_t batch_dims, size_t b, size_t t) {
  int64_t off = 0;
  const size_t first = (b * l.tuples + t) * l.k;
  for (size_t j = 0; j < l.k; ++j) {
    off += index_at(ctx, idx, first + j, data.dims[batch_dims + j]) * l.strides[j];
  }
  return off;
}

void gather_nd_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const TensorRef& idx = ctx.input(1);
  TensorRef& y = ctx.output(0);
  const auto batch_dims = static_cast<size_t>(ctx.attr_int("batch_dims", 0));
  const NdLayout l = nd_layout(ctx, x, idx, batch_dims);
  dispatch_bits(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<const T>();
    T* out = y.as<T>();
    for (size_t b = 0; b < l.batches; ++b) {
      for (size_t t = 0; t < l.tuples; ++t) {
        const int64_t off = nd_offset(ctx, l, x, idx, batch_dims, b, t);
        std::copy_n(in + b * l.batch_elems + static_cast<size_t>(off), l.slab,
                    out + (b * l.tuples + t) * l.slab);
      }
    }
  });
}

// ---- Scatter family: a copy of the data, then updates written (or combined) at indices

enum class Combine { none, add, mul, max, min };

Combine combine_of(const KernelContext& ctx) {
  const std::string_view r = ctx.attr_string("reduction", "none");
  if (r == "none") return Combine::none;
  if (r == "add") return Combine::add;
  if (r == "mul") return Combine::mul;
  if (r == "max") return Combine::max;
  if (r == "min") return Combine::min;
  ctx.fail("reduction '" + std::string(r) + "' is not supported");
}

template <class T>
void combine_into(T& dst, T v, Combine c) {
  switch (c) {
    case Combine::none:
      dst = v;
      return;
    case Combine::add:
      dst = static_cast<T>(dst + v);
      return;
    case Combine::mul:
      dst = static_cast<T>(dst * v);
      return;
    case Combine::max:
      dst = std::max(dst, v);
      return;
    case Combine::min:
      dst = std::min(dst, v);
      return;
  }
}

// Calls f(T{}) with the data's type: its bits when only assigning, its arithmetic type otherwise.
template <class F>
void dispatch_scatter(const KernelContext& ctx, DType t, Combine c, F&& f) {
  if (c == Combine::none) return dispatch_bits(ctx, t, f);
  dispatch_or_fail<ArithTypes>(ctx, t, f);
}

void copy_data(const TensorRef& x, TensorRef& y) {
  if (x.data != y.data) std::memcpy(y.data, x.data, x.bytes());
}

void scatter_elements_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const TensorRef& idx = ctx.input(1);
  const TensorRef& upd = ctx.input(2);
  TensorRef& y = ctx.output(0);
  check_index_dtype(ctx, idx);
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  const Combine c = combine_of(ctx);
  copy_data(x, y);
  dispatch_scatter(ctx, x.dtype, c, [&](auto tag) {
    using T = decltype(tag);
    const T* u = upd.as<const T>();
    T* out = y.as<T>();
    if (c == Combine::none) {  // the common case, without a reduction to choose per element
      for_each_element_index(ctx, x, idx, axis, [&](size_t i, int64_t off) { out[off] = u[i]; });
      return;
    }
    for_each_element_index(ctx, x, idx, axis,
                           [&](size_t i, int64_t off) { combine_into(out[off], u[i], c); });
  });
}

void scatter_nd_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const TensorRef& idx = ctx.input(1);
  const TensorRef& upd = ctx.input(2);
  TensorRef& y = ctx.output(0);
  const Combine c = combine_of(ctx);
  const NdLayout l = nd_layout(ctx, x, idx, 0);
  copy_data(x, y);
  dispatch_scatter(ctx, x.dtype, c, [&](auto tag) {
    using T = decltype(tag);
    const T* u = upd.as<const T>();
    T* out = y.as<T>();
    for (size_t t = 0; t < l.tuples; ++t) {
      T* dst = out + nd_offset(ctx, l, x, idx, 0, 0, t);
      for (size_t e = 0; e < l.slab; ++e) combine_into(dst[e], u[t * l.slab + e], c);
    }
  });
}

// ---- Pad

enum class PadMode { constant, reflect, edge, wrap };

// Where output coordinate i of a padded dim reads: -1 for the constant.
int64_t pad_source(int64_t i, int64_t begin, int64_t extent, PadMode mode) {
  int64_t s = i - begin;
  if (s >= 0 && s < extent) return s;
  if (extent == 0) return -1;
  switch (mode) {
    case PadMode::constant:
      return -1;
    case PadMode::edge:
      return std::clamp<int64_t>(s, 0, extent - 1);
    case PadMode::wrap:
      return ((s % extent) + extent) % extent;
    case PadMode::reflect:
      if (extent == 1) return 0;
      // Reflect without repeating the edge, bouncing as often as needed.
      s = std::abs(s) % (2 * (extent - 1));
      return s < extent ? s : 2 * (extent - 1) - s;
  }
  return -1;
}

PadMode pad_mode(const KernelContext& ctx) {
  const std::string_view m = ctx.attr_string("mode", "constant");
  if (m == "constant") return PadMode::constant;
  if (m == "reflect") return PadMode::reflect;
  if (m == "edge") return PadMode::edge;
  if (m == "wrap") return PadMode::wrap;
  ctx.fail("mode '" + std::string(m) + "' is not supported");
}

// The begin pads per dim: from the pads input (opset 11, with optional axes from 18) or the
// pads / paddings attribute.
Index pad_begins(const KernelContext& ctx, size_t rank) {
  std::array<int64_t, 2 * kMaxRank> pads{};
  Index axes{};
  size_t n = 0;
  size_t n_axes = rank;
  if (ctx.opset() >= 11) {
    n = read_ints(ctx, ctx.input(1), pads);
    if (const TensorRef* a = ctx.input_or_null(3)) {
      n_axes = read_ints(ctx, *a, axes);
    } else {
      for (size_t d = 0; d < rank; ++d) axes[d] = static_cast<int64_t>(d);
    }
  } else {
    auto got = attr_ints_into(ctx, "pads", pads);
    if (!got) got = attr_ints_into(ctx, "paddings", pads);
    n = got.value_or(0);
    for (size_t d = 0; d < rank; ++d) axes[d] = static_cast<int64_t>(d);
  }
  if (n != 2 * n_axes) ctx.fail("pads has " + std::to_string(n) + " entries");
  Index begins{};
  for (size_t i = 0; i < n_axes; ++i) begins[normalize_axis(ctx, axes[i], rank)] = pads[i];
  return begins;
}

// The constant's bits in the data's dtype: the constant_value input (same dtype) or the float
// `value` attribute before opset 11.
uint64_t pad_constant(const KernelContext& ctx, DType dtype) {
  uint64_t bits = 0;
  if (ctx.opset() >= 11) {
    const TensorRef* v = ctx.input_or_null(2);
    if (v != nullptr && v->numel() > 0) std::memcpy(&bits, v->data, element_size(v->dtype));
    return bits;
  }
  const float value = ctx.attr_float("value", 0.0f);
  if (dtype == DType::float16) return to_float16(value).bits;
  dispatch_or_fail<NumericTypes>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto v = static_cast<T>(value);
    std::memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

template <class T>
void pad_as(const KernelContext& ctx, const TensorRef& x, TensorRef& y, const Index& begins,
            PadMode mode, T value) {
  const size_t rank = x.rank();
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  Index xs{};
  strides_into(x.dims, xs);
  const size_t last = rank - 1;
  const auto width = static_cast<size_t>(y.dims[last]);
  const size_t rows = width == 0 ? 0 : y.numel() / width;
  // A row whose source is inside: a constant pad copies it whole between two fills.
  const int64_t head = begins[last];
  const int64_t n = x.dims[last];
  const bool copies_rows =
      mode == PadMode::constant && head >= 0 && head + n <= static_cast<int64_t>(width);
  auto pad_rows = [&](size_t first, size_t end) {
    Index at{};
    for (size_t d = last, r = first; d-- > 0;) {
      at[d] = static_cast<int64_t>(r % static_cast<size_t>(y.dims[d]));
      r /= static_cast<size_t>(y.dims[d]);
    }
    for (size_t r = first; r < end; ++r) {
      // The source row, or none when an outer coordinate falls in the constant.
      int64_t base = 0;
      bool inside = true;
      for (size_t d = 0; d < last; ++d) {
        const int64_t s = pad_source(at[d], begins[d], x.dims[d], mode);
        inside = inside && s >= 0;
        base += s * xs[d];
      }
      T* row = out + r * width;
      if (!inside) {
        std::fill(row, row + width, value);
      } else if (copies_rows) {
        std::fill(row, row + head, value);
        std::copy(in + base, in + base + n, row + head);
        std::fill(row + head + n, row + width, value);
      } else {
        for (size_t j = 0; j < width; ++j) {
          const int64_t s = pad_source(static_cast<int64_t>(j), head, n, mode);
          row[j] = s >= 0 ? in[base + s] : value;
        }
      }
      for (size_t d = last; d-- > 0;) {
        if (++at[d] < y.dims[d]) break;
        at[d] = 0;
      }
    }
  };
  parallel_for(ctx.threads(), rows, pad_rows,
               std::max<size_t>(1, kParallelCopyBytes / std::max<size_t>(width * sizeof(T), 1)));
}

void pad_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  const size_t rank = x.rank();
  check_rank(ctx, rank);
  const PadMode mode = pad_mode(ctx);
  const Index begins = pad_begins(ctx, rank);
  if (rank == 0) return copy_data(x, y);
  if (mode != PadMode::constant && x.numel() == 0 && y.numel() > 0) {
    ctx.fail("cannot pad an empty tensor in mode " + std::string(ctx.attr_string("mode", "")));
  }
  const uint64_t bits = pad_constant(ctx, x.dtype);
  dispatch_bits(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    T value{};
    std::memcpy(&value, &bits, sizeof(T));
    pad_as<T>(ctx, x, y, begins, mode, value);
  });
}

// ---- ReverseSequence: the first sequence_lens[b] steps of each batch entry reversed

void reverse_sequence_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const TensorRef& lens = ctx.input(1);
  TensorRef& y = ctx.output(0);
  check_rank(ctx, x.rank());
  const size_t batch_axis = normalize_axis(ctx, ctx.attr_int("batch_axis", 1), x.rank());
  const size_t time_axis = normalize_axis(ctx, ctx.attr_int("time_axis", 0), x.rank());
  if (batch_axis == time_axis) ctx.fail("batch_axis and time_axis are the same");
  if (lens.numel() != static_cast<size_t>(x.dims[batch_axis])) {
    ctx.fail("sequence_lens must have one entry per batch entry");
  }
  Index xs{};
  strides_into(x.dims, xs);
  dispatch_bits(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<const T>();
    T* out = y.as<T>();
    Index at{};
    int64_t src = 0;  // the source offset of `at`, its time coordinate left out
    for (size_t i = 0; i < y.numel(); ++i) {
      const int64_t t = at[time_axis];
      const int64_t len =
          std::clamp<int64_t>(index_at(ctx, lens, static_cast<size_t>(at[batch_axis]),
                                       std::numeric_limits<int64_t>::max()),
                              0, x.dims[time_axis]);
      out[i] = in[src + (t < len ? len - 1 - t : t) * xs[time_axis]];
      for (size_t d = x.rank(); d-- > 0;) {
        if (d != time_axis) src += xs[d];
        if (++at[d] < x.dims[d]) break;
        if (d != time_axis) src -= at[d] * xs[d];
        at[d] = 0;
      }
    }
  });
}

// ---- NonZero: [rank, count], each column the index of a non-zero element in row-major order.
// The count is known once the input has been read: counted first, then the indices written at
// that stride, then reported.

template <class T>
bool is_nonzero(T v) {
  return v != T(0);
}
bool is_nonzero(Float16 v) {
  return to_float(v) != 0.0f;
}
bool is_nonzero(BFloat16 v) {
  return to_float(v) != 0.0f;
}

template <class T>
void nonzero_as(KernelContext& ctx, const TensorRef& x, TensorRef& y) {
  const T* in = x.as<const T>();
  const size_t n = x.numel();
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) count += is_nonzero(in[i]) ? 1 : 0;
  const size_t rank = x.rank();
  if (rank > 0 && count > static_cast<size_t>(y.dim(1))) ctx.fail("more non-zeros than its bound");
  int64_t* out = y.as<int64_t>();
  Index at{};
  size_t column = 0;
  for (size_t i = 0; i < n; ++i) {
    if (is_nonzero(in[i])) {
      for (size_t d = 0; d < rank; ++d) out[d * count + column] = at[d];
      ++column;
    }
    for (size_t d = rank; d-- > 0;) {  // the next element's index
      if (++at[d] < x.dims[d]) break;
      at[d] = 0;
    }
  }
  const int64_t extents[2] = {static_cast<int64_t>(rank), static_cast<int64_t>(count)};
  ctx.set_output_extents(0, extents);
}

void nonzero_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  check_rank(ctx, x.rank());
  // A scalar is [0, 1] when non-zero: the ONNX reference treats it as one element of rank 0.
  dispatch_or_fail<CastTypes>(ctx, x.dtype,
                              [&](auto tag) { nonzero_as<decltype(tag)>(ctx, x, y); });
}

// ---- Compress: the slices along `axis` (the elements of the flattened input, without one) whose
// condition is true; a condition shorter than the axis drops the slices past it. How many is known
// once the condition has been read, and reported.

void compress_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  const TensorRef& cond = ctx.input(1);
  TensorRef& y = ctx.output(0);
  if (cond.dtype != DType::boolean || cond.rank() != 1) ctx.fail("condition must be a bool vector");
  check_rank(ctx, x.rank());
  const bool flat = ctx.attribute("axis") == nullptr;
  const size_t axis = flat ? 0 : normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  const size_t outer = flat ? 1 : product(x.dims, 0, axis);
  const size_t extent = flat ? x.numel() : static_cast<size_t>(x.dims[axis]);
  const size_t inner = flat ? 1 : product(x.dims, axis + 1, x.rank());
  const size_t considered = std::min(extent, cond.numel());
  const bool* keep = cond.as<const bool>();
  const size_t kept = static_cast<size_t>(std::count(keep, keep + considered, true));
  Index extents{};
  size_t rank = 1;
  extents[0] = static_cast<int64_t>(kept);
  if (!flat) {
    rank = x.rank();
    std::copy(x.dims.begin(), x.dims.end(), extents.begin());
    extents[axis] = static_cast<int64_t>(kept);
  }
  ctx.set_output_extents(0, {extents.data(), rank});
  const size_t row = inner * element_size(x.dtype);
  const auto* in = static_cast<const std::byte*>(x.data);
  auto* out = static_cast<std::byte*>(y.data);
  for (size_t o = 0; o < outer && row > 0; ++o) {
    for (size_t i = 0; i < considered; ++i) {
      if (!keep[i]) continue;
      std::memcpy(out, in + (o * extent + i) * row, row);
      out += row;
    }
  }
}

// ---- Unique: the distinct elements of the flattened input (or the distinct slices along
// `axis`), sorted or in the order they first occur, with the index of each one's first
// occurrence, every element's (slice's) position among them and how often each occurs. How many
// is known once the input is read, and reported.

// Scratch: the slices' order by value, then per distinct one its output position and the output
// order (one of each per slice at most; a slice is an element without an axis).
uint64_t unique_workspace(const graph::Node& /*n*/, const std::vector<graph::ConcreteTensor>& in,
                          const std::vector<graph::ConcreteTensor>& /*out*/) {
  if (in.empty()) return 0;
  uint64_t n = 1;
  for (int64_t d : in[0].dims) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  return 3 * n * sizeof(int64_t);
}

template <class T>
bool ordered_before(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return !std::isnan(a);  // NaNs last, all one value
  }
  return a < b;
}

// Slices of x along an axis: slice s is x[o, s, i] for every outer o and inner i.
struct Slices {
  size_t outer = 1, count = 0, inner = 1;
  size_t at(size_t o, size_t s, size_t i) const { return (o * count + s) * inner + i; }
};

// -1, 0 or 1 as slice a orders before, with or after slice b (lexicographically).
template <class T>
int compare_slices(const T* v, const Slices& l, int64_t a, int64_t b) {
  for (size_t o = 0; o < l.outer; ++o) {
    for (size_t i = 0; i < l.inner; ++i) {
      const T x = v[l.at(o, static_cast<size_t>(a), i)];
      const T y = v[l.at(o, static_cast<size_t>(b), i)];
      if (ordered_before(x, y)) return -1;
      if (ordered_before(y, x)) return 1;
    }
  }
  return 0;
}

template <class T>
void unique_as(KernelContext& ctx, const TensorRef& x, std::optional<size_t> axis) {
  Slices l;
  if (axis) {
    l = {product(x.dims, 0, *axis), static_cast<size_t>(x.dims[*axis]),
         product(x.dims, *axis + 1, x.rank())};
  } else {
    l.count = x.numel();
  }
  const size_t n = l.count;
  const T* v = x.as<const T>();
  if (ctx.workspace().size() < 3 * n * sizeof(int64_t))
    ctx.fail("the planned scratch is too small");
  auto* by_value = reinterpret_cast<int64_t*>(ctx.workspace().data());
  int64_t* position = by_value + n;  // at a run's start in by_value: its output position
  int64_t* order = position + n;     // output position -> that run's start in by_value
  for (size_t k = 0; k < n; ++k) by_value[k] = static_cast<int64_t>(k);
  // Equal slices by index, so each run of equal ones starts at its first occurrence.
  std::sort(by_value, by_value + n, [&](int64_t a, int64_t b) {
    const int c = compare_slices(v, l, a, b);
    return c != 0 ? c < 0 : a < b;
  });
  size_t distinct = 0;
  for (size_t k = 0; k < n; ++k) {
    if (k == 0 || compare_slices(v, l, by_value[k - 1], by_value[k]) != 0)
      order[distinct++] = static_cast<int64_t>(k);
  }
  // Unsorted output: by first occurrence (each run's first index).
  if (ctx.attr_int("sorted", 1) == 0) {
    std::sort(order, order + distinct,
              [by_value](int64_t a, int64_t b) { return by_value[a] < by_value[b]; });
  }
  for (size_t p = 0; p < distinct; ++p) position[order[p]] = static_cast<int64_t>(p);
  Index extents{};
  size_t rank = 1;
  extents[0] = static_cast<int64_t>(distinct);
  if (axis) {
    rank = x.rank();
    std::copy(x.dims.begin(), x.dims.end(), extents.begin());
    extents[*axis] = static_cast<int64_t>(distinct);
  }
  if (ctx.output_or_null(0) != nullptr) ctx.set_output_extents(0, {extents.data(), rank});
  const int64_t count[1] = {static_cast<int64_t>(distinct)};
  for (size_t o : {size_t{1}, size_t{3}}) {
    if (ctx.output_or_null(o) != nullptr) ctx.set_output_extents(o, count);
  }
  TensorRef* y = ctx.output_or_null(0);
  TensorRef* first = ctx.output_or_null(1);
  TensorRef* inverse = ctx.output_or_null(2);
  TensorRef* counts = ctx.output_or_null(3);
  const Slices out{l.outer, distinct, l.inner};
  for (size_t p = 0; p < distinct; ++p) {
    const auto start = static_cast<size_t>(order[p]);
    size_t end = start + 1;
    while (end < n && compare_slices(v, l, by_value[start], by_value[end]) == 0) ++end;
    const auto s = static_cast<size_t>(by_value[start]);
    if (y != nullptr) {
      for (size_t o = 0; o < l.outer; ++o) {
        for (size_t i = 0; i < l.inner; ++i) y->as<T>()[out.at(o, p, i)] = v[l.at(o, s, i)];
      }
    }
    if (first != nullptr) first->as<int64_t>()[p] = by_value[start];
    if (counts != nullptr) counts->as<int64_t>()[p] = static_cast<int64_t>(end - start);
    if (inverse != nullptr) {
      for (size_t k = start; k < end; ++k)
        inverse->as<int64_t>()[by_value[k]] = static_cast<int64_t>(p);
    }
  }
}

void unique_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  check_rank(ctx, x.rank());
  std::optional<size_t> axis;
  if (ctx.attribute("axis") != nullptr)
    axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  dispatch_or_fail<ArithTypes>(ctx, x.dtype,
                               [&](auto tag) { unique_as<decltype(tag)>(ctx, x, axis); });
}

}  // namespace

void register_indexing(graph::OpRegistry& r) {
  graph::OpSchema& unique = r.row("", "Unique");
  unique.kernel = unique_kernel;
  unique.workspace = unique_workspace;
  unique.reports_extents = true;
  r.row("", "Compress").kernel = compress_kernel;
  r.row("", "Compress").reports_extents = true;
  r.row("", "NonZero").kernel = nonzero_kernel;
  r.row("", "NonZero").reports_extents = true;
  r.row("", "Concat").kernel = concat_kernel;
  r.row("footprint", "NhwcConcat").kernel = nhwc_concat_kernel;
  r.row("", "Concat").channels_last = "NhwcConcat";
  r.row("", "Concat").channels_last_inputs = graph::OpSchema::kVariadic;
  r.row("", "Split").kernel = split_kernel;
  r.row("footprint", "SplitToSequence").kernel = split_to_sequence_kernel;
  r.row("footprint", "SplitToSequence").reports_extents = true;
  r.row("footprint", "ConcatFromSequence").kernel = concat_from_sequence_kernel;
  graph::OpSchema& slice = r.row("", "Slice");
  slice.kernel = slice_kernel<false>;
  slice.reports_extents = true;
  slice.channels_last = "NhwcSlice";
  slice.channels_last_runs = slice_runs_channels_last;
  graph::OpSchema& nhwc_slice = r.row("footprint", "NhwcSlice");
  nhwc_slice.kernel = slice_kernel<true>;
  nhwc_slice.reports_extents = true;
  r.row("", "Gather").kernel = gather_kernel;
  r.row("", "GatherElements").kernel = gather_elements_kernel;
  r.row("", "GatherND").kernel = gather_nd_kernel;
  r.row("", "ScatterElements").kernel = scatter_elements_kernel;
  r.row("", "Scatter").kernel = scatter_elements_kernel;
  r.row("", "ScatterND").kernel = scatter_nd_kernel;
  r.row("", "Pad").kernel = pad_kernel;
  r.row("", "ReverseSequence").kernel = reverse_sequence_kernel;
  // Input 0's dtypes: rows of whole bytes copied (Concat, Split, Gather, Compress), elements of
  // 1 to 8 bytes moved (dispatch_bits), or read as numbers (NonZero, Unique). A scatter with a
  // reduction computes in ArithTypes, a subset: it fails naming a dtype outside them.
  const DTypeSet rows = DTypeSet::whole_bytes();
  for (const char* op : {"Concat", "Split", "Gather", "Compress"})
    r.row("", op).kernel_dtypes = rows;
  r.row("footprint", "NhwcConcat").kernel_dtypes = rows;
  for (const char* op : {"SplitToSequence", "ConcatFromSequence"})
    r.row("footprint", op).kernel_dtypes = rows;
  // Copies: float32 carriers of 16-bit values (graph/carry_float32.hpp) stay carriers.
  r.row("", "Concat").float32_carriers = graph::Float32Carriers::whole;
  r.row("", "Split").float32_carriers = graph::Float32Carriers::whole;
  r.row("footprint", "NhwcConcat").float32_carriers = graph::Float32Carriers::whole;
  for (const char* op : {"Slice", "GatherElements", "GatherND", "ScatterElements", "Scatter",
                         "ScatterND", "Pad", "ReverseSequence"})
    r.row("", op).kernel_dtypes = movable_dtypes();
  r.row("footprint", "NhwcSlice").kernel_dtypes = movable_dtypes();
  r.row("", "NonZero").kernel_dtypes = dtypes_of(CastTypes{});
  r.row("", "Unique").kernel_dtypes = dtypes_of(ArithTypes{});
}

}  // namespace footprint::runtime::kernels
