// Reductions (Reduce*, ArgMax/ArgMin), TopK and CumSum.
//
// Reduce* merges the input's dims into alternating groups of kept and reduced dims, then takes
// one of two loops: when the innermost group is reduced, each output element reduces contiguous
// runs; when it is kept, a block of adjacent outputs accumulates whole input rows in a stack
// buffer. Both read the input in order, so neither needs scratch memory.
#include <cmath>
#include <limits>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "index_space.hpp"
#include "parallel_for.hpp"
#include "tensor_reads.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;

// ---- Index walks over a subset of dims

// Extents and element strides of some of a tensor's dims, walked row-major.
struct Walk {
  size_t n = 0;
  Index ext{};
  Index stride{};

  void add(int64_t extent, int64_t step) {
    ext[n] = extent;
    stride[n] = step;
    ++n;
  }
  size_t count() const { return product(ext, 0, n); }
  // Offset of the i-th position.
  int64_t offset(size_t i) const {
    int64_t off = 0;
    for (size_t d = n; d-- > 0;) {
      off += static_cast<int64_t>(i % static_cast<size_t>(ext[d])) * stride[d];
      i /= static_cast<size_t>(ext[d]);
    }
    return off;
  }
  // f(offset) for every position, in order.
  template <class F>
  void each(F&& f) const {
    Index at{};
    int64_t off = 0;
    const size_t total = count();
    for (size_t i = 0; i < total; ++i) {
      f(off);
      for (size_t d = n; d-- > 0;) {
        off += stride[d];
        if (++at[d] < ext[d]) break;
        off -= at[d] * stride[d];
        at[d] = 0;
      }
    }
  }
};

// ---- Reduce*

// Each reduction: what an element contributes (pre), how contributions combine, the identity,
// and the final step given the number of reduced elements.
template <class T>
struct SumOf {
  static T init() { return T(0); }
  static T pre(T x) { return x; }
  static T combine(T a, T b) { return static_cast<T>(a + b); }
  static T post(T a, size_t /*n*/) { return a; }
};
template <class T>
struct MeanOf : SumOf<T> {
  static T post(T a, size_t n) { return n == 0 ? a : static_cast<T>(a / static_cast<T>(n)); }
};
template <class T>
struct SumSquareOf : SumOf<T> {
  static T pre(T x) { return static_cast<T>(x * x); }
};
template <class T>
struct L1Of : SumOf<T> {
  static T pre(T x) {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else {
      return static_cast<T>(x < 0 ? -x : x);
    }
  }
};
template <class T>
struct L2Of : SumSquareOf<T> {
  static T post(T a, size_t /*n*/) { return static_cast<T>(std::sqrt(static_cast<double>(a))); }
};
template <class T>
struct LogSumOf : SumOf<T> {
  static T post(T a, size_t /*n*/) { return static_cast<T>(std::log(static_cast<double>(a))); }
};
template <class T>
struct ProdOf {
  static T init() { return T(1); }
  static T pre(T x) { return x; }
  static T combine(T a, T b) { return static_cast<T>(a * b); }
  static T post(T a, size_t /*n*/) { return a; }
};
template <class T>
struct MaxOf {
  static T init() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  static T pre(T x) { return x; }
  static T combine(T a, T b) { return a < b ? b : a; }
  static T post(T a, size_t /*n*/) { return a; }
};
template <class T>
struct MinOf {
  static T init() {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  static T pre(T x) { return x; }
  static T combine(T a, T b) { return b < a ? b : a; }
  static T post(T a, size_t /*n*/) { return a; }
};
// LogSumExp shifts by the maximum (so exp cannot overflow): it has its own loops.
template <class T>
struct LogSumExpOf {};

// A contiguous run reduced with eight partial accumulators, which the compiler vectorises. R
// accumulates in ComputeType<T> (float for the 16-bit floats: they round once, on store).
template <class R, class T>
ComputeType<T> reduce_run(const T* x, size_t n) {
  using A = ComputeType<T>;
  A acc[8];
  for (A& a : acc) a = R::init();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) acc[j] = R::combine(acc[j], R::pre(widen(x[i + j])));
  }
  A a = R::init();
  for (; i < n; ++i) a = R::combine(a, R::pre(widen(x[i])));
  for (A v : acc) a = R::combine(a, v);
  return a;
}

// Input dims merged into groups, with the walks the two loops need.
struct ReduceLayout {
  Walk kept;         // every kept group, with input strides
  Walk reduced;      // every reduced group, with input strides
  size_t inner = 1;  // the innermost group's extent
  bool inner_reduced = false;
  size_t reduced_count = 1;  // elements per output
};

ReduceLayout layout_of(std::span<const int64_t> dims, const std::array<bool, kMaxRank>& reduce) {
  Index ext{};
  std::array<bool, kMaxRank> red{};
  size_t m = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (m > 0 && red[m - 1] == reduce[d]) {
      ext[m - 1] *= dims[d];
    } else {
      ext[m] = dims[d];
      red[m] = reduce[d];
      ++m;
    }
  }
  ReduceLayout l;
  int64_t stride = 1;
  Index strides{};
  for (size_t g = m; g-- > 0;) {
    strides[g] = stride;
    stride *= ext[g];
  }
  for (size_t g = 0; g < m; ++g) {
    (red[g] ? l.reduced : l.kept).add(ext[g], strides[g]);
    if (red[g]) l.reduced_count *= static_cast<size_t>(ext[g]);
  }
  if (m > 0) {
    l.inner = static_cast<size_t>(ext[m - 1]);
    l.inner_reduced = red[m - 1];
  }
  return l;
}

// Innermost group reduced: each output reduces its contiguous runs.
template <class R, class T>
void reduce_runs(const ReduceLayout& l, const T* x, T* y, int threads) {
  Walk outer = l.reduced;  // the reduced groups but the innermost, which is the run
  --outer.n;
  const size_t run = l.inner;
  parallel_for(
      threads, l.kept.count(),
      [&](size_t begin, size_t end) {
        for (size_t o = begin; o < end; ++o) {
          const T* base = x + l.kept.offset(o);
          ComputeType<T> acc = R::init();
          outer.each([&](int64_t off) { acc = R::combine(acc, reduce_run<R>(base + off, run)); });
          y[o] = narrow<T>(R::post(acc, l.reduced_count));
        }
      },
      std::max<size_t>(1, 16384 / (l.reduced_count + 1)));
}

template <class T>
void log_sum_exp_runs(const ReduceLayout& l, const T* x, T* y, int threads) {
  Walk outer = l.reduced;
  --outer.n;
  const size_t run = l.inner;
  parallel_for(threads, l.kept.count(), [&](size_t begin, size_t end) {
    for (size_t o = begin; o < end; ++o) {
      using A = ComputeType<T>;
      const T* base = x + l.kept.offset(o);
      A m = MaxOf<A>::init();
      outer.each([&](int64_t off) { m = std::max(m, reduce_run<MaxOf<A>>(base + off, run)); });
      if (!std::isfinite(m)) m = A(0);
      A sum = 0;
      outer.each([&](int64_t off) {
        for (size_t i = 0; i < run; ++i)
          sum += std::exp(widen(base[off + static_cast<int64_t>(i)]) - m);
      });
      y[o] = narrow<T>(m + std::log(sum));
    }
  });
}

// Innermost group kept: blocks of up to kBlock adjacent outputs accumulate input rows.
constexpr size_t kBlock = 256;

template <class R, class T>
void reduce_rows(const ReduceLayout& l, const T* x, T* y, int threads) {
  Walk outer = l.kept;  // the kept groups but the innermost, which is the row
  --outer.n;
  const size_t row = l.inner;
  const size_t chunks = (row + kBlock - 1) / kBlock;
  parallel_for(threads, outer.count() * chunks, [&](size_t begin, size_t end) {
    ComputeType<T> acc[kBlock];
    for (size_t b = begin; b < end; ++b) {
      const size_t j0 = (b % chunks) * kBlock;
      const size_t len = std::min(kBlock, row - j0);
      const T* base = x + outer.offset(b / chunks) + j0;
      for (size_t j = 0; j < len; ++j) acc[j] = R::init();
      l.reduced.each([&](int64_t off) {
        const T* in = base + off;
        for (size_t j = 0; j < len; ++j) acc[j] = R::combine(acc[j], R::pre(widen(in[j])));
      });
      T* out = y + (b / chunks) * row + j0;
      for (size_t j = 0; j < len; ++j) out[j] = narrow<T>(R::post(acc[j], l.reduced_count));
    }
  });
}

template <class T>
void log_sum_exp_rows(const ReduceLayout& l, const T* x, T* y, int threads) {
  Walk outer = l.kept;
  --outer.n;
  const size_t row = l.inner;
  const size_t chunks = (row + kBlock - 1) / kBlock;
  parallel_for(threads, outer.count() * chunks, [&](size_t begin, size_t end) {
    using A = ComputeType<T>;
    A m[kBlock];
    A sum[kBlock];
    for (size_t b = begin; b < end; ++b) {
      const size_t j0 = (b % chunks) * kBlock;
      const size_t len = std::min(kBlock, row - j0);
      const T* base = x + outer.offset(b / chunks) + j0;
      for (size_t j = 0; j < len; ++j) {
        m[j] = MaxOf<A>::init();
        sum[j] = 0;
      }
      l.reduced.each([&](int64_t off) {
        for (size_t j = 0; j < len; ++j)
          m[j] = std::max(m[j], widen(base[off + static_cast<int64_t>(j)]));
      });
      for (size_t j = 0; j < len; ++j) m[j] = std::isfinite(m[j]) ? m[j] : A(0);
      l.reduced.each([&](int64_t off) {
        for (size_t j = 0; j < len; ++j)
          sum[j] += std::exp(widen(base[off + static_cast<int64_t>(j)]) - m[j]);
      });
      T* out = y + (b / chunks) * row + j0;
      for (size_t j = 0; j < len; ++j) out[j] = narrow<T>(m[j] + std::log(sum[j]));
    }
  });
}

// Which dims the node reduces; false when it reduces none (noop_with_empty_axes).
bool reduced_dims(const KernelContext& ctx, size_t rank, std::array<bool, kMaxRank>& reduce) {
  const std::string_view op = ctx.node().op_type;
  const bool from_input = op == "ReduceSum" ? ctx.opset() >= 13 : ctx.opset() >= 18;
  Index axes{};
  size_t n = 0;
  if (from_input) {
    if (const TensorRef* a = ctx.input_or_null(1)) n = read_ints(ctx, *a, axes);
  } else {
    n = attr_ints_into(ctx, "axes", axes).value_or(0);
  }
  if (n == 0) {
    const bool noop = ctx.attr_int("noop_with_empty_axes", 0) != 0;
    reduce.fill(!noop);
    return !noop;
  }
  reduce.fill(false);
  for (size_t i = 0; i < n; ++i) reduce[normalize_axis(ctx, axes[i], rank)] = true;
  return true;
}

template <template <class> class Reducer, class T>
void reduce_as(KernelContext& ctx, const TensorRef& x, TensorRef& y) {
  std::array<bool, kMaxRank> reduce{};
  if (!reduced_dims(ctx, x.rank(), reduce)) {
    // No axes with noop_with_empty_axes: the input unchanged.
    std::memcpy(y.data, x.data, x.bytes());
    return;
  }
  const ReduceLayout l = layout_of(x.dims, reduce);
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  using A = ComputeType<T>;
  using R = Reducer<A>;
  constexpr bool kLse = std::is_same_v<R, LogSumExpOf<A>>;
  if (l.reduced.n == 0 || x.numel() == 0) {
    // Nothing to combine: every output is one element (or, for an empty input, none).
    const bool empty = x.numel() == 0;
    for (size_t i = 0; i < y.numel(); ++i) {
      if constexpr (kLse) {
        out[i] = empty ? narrow<T>(-std::numeric_limits<A>::infinity()) : in[i];
      } else {
        out[i] = narrow<T>(R::post(empty ? R::init() : R::pre(widen(in[i])), empty ? 0 : 1));
      }
    }
    return;
  }
  if constexpr (kLse) {
    (l.inner_reduced ? log_sum_exp_runs<T> : log_sum_exp_rows<T>)(l, in, out, ctx.threads());
  } else {
    (l.inner_reduced ? reduce_runs<R, T> : reduce_rows<R, T>)(l, in, out, ctx.threads());
  }
}

template <template <class> class Reducer, class Types = ArithTypes>
void reduce_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  check_rank(ctx, x.rank());
  dispatch_with_16bit<Types>(ctx, x.dtype,
                             [&](auto tag) { reduce_as<Reducer, decltype(tag)>(ctx, x, y); });
}

// ---- ArgMax / ArgMin

template <bool kMax, class T>
void arg_reduce_as(KernelContext& ctx, const TensorRef& x, TensorRef& y) {
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  const bool last = ctx.attr_int("select_last_index", 0) != 0;
  const AxisView v = around(x.dims, axis);
  const T* in = x.as<const T>();
  int64_t* out = y.as<int64_t>();
  for (size_t o = 0; o < v.outer; ++o) {
    for (size_t j = 0; j < v.inner; ++j) {
      const T* p = in + o * v.extent * v.inner + j;
      size_t best = 0;
      for (size_t k = 1; k < v.extent; ++k) {
        const T a = p[k * v.inner];
        const T b = p[best * v.inner];
        const bool better = kMax ? (last ? a >= b : a > b) : (last ? a <= b : a < b);
        if (better) best = k;
      }
      out[o * v.inner + j] = static_cast<int64_t>(best);
    }
  }
}

template <bool kMax>
void arg_reduce_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  if (x.numel() == 0) return;
  dispatch_or_fail<ArithTypes>(ctx, x.dtype,
                               [&](auto tag) { arg_reduce_as<kMax, decltype(tag)>(ctx, x, y); });
}

// ---- TopK: the K best along an axis, by a heap kept in the indices output itself

// Indices of one row, `stride` apart in the indices output.
struct StridedIndices {
  int64_t* at;
  size_t stride;
  int64_t& operator[](size_t i) const { return at[i * stride]; }
};

// The K best of a row kept as a heap with the worst at the root, then sorted best first. Ties
// go to the lower index, as ONNX specifies.
template <class T>
void top_k_row(const T* x, size_t n, size_t stride, size_t k, bool largest, StridedIndices heap) {
  auto better = [&](int64_t a, int64_t b) {
    const T va = x[static_cast<size_t>(a) * stride];
    const T vb = x[static_cast<size_t>(b) * stride];
    return (largest ? va > vb : va < vb) || (va == vb && a < b);
  };
  auto sift_down = [&](size_t i, size_t size) {
    while (true) {
      size_t worst = i;
      for (size_t c = 2 * i + 1; c <= 2 * i + 2 && c < size; ++c) {
        if (better(heap[worst], heap[c])) worst = c;
      }
      if (worst == i) return;
      std::swap(heap[i], heap[worst]);
      i = worst;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    const auto v = static_cast<int64_t>(i);
    if (i < k) {
      // Sift up the new leaf while it is worse than its parent.
      heap[i] = v;
      for (size_t c = i; c > 0 && better(heap[(c - 1) / 2], heap[c]); c = (c - 1) / 2) {
        std::swap(heap[c], heap[(c - 1) / 2]);
      }
    } else if (k > 0 && better(v, heap[0])) {
      heap[0] = v;
      sift_down(0, k);
    }
  }
  // Heap sort: the worst goes last each time, so the front ends best first.
  for (size_t size = k; size > 1; --size) {
    std::swap(heap[0], heap[size - 1]);
    sift_down(0, size - 1);
  }
}

template <class T>
void top_k_as(KernelContext& ctx, const TensorRef& x, TensorRef& values, TensorRef& indices) {
  const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank());
  const bool largest = ctx.attr_int("largest", 1) != 0;
  const AxisView v = around(x.dims, axis);
  const auto k = static_cast<size_t>(values.dims[axis]);
  if (k > v.extent) ctx.fail("k is larger than the axis");
  const T* in = x.as<const T>();
  T* out = values.as<T>();
  int64_t* idx = indices.as<int64_t>();
  for (size_t o = 0; o < v.outer; ++o) {
    for (size_t j = 0; j < v.inner; ++j) {
      const T* row = in + o * v.extent * v.inner + j;
      const size_t at = o * k * v.inner + j;
      const StridedIndices heap{idx + at, v.inner};
      top_k_row(row, v.extent, v.inner, k, largest, heap);
      for (size_t t = 0; t < k; ++t)
        out[at + t * v.inner] = row[static_cast<size_t>(heap[t]) * v.inner];
    }
  }
}

void top_k_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& values = ctx.output(0);
  TensorRef& indices = ctx.output(1);
  if (ctx.has_input(1)) {
    // K read when running: the outputs were given their bound (the axis), and take K of it.
    check_rank(ctx, x.rank());
    const size_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), x.rank());
    const int64_t k = scalar_int(ctx, ctx.input(1));
    if (k < 0 || k > x.dims[axis]) {
      ctx.fail("k = " + std::to_string(k) + " is outside [0, " + std::to_string(x.dims[axis]) +
               "]");
    }
    Index extents{};
    std::copy(values.dims.begin(), values.dims.end(), extents.begin());
    extents[axis] = k;
    ctx.set_output_extents(0, {extents.data(), x.rank()});
    ctx.set_output_extents(1, {extents.data(), x.rank()});
  }
  if (values.numel() == 0) return;
  dispatch_or_fail<ArithTypes>(ctx, x.dtype,
                               [&](auto tag) { top_k_as<decltype(tag)>(ctx, x, values, indices); });
}

// ---- CumSum

template <class T>
void cumsum_as(KernelContext& ctx, const TensorRef& x, TensorRef& y) {
  const size_t axis = normalize_axis(ctx, scalar_int(ctx, ctx.input(1)), x.rank());
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.attr_int("reverse", 0) != 0;
  const AxisView v = around(x.dims, axis);
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  for (size_t o = 0; o < v.outer; ++o) {
    const size_t base = o * v.extent * v.inner;
    for (size_t t = 0; t < v.extent; ++t) {
      const size_t k = reverse ? v.extent - 1 - t : t;
      T* row = out + base + k * v.inner;
      const T* cur = in + base + k * v.inner;
      if (t == 0) {
        for (size_t j = 0; j < v.inner; ++j) row[j] = exclusive ? T(0) : cur[j];
        continue;
      }
      const size_t kp = reverse ? k + 1 : k - 1;
      const T* prev_out = out + base + kp * v.inner;
      const T* add = exclusive ? in + base + kp * v.inner : cur;
      for (size_t j = 0; j < v.inner; ++j) row[j] = static_cast<T>(prev_out[j] + add[j]);
    }
  }
}

void cumsum_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  if (x.numel() == 0) return;
  dispatch_or_fail<ArithTypes>(ctx, x.dtype,
                               [&](auto tag) { cumsum_as<decltype(tag)>(ctx, x, y); });
}

}  // namespace

void register_reduce(graph::OpRegistry& r) {
  auto set = [&](std::string_view op, graph::KernelFn k) { r.row("", op).kernel = k; };
  set("ReduceSum", reduce_kernel<SumOf>);
  set("ReduceMean", reduce_kernel<MeanOf>);
  set("ReduceMax", reduce_kernel<MaxOf>);
  set("ReduceMin", reduce_kernel<MinOf>);
  set("ReduceProd", reduce_kernel<ProdOf>);
  set("ReduceL1", reduce_kernel<L1Of>);
  set("ReduceL2", reduce_kernel<L2Of>);
  set("ReduceSumSquare", reduce_kernel<SumSquareOf>);
  set("ReduceLogSum", reduce_kernel<LogSumOf>);
  set("ReduceLogSumExp", reduce_kernel<LogSumExpOf, RealTypes>);
  set("ArgMax", arg_reduce_kernel<true>);
  set("ArgMin", arg_reduce_kernel<false>);
  set("CumSum", cumsum_kernel);
  set("TopK", top_k_kernel);
  r.row("", "TopK").reports_extents = true;  // K read when running
  // What each kernel dispatches on, for input 0: Reduce* take the 16-bit floats, accumulated in
  // float (dispatch_with_16bit).
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum"})
    r.row("", op).kernel_dtypes = dtypes_with_16bit(ArithTypes{});
  r.row("", "ReduceLogSumExp").kernel_dtypes = dtypes_with_16bit(RealTypes{});
  for (const char* op : {"ArgMax", "ArgMin", "CumSum", "TopK"})
    r.row("", op).kernel_dtypes = dtypes_of(ArithTypes{});
}

}  // namespace footprint::runtime::kernels
