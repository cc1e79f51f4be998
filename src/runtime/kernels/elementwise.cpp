// Elementwise kernels: unary math and activations, binary ops with numpy broadcasting,
// comparisons and logic (bool outputs), variadic Sum/Max/Min/Mean, Clip, Where, Cast/CastLike.
//
// Every op is a small functor (built once per call from the node's attributes) applied by one of
// a few loop templates, so each loop is a plain indexed loop the compiler vectorises (float loops
// at the CPU's widest vectors: with_wide_vectors in wide_vectors.hpp). Unary and binary ops are
// declared in_place here, beside their kernels: output 0 may be input 0's buffer, which these
// loops allow (each element is read before it is written, at the same index).
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "broadcast.hpp"
#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "float16.hpp"
#include "footprint/core/minifloat.hpp"
#include "index_space.hpp"
#include "parallel_for.hpp"
#include "simd_math.hpp"
#include "tensor_reads.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;

// ---- Unary

// Whether Op has a vector float form (exp, sigmoid, tanh: loops over libm calls do not
// vectorise).
template <class Op>
concept HasVectorForm = requires(const Op& op, simd::f32x4 v) {
  op.vec(v);
};

// Applies `op` to every element; 16-bit floats go through float.
template <class T, class Op>
void map_unary(const KernelContext& ctx, const TensorRef& x, TensorRef& y, const Op& op) {
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  parallel_for(ctx.threads(), x.numel(), [&](size_t begin, size_t end) {
    if constexpr (std::is_same_v<T, float> && HasVectorForm<Op>) {
      simd::map(in + begin, out + begin, end - begin, [&](auto v) { return op.vec(v); });
    } else if constexpr (std::is_same_v<T, float>) {
      with_wide_vectors([&] {
        for (size_t i = begin; i < end; ++i) out[i] = static_cast<T>(op(in[i]));
      });
    } else {
      for (size_t i = begin; i < end; ++i) out[i] = static_cast<T>(op(in[i]));
    }
  });
}

// 16-bit floats a block at a time: widened into floats (F16C where the CPU has it), the float
// op (its vector form where it has one, as on float32 tensors), rounded once on store. A block is
// read before it is written, so the step may run in place.
constexpr size_t k16BitBlock = 256;

template <class T, class Op>
void map_unary_16(const KernelContext& ctx, const TensorRef& x, TensorRef& y, const Op& op) {
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  parallel_for(ctx.threads(), x.numel(), [&](size_t begin, size_t end) {
    float block[k16BitBlock];
    for (size_t at = begin; at < end; at += k16BitBlock) {
      const size_t n = std::min(k16BitBlock, end - at);
      widen_row(in + at, block, n);
      if constexpr (HasVectorForm<Op>) {
        simd::map(block, block, n, [&](auto v) { return op.vec(v); });
      } else {
        for (size_t i = 0; i < n; ++i) block[i] = static_cast<float>(op(block[i]));
      }
      narrow_row(block, out + at, n);
    }
  });
}

template <class Op>
void unary_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  const Op op(ctx);
  // Ops on reals run on 16-bit floats through float.
  if constexpr (contains<float>(typename Op::types{})) {
    if (x.dtype == DType::float16) return map_unary_16<Float16>(ctx, x, y, op);
    if (x.dtype == DType::bfloat16) return map_unary_16<BFloat16>(ctx, x, y, op);
  }
  dispatch_or_fail<typename Op::types>(ctx, x.dtype,
                                       [&](auto tag) { map_unary<decltype(tag)>(ctx, x, y, op); });
}

// An op without attributes: F over the dtypes in Types, and V on float vectors when given.
template <class Types, auto F, auto V = nullptr>
struct Pure {
  using types = Types;
  explicit Pure(const KernelContext& /*ctx*/) {}
  template <class T>
  T operator()(T x) const {
    return static_cast<T>(F(x));
  }
  template <class Vec>
  Vec vec(Vec x) const requires(!std::is_same_v<decltype(V), std::nullptr_t>) {
    return V(x);
  }
};

constexpr auto kAbs = [](auto x) {
  using T = decltype(x);
  if constexpr (std::is_unsigned_v<T>) {
    return x;
  } else {
    return static_cast<T>(x < 0 ? -x : x);
  }
};
constexpr auto kNeg = [](auto x) { return static_cast<decltype(x)>(-x); };
constexpr auto kSign = [](auto x) {
  using T = decltype(x);
  return static_cast<T>(x > T(0) ? 1 : (x < T(0) ? -1 : 0));
};
constexpr auto kRelu = [](auto x) { return x > decltype(x)(0) ? x : decltype(x)(0); };
constexpr auto kSigmoid = [](auto x) {
  using T = decltype(x);
  // exp of a non-positive argument only, so large |x| neither overflows nor loses the tail.
  const T e = std::exp(-std::abs(x));
  return x >= 0 ? T(1) / (T(1) + e) : e / (T(1) + e);
};
constexpr auto kSoftplus = [](auto x) {
  using T = decltype(x);
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
};

struct Not {
  using types = TypeList<bool>;
  explicit Not(const KernelContext& /*ctx*/) {}
  bool operator()(bool x) const { return !x; }
};

// BitwiseNot (opset 18): every bit of an integer flipped.
struct BitwiseNot {
  using types = IntTypes;
  explicit BitwiseNot(const KernelContext& /*ctx*/) {}
  template <class T>
  T operator()(T x) const {
    return static_cast<T>(~x);
  }
};

struct LeakyRelu {
  using types = RealTypes;
  float alpha;
  explicit LeakyRelu(const KernelContext& ctx) : alpha(ctx.attr_float("alpha", 0.01f)) {}
  template <class T>
  T operator()(T x) const {
    return x >= T(0) ? x : static_cast<T>(alpha) * x;
  }
};

struct Elu {
  using types = RealTypes;
  float alpha;
  explicit Elu(const KernelContext& ctx) : alpha(ctx.attr_float("alpha", 1.0f)) {}
  template <class T>
  T operator()(T x) const {
    return x > T(0) ? x : static_cast<T>(alpha) * (std::exp(x) - T(1));
  }
};

struct Celu {
  using types = RealTypes;
  float alpha;
  explicit Celu(const KernelContext& ctx) : alpha(ctx.attr_float("alpha", 1.0f)) {}
  template <class T>
  T operator()(T x) const {
    const auto a = static_cast<T>(alpha);
    return std::max(T(0), x) + std::min(T(0), a * (std::exp(x / a) - T(1)));
  }
};

struct Selu {
  using types = RealTypes;
  float alpha, gamma;
  explicit Selu(const KernelContext& ctx)
      : alpha(ctx.attr_float("alpha", 1.67326319217681884765625f)),
        gamma(ctx.attr_float("gamma", 1.05070102214813232421875f)) {}
  template <class T>
  T operator()(T x) const {
    const auto g = static_cast<T>(gamma);
    return x > T(0) ? g * x : g * (static_cast<T>(alpha) * std::exp(x) - static_cast<T>(alpha));
  }
};

// HardSigmoid, and HardSwish as x * HardSigmoid(x) with alpha 1/6, beta 0.5.
struct HardSigmoid {
  using types = RealTypes;
  float alpha, beta;
  explicit HardSigmoid(const KernelContext& ctx)
      : alpha(ctx.attr_float("alpha", 0.2f)), beta(ctx.attr_float("beta", 0.5f)) {}
  template <class T>
  T operator()(T x) const {
    return std::max(T(0), std::min(T(1), static_cast<T>(alpha) * x + static_cast<T>(beta)));
  }
};

struct HardSwish {
  using types = RealTypes;
  explicit HardSwish(const KernelContext& /*ctx*/) {}
  template <class T>
  T operator()(T x) const {
    return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
  }
};

struct ThresholdedRelu {
  using types = RealTypes;
  float alpha;
  explicit ThresholdedRelu(const KernelContext& ctx) : alpha(ctx.attr_float("alpha", 1.0f)) {}
  template <class T>
  T operator()(T x) const {
    return x > static_cast<T>(alpha) ? x : T(0);
  }
};

struct Shrink {
  using types = ArithTypes;
  float bias, lambd;
  explicit Shrink(const KernelContext& ctx)
      : bias(ctx.attr_float("bias", 0.0f)), lambd(ctx.attr_float("lambd", 0.5f)) {}
  template <class T>
  T operator()(T x) const {
    const auto v = static_cast<double>(x);
    const double r = v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0);
    return static_cast<T>(r);
  }
};

struct Gelu {
  using types = RealTypes;
  bool tanh_form;
  explicit Gelu(const KernelContext& ctx)
      : tanh_form(ctx.attr_string("approximate", "none") == "tanh") {}
  template <class T>
  T operator()(T x) const {
    if (tanh_form) {
      const T k = static_cast<T>(0.7978845608028654);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + std::tanh(k * (x + static_cast<T>(0.044715) * x * x * x)));
    }
    return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(0.7071067811865476)));
  }
  template <class Vec>
  Vec vec(Vec x) const {
    if (tanh_form) {
      return 0.5f * x * (1.0f + simd::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    }
    return 0.5f * x * (1.0f + simd::erf(x * 0.7071067811865476f));
  }
};

template <class T>
double to_double(T v) {
  if constexpr (is_16bit_float<T>) {
    return static_cast<double>(to_float(v));
  } else {
    return static_cast<double>(v);
  }
}

// ---- Classification of reals (bool outputs)

template <class Test>
void classify_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  bool* out = ctx.output(0).as<bool>();
  const Test test(ctx);
  const size_t n = x.numel();
  auto run = [&](const auto* in) {
    for (size_t i = 0; i < n; ++i) out[i] = test(to_double(in[i]));
  };
  switch (x.dtype) {
    case DType::float32:
      return run(x.as<const float>());
    case DType::float64:
      return run(x.as<const double>());
    case DType::float16:
      return run(x.as<const Float16>());
    case DType::bfloat16:
      return run(x.as<const BFloat16>());
    default:
      fail_dtype(ctx, x.dtype);
  }
}

struct IsNaN {
  explicit IsNaN(const KernelContext& /*ctx*/) {}
  bool operator()(double v) const { return std::isnan(v); }
};

struct IsInf {
  bool positive, negative;
  explicit IsInf(const KernelContext& ctx)
      : positive(ctx.attr_int("detect_positive", 1) != 0),
        negative(ctx.attr_int("detect_negative", 1) != 0) {}
  bool operator()(double v) const { return std::isinf(v) && (v > 0 ? positive : negative); }
};

// ---- Binary with broadcasting

// One row: contiguous and scalar-operand cases get their own loops, which the compiler
// vectorises.
template <class TA, class TB, class TO, class F>
void binary_row(const TA* x, const TB* z, TO* out, int64_t sa, int64_t sb, size_t n, const F& f) {
  if (sa == 1 && sb == 1) {
    for (size_t i = 0; i < n; ++i) out[i] = f(x[i], z[i]);
  } else if (sa == 1 && sb == 0) {
    const TB v = z[0];
    for (size_t i = 0; i < n; ++i) out[i] = f(x[i], v);
  } else if (sa == 0 && sb == 1) {
    const TA v = x[0];
    for (size_t i = 0; i < n; ++i) out[i] = f(v, z[i]);
  } else {
    for (size_t i = 0; i < n; ++i) {
      const auto k = static_cast<int64_t>(i);
      out[i] = f(x[k * sa], z[k * sb]);
    }
  }
}

// Float rows (Add, Mul, Div of activations dominate CNN profiles) run at the widest vectors.
template <class TA, class TB, class TO, class F>
void binary_rows(const BroadcastPlan<2>& p, const TA* a, const TB* b, TO* y, int threads,
                 const F& f) {
  const int64_t sa = p.inner_stride(0);
  const int64_t sb = p.inner_stride(1);
  constexpr bool kWide = std::is_same_v<TA, float> && std::is_same_v<TB, float>;
  broadcast_rows<2, kWide>(p, threads, [&](const std::array<int64_t, 2>& off, size_t o, size_t n) {
    binary_row(a + off[0], b + off[1], y + o, sa, sb, n, f);
  });
}

// B's dims as they align with the output: right-aligned (numpy), or from `axis` for the legacy
// broadcast of opset < 7.
std::span<const int64_t> aligned_dims(const KernelContext& ctx, const TensorRef& b, size_t out_rank,
                                      Index& buffer) {
  const auto* axis_attr = ctx.attribute("axis");
  const bool legacy = ctx.opset() < 7 && ctx.attr_int("broadcast", 0) != 0;
  if (!legacy || axis_attr == nullptr) return b.dims;
  const size_t axis = normalize_axis(ctx, axis_attr->i, out_rank);
  if (axis + b.rank() > out_rank) ctx.fail("B does not fit the legacy broadcast at axis");
  std::fill_n(buffer.begin(), out_rank, 1);
  std::copy(b.dims.begin(), b.dims.end(), buffer.begin() + static_cast<long>(axis));
  return {buffer.data(), out_rank};
}

// How A and B broadcast to Y, or a failure naming the node.
BroadcastPlan<2> binary_plan(const KernelContext& ctx, const TensorRef& a, const TensorRef& b,
                             const TensorRef& y) {
  Index padded{};
  BroadcastPlan<2> p;
  if (!plan_broadcast<2>(y.dims, {a.dims, aligned_dims(ctx, b, y.rank(), padded)}, p)) {
    check_rank(ctx, y.rank());
    ctx.fail("the inputs do not broadcast to the output");
  }
  return p;
}

template <class TA, class TB, class TO, class F>
void apply_binary(const KernelContext& ctx, const TensorRef& a, const TensorRef& b, TensorRef& y,
                  const F& f) {
  binary_rows(binary_plan(ctx, a, b, y), a.as<const TA>(), b.as<const TB>(), y.as<TO>(),
              ctx.threads(), f);
}

// n elements of a 16-bit operand `stride` apart from element `first` of its row, as floats.
template <class H>
void widen_strided(const H* row, int64_t stride, size_t first, size_t n, float* out) {
  if (stride == 1) {
    widen_row(row + first, out, n);
  } else if (stride == 0) {
    std::fill_n(out, n, to_float(row[0]));
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = to_float(row[static_cast<int64_t>(first + i) * stride]);
  }
}

// A binary op with a real result on 16-bit floats (H), a block of each row at a time: both
// operands widened, the float function f, the results rounded once on store. A block of the
// output is written after its operands' blocks are read, so the step may run in place.
template <class H, class F>
void apply_binary_16(const KernelContext& ctx, const TensorRef& a, const TensorRef& b, TensorRef& y,
                     const F& f) {
  const BroadcastPlan<2> p = binary_plan(ctx, a, b, y);
  const int64_t sa = p.inner_stride(0);
  const int64_t sb = p.inner_stride(1);
  const H* x = a.as<const H>();
  const H* z = b.as<const H>();
  H* out = y.as<H>();
  broadcast_rows<2>(p, ctx.threads(), [&](const std::array<int64_t, 2>& off, size_t o, size_t n) {
    float fa[k16BitBlock];
    float fb[k16BitBlock];
    for (size_t at = 0; at < n; at += k16BitBlock) {
      const size_t m = std::min(k16BitBlock, n - at);
      widen_strided(x + off[0], sa, at, m, fa);
      widen_strided(z + off[1], sb, at, m, fb);
      for (size_t i = 0; i < m; ++i) fa[i] = f(fa[i], fb[i]);
      narrow_row(fa, out + o + at, m);
    }
  });
}

// f on 16-bit floats (H) through float: real results go back to H, bool results stay.
template <class H, class F>
auto through_float(F f) {
  return [f](H a, H b) {
    const auto r = f(to_float(a), to_float(b));
    if constexpr (std::is_same_v<decltype(r), const float>) {
      return from_float<H>(r);
    } else {
      return r;
    }
  };
}

// The element function of Op for T; for 16-bit floats, Op's float function through float.
template <class T, class Op>
auto element_fn(const Op& op) {
  if constexpr (is_16bit_float<T>) {
    return through_float<T>(op.template fn<float>());
  } else {
    return op.template fn<T>();
  }
}

// Same-dtype binary ops; Op::fn<T>() gives the element function for T.
template <class Op>
void binary_kernel(KernelContext& ctx) {
  const TensorRef& a = ctx.input(0);
  const TensorRef& b = ctx.input(1);
  TensorRef& y = ctx.output(0);
  if (a.dtype != b.dtype) {
    ctx.fail("the inputs differ in dtype: " + dtype_label(a.dtype) + " and " +
             dtype_label(b.dtype));
  }
  const Op op(ctx);
  dispatch_with_16bit<typename Op::types>(ctx, a.dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto f = element_fn<T>(op);
    using R = std::invoke_result_t<decltype(f), T, T>;
    if constexpr (is_16bit_float<T> && std::is_same_v<R, T>) {
      apply_binary_16<T>(ctx, a, b, y, op.template fn<ComputeType<T>>());
    } else {
      apply_binary<T, T, R>(ctx, a, b, y, f);
    }
  });
}

// An op without attributes: F(a, b) cast back to T.
template <class Types, auto F>
struct Arith {
  using types = Types;
  explicit Arith(const KernelContext& /*ctx*/) {}
  template <class T>
  auto fn() const {
    return [](T a, T b) { return static_cast<T>(F(a, b)); };
  }
};

// A comparison or logic op: bool results.
template <class Types, auto F>
struct Predicate {
  using types = Types;
  explicit Predicate(const KernelContext& /*ctx*/) {}
  template <class T>
  auto fn() const {
    return [](T a, T b) -> bool { return F(a, b); };
  }
};

// Integers wrap as two's complement (onnxruntime's and numpy's results) instead of overflowing,
// which C++ leaves undefined for signed types and for narrow unsigned ones (promoted to int).
template <class T, class Op>
constexpr T wrapped(T a, T b, Op op) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return static_cast<T>(op(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return op(a, b);
  }
}
// Captureless, so each is a structural type: they are template arguments (Arith<Types, F>).
constexpr auto kAdd = [](auto a, auto b) { return wrapped(a, b, std::plus<>()); };
constexpr auto kSub = [](auto a, auto b) { return wrapped(a, b, std::minus<>()); };
constexpr auto kMul = [](auto a, auto b) { return wrapped(a, b, std::multiplies<>()); };
// Integer division truncates (C, as ONNX). The two quotients C leaves undefined (x86 traps on
// both: SIGFPE) are defined instead: by zero gives 0, and the smallest value by -1 wraps to
// itself, as every other signed product in two's complement does (numpy gives the same).
constexpr auto kDiv = [](auto a, auto b) {
  using T = decltype(a);
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    }
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
};
// NaN propagates, as numpy's maximum/minimum.
constexpr auto kMax = [](auto a, auto b) { return (a < b || b != b) ? b : a; };
constexpr auto kMin = [](auto a, auto b) { return (b < a || b != b) ? b : a; };
constexpr auto kPRelu = [](auto x, auto slope) {
  using T = decltype(x);
  return x < T(0) ? static_cast<T>(slope * x) : x;
};
constexpr auto kEqual = [](auto a, auto b) { return a == b; };
constexpr auto kLess = [](auto a, auto b) { return a < b; };
constexpr auto kLessOrEqual = [](auto a, auto b) { return a <= b; };
constexpr auto kGreater = [](auto a, auto b) { return a > b; };
constexpr auto kGreaterOrEqual = [](auto a, auto b) { return a >= b; };
constexpr auto kAnd = [](bool a, bool b) { return a && b; };
constexpr auto kOr = [](bool a, bool b) { return a || b; };
constexpr auto kXor = [](bool a, bool b) { return a != b; };

// Mod: fmod=1 takes the dividend's sign (C's fmod / %), fmod=0 the divisor's (Python's %).
struct Mod {
  using types = ArithTypes;
  bool c_style;
  explicit Mod(const KernelContext& ctx) : c_style(ctx.attr_int("fmod", 0) != 0) {}
  template <class T>
  auto fn() const {
    return [c = c_style](T a, T b) -> T {
      if constexpr (std::is_integral_v<T>) {
        // By zero: 0, as Div; by -1: 0 (the smallest value % -1 traps on x86).
        if (b == 0) return T(0);
        if constexpr (std::is_signed_v<T>) {
          if (b == T(-1)) return T(0);
        }
        auto r = static_cast<T>(a % b);
        if (!c && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      } else {
        T r = std::fmod(a, b);
        if (!c && r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
      }
    };
  }
};

struct BitShift {
  using types = UnsignedTypes;
  bool left;
  explicit BitShift(const KernelContext& ctx) : left(ctx.attr_string("direction", "") == "LEFT") {}
  template <class T>
  auto fn() const {
    return [l = left](T a, T b) -> T {
      constexpr T kBits = sizeof(T) * 8;
      if (b >= kBits) return T(0);  // a full-width shift is undefined in C++
      return static_cast<T>(l ? a << b : a >> b);
    };
  }
};

// BitwiseAnd, BitwiseOr, BitwiseXor (opset 18) on integers of one dtype.
enum class Bits { bit_and, bit_or, bit_xor };

template <Bits kOp>
struct Bitwise {
  using types = IntTypes;
  explicit Bitwise(const KernelContext& /*ctx*/) {}
  template <class T>
  auto fn() const {
    return [](T a, T b) -> T {
      if constexpr (kOp == Bits::bit_and) return static_cast<T>(a & b);
      if constexpr (kOp == Bits::bit_or) return static_cast<T>(a | b);
      return static_cast<T>(a ^ b);
    };
  }
};

// Pow: the exponent may have another dtype than the base; the result has the base's.
// A 16-bit base computes in float (an exponent of 2 squares, as float's), rounded once on store.
template <class TB>
void pow_with_base(KernelContext& ctx, const TensorRef& a, const TensorRef& b, TensorRef& y) {
  dispatch_with_16bit<ArithTypes>(ctx, b.dtype, [&](auto tag) {
    using TE = decltype(tag);
    if constexpr (is_16bit_float<TB>) {
      apply_binary<TB, TE, TB>(ctx, a, b, y, [](TB x, TE e) {
        const float base = to_float(x);
        const auto exponent = static_cast<float>(widen(e));
        return from_float<TB>(exponent == 2.0f ? base * base : std::pow(base, exponent));
      });
    } else if constexpr (is_16bit_float<TE>) {
      apply_binary<TB, TE, TB>(ctx, a, b, y, [](TB x, TE e) {
        return static_cast<TB>(std::pow(static_cast<double>(x), static_cast<double>(widen(e))));
      });
    } else if constexpr (std::is_same_v<TB, float> && std::is_same_v<TE, float>) {
      apply_binary<float, float, float>(
          ctx, a, b, y, [](float x, float e) { return e == 2.0f ? x * x : std::pow(x, e); });
    } else {
      apply_binary<TB, TE, TB>(ctx, a, b, y, [](TB x, TE e) {
        return static_cast<TB>(std::pow(static_cast<double>(x), static_cast<double>(e)));
      });
    }
  });
}

void pow_kernel(KernelContext& ctx) {
  const TensorRef& a = ctx.input(0);
  const TensorRef& b = ctx.input(1);
  TensorRef& y = ctx.output(0);
  dispatch_with_16bit<ArithTypes>(ctx, a.dtype,
                                  [&](auto tag) { pow_with_base<decltype(tag)>(ctx, a, b, y); });
}

// ---- Variadic Sum / Max / Min / Mean: fold the inputs pairwise into the output

template <class T>
void broadcast_into(const KernelContext& ctx, const TensorRef& x, TensorRef& y) {
  BroadcastPlan<1> p;
  if (!plan_broadcast<1>(y.dims, {x.dims}, p)) {
    check_rank(ctx, y.rank());
    ctx.fail("an input does not broadcast to the output");
  }
  const T* in = x.as<const T>();
  T* out = y.as<T>();
  const int64_t s = p.inner_stride(0);
  broadcast_rows(p, ctx.threads(), [&](const std::array<int64_t, 1>& off, size_t o, size_t n) {
    for (size_t i = 0; i < n; ++i) out[o + i] = in[off[0] + static_cast<int64_t>(i) * s];
  });
}

template <auto F, bool kMean = false>
void variadic_kernel(KernelContext& ctx) {
  TensorRef& y = ctx.output(0);
  const DType dtype = ctx.input(0).dtype;
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    if (ctx.input(i).dtype != dtype) ctx.fail("the inputs differ in dtype");
  }
  dispatch_with_16bit<ArithTypes>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    const auto f = element_fn<T>(Arith<ArithTypes, F>(ctx));
    // The first pair broadcasts straight into the output: copying input 0 there first would
    // cost a pass over the output for the common two-input Sum.
    size_t next = 1;
    if (ctx.input_count() == 1) {
      broadcast_into<T>(ctx, ctx.input(0), y);
    } else {
      apply_binary<T, T, T>(ctx, ctx.input(0), ctx.input(1), y, f);
      next = 2;
    }
    for (size_t i = next; i < ctx.input_count(); ++i)
      apply_binary<T, T, T>(ctx, y, ctx.input(i), y, f);
    if constexpr (kMean) {
      const auto n = static_cast<float>(ctx.input_count());
      T* out = y.as<T>();
      for (size_t i = 0; i < y.numel(); ++i) {
        if constexpr (is_16bit_float<T>) {
          out[i] = from_float<T>(to_float(out[i]) / n);
        } else {
          out[i] = static_cast<T>(out[i] / static_cast<T>(n));
        }
      }
    }
  });
}

// ---- Clip: bounds from attributes before opset 11, optional scalar inputs from 11

template <class T>
void clip_as(KernelContext& ctx, const TensorRef& x, TensorRef& y) {
  T lo = std::numeric_limits<T>::lowest();
  T hi = std::numeric_limits<T>::max();
  if (ctx.opset() < 11) {
    lo = static_cast<T>(ctx.attr_float("min", std::numeric_limits<float>::lowest()));
    hi = static_cast<T>(ctx.attr_float("max", std::numeric_limits<float>::max()));
  } else {
    // An empty tensor stands for an omitted bound too.
    if (const TensorRef* m = ctx.input_or_null(1); m != nullptr && m->numel() > 0) {
      lo = *m->as<const T>();
    }
    if (const TensorRef* m = ctx.input_or_null(2); m != nullptr && m->numel() > 0) {
      hi = *m->as<const T>();
    }
  }
  map_unary<T>(ctx, x, y, [lo, hi](T v) { return std::min(std::max(v, lo), hi); });
}

void clip_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  dispatch_or_fail<ArithTypes>(ctx, x.dtype, [&](auto tag) { clip_as<decltype(tag)>(ctx, x, y); });
}

// ---- Where

template <class T>
void where_as(KernelContext& ctx, const TensorRef& c, const TensorRef& x, const TensorRef& z,
              TensorRef& y) {
  BroadcastPlan<3> p;
  if (!plan_broadcast<3>(y.dims, {c.dims, x.dims, z.dims}, p)) {
    check_rank(ctx, y.rank());
    ctx.fail("the inputs do not broadcast to the output");
  }
  const bool* pc = c.as<const bool>();
  const T* px = x.as<const T>();
  const T* pz = z.as<const T>();
  T* out = y.as<T>();
  const int64_t sc = p.inner_stride(0);
  const int64_t sx = p.inner_stride(1);
  const int64_t sz = p.inner_stride(2);
  broadcast_rows(p, ctx.threads(), [&](const std::array<int64_t, 3>& off, size_t o, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const auto k = static_cast<int64_t>(i);
      out[o + i] = pc[off[0] + k * sc] ? px[off[1] + k * sx] : pz[off[2] + k * sz];
    }
  });
}

void where_kernel(KernelContext& ctx) {
  const TensorRef& c = ctx.input(0);
  const TensorRef& x = ctx.input(1);
  const TensorRef& z = ctx.input(2);
  TensorRef& y = ctx.output(0);
  if (c.dtype != DType::boolean) ctx.fail("the condition must be bool");
  // Where moves elements without reading them: dispatch on the element size only.
  dispatch_bits(ctx, x.dtype, [&](auto tag) { where_as<decltype(tag)>(ctx, c, x, z, y); });
}

// ---- Cast / CastLike (the output's dtype is the target)

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, Float16>) {
    if constexpr (std::is_same_v<From, float>) return to_float16(v);
    return to_float16(static_cast<float>(to_double(v)));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, float>) return to_bfloat16(v);
    return to_bfloat16(static_cast<float>(to_double(v)));
  } else if constexpr (std::is_same_v<To, bool>) {
    return to_double(v) != 0;
  } else if constexpr (std::is_integral_v<To> && !std::is_integral_v<From>) {
    // Reals to integers truncate; NaN and out-of-range values saturate instead of being
    // undefined behaviour.
    const double d = to_double(v);
    if (std::isnan(d)) return To(0);
    if (d <= static_cast<double>(std::numeric_limits<To>::lowest())) {
      return std::numeric_limits<To>::lowest();
    }
    if (d >= static_cast<double>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(d);
  } else if constexpr (is_16bit_float<From>) {
    return static_cast<To>(to_float(v));
  } else {
    return static_cast<To>(v);
  }
}

template <class From>
void cast_from(KernelContext& ctx, const TensorRef& x, TensorRef& y) {
  dispatch_or_fail<CastTypes>(ctx, y.dtype, [&](auto tag) {
    using To = decltype(tag);
    const From* in = x.as<const From>();
    To* out = y.as<To>();
    parallel_for(ctx.threads(), x.numel(), [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) out[i] = convert<To>(in[i]);
    });
  });
}

// Whether a cast moves the small types minifloat.hpp and the nibble packing hold: the 8-bit
// floats, and int4, uint4 and float4e2m1, two to a byte (element i in byte i / 2, the low nibble
// first).
bool is_small(DType t) {
  return is_float8(t) || t == DType::int4 || t == DType::uint4 || t == DType::float4e2m1;
}

// Element i of a small-typed tensor as a double, exactly.
double read_small(const TensorRef& x, size_t i) {
  const auto* bytes = x.as<const uint8_t>();
  if (is_float8(x.dtype)) return decode_float8(x.dtype, bytes[i]);
  const auto nibble = static_cast<uint8_t>((bytes[i / 2] >> ((i % 2) * 4)) & 0xF);
  if (x.dtype == DType::float4e2m1) return decode_float4e2m1(nibble);
  return x.dtype == DType::int4 ? (nibble ^ 8) - 8 : nibble;
}

// `v` as a nibble of `t`: float4e2m1 rounded half to even and saturated; int4 and uint4 the
// integer part, wrapped into 4 bits (-9 -> 7, 16 -> 0) as ONNX's reference casts; NaN -> 0.
uint8_t nibble_of(DType t, double v) {
  if (t == DType::float4e2m1) return encode_float4e2m1(v);
  if (std::isnan(v)) return 0;
  const double whole = std::trunc(std::clamp(v, -9.0e18, 9.0e18));
  return static_cast<uint8_t>(static_cast<uint64_t>(static_cast<int64_t>(whole)) & 0xF);
}

// A cast from or to a small type: each element read as double (exact for every source but the
// widest integers), then encoded (minifloat.hpp: 8-bit floats rounding half to even and
// saturating as the node's `saturate` says, default 1) or converted as any float is.
void cast_through_small(KernelContext& ctx, const TensorRef& x, TensorRef& y) {
  const bool saturate = ctx.attr_int("saturate", 1) != 0;
  const size_t n = x.numel();
  const auto run = [&](auto read) {
    if (is_float8(y.dtype)) {
      auto* out = y.as<uint8_t>();
      return parallel_for(ctx.threads(), n, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) out[i] = encode_float8(y.dtype, read(i), saturate);
      });
    }
    if (is_small(y.dtype)) {  // a byte (two elements) at a time, so no byte has two writers
      auto* out = y.as<uint8_t>();
      return parallel_for(ctx.threads(), (n + 1) / 2, [&](size_t begin, size_t end) {
        for (size_t b = begin; b < end; ++b) {
          const uint8_t low = nibble_of(y.dtype, read(2 * b));
          const uint8_t high = 2 * b + 1 < n ? nibble_of(y.dtype, read(2 * b + 1)) : 0;
          out[b] = static_cast<uint8_t>(low | (high << 4));
        }
      });
    }
    dispatch_or_fail<CastTypes>(ctx, y.dtype, [&](auto tag) {
      using To = decltype(tag);
      To* out = y.as<To>();
      parallel_for(ctx.threads(), n, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) out[i] = convert<To>(static_cast<float>(read(i)));
      });
    });
  };
  if (is_small(x.dtype)) return run([&](size_t i) { return read_small(x, i); });
  dispatch_or_fail<CastTypes>(ctx, x.dtype, [&](auto tag) {
    using From = decltype(tag);
    const From* in = x.as<const From>();
    run([&](size_t i) { return to_double(in[i]); });
  });
}

void cast_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  if (x.dtype == y.dtype) {
    if (x.data != y.data) std::memcpy(y.data, x.data, x.bytes());
    return;
  }
  if (is_small(x.dtype) || is_small(y.dtype)) return cast_through_small(ctx, x, y);
  // The casts at a float16 model's edges (onnxconverter-common's keep_io_types), converted eight
  // at a time where the CPU has F16C: the same values as convert's.
  if (x.dtype == DType::float32 && y.dtype == DType::float16) {
    return parallel_for(ctx.threads(), x.numel(), [&](size_t begin, size_t end) {
      floats_to_halves(x.as<const float>() + begin, y.as<Float16>() + begin, end - begin);
    });
  }
  if (x.dtype == DType::float16 && y.dtype == DType::float32) {
    return parallel_for(ctx.threads(), x.numel(), [&](size_t begin, size_t end) {
      halves_to_floats(x.as<const Float16>() + begin, y.as<float>() + begin, end - begin);
    });
  }
  dispatch_or_fail<CastTypes>(ctx, x.dtype, [&](auto tag) { cast_from<decltype(tag)>(ctx, x, y); });
}

// ---- Registration

// A kernel and the dtypes it runs (OpSchema::kernel_dtypes), as each row is declared.
struct Declared {
  graph::KernelFn kernel;
  DTypeSet dtypes;
};

template <class Op>
constexpr Declared unary = {unary_kernel<Op>, dtypes_with_16bit(typename Op::types{})};
template <class Op>
constexpr Declared binary = {binary_kernel<Op>, dtypes_with_16bit(typename Op::types{})};
template <class Types, auto F, auto V = nullptr>
constexpr Declared pure = unary<Pure<Types, F, V>>;
constexpr DTypeSet kReals{DType::float32, DType::float64, DType::float16, DType::bfloat16};

void declare(graph::OpSchema& row, const Declared& d) {
  row.kernel = d.kernel;
  row.kernel_dtypes = d.dtypes;
}

// An elementwise loop reads each element before it writes the same index: output 0 may be input
// 0's buffer (in_place), a promise these kernels make and the planner relies on.
void set_in_place(graph::OpRegistry& r, std::string_view op, const Declared& d) {
  graph::OpSchema& row = r.row("", op);
  declare(row, d);
  row.in_place = true;
}

void register_unary(graph::OpRegistry& r) {
  auto set = [&](std::string_view op, const Declared& d) { set_in_place(r, op, d); };
  set("Abs", pure<ArithTypes, kAbs>);
  set("Neg", pure<SignedTypes, kNeg>);
  set("Sign", pure<ArithTypes, kSign>);
  set("Relu", pure<SignedTypes, kRelu>);
  set("Floor", pure<RealTypes, [](auto x) { return std::floor(x); }>);
  set("Ceil", pure<RealTypes, [](auto x) { return std::ceil(x); }>);
  // Round half to even: nearbyint in the default rounding mode.
  set("Round", pure<RealTypes, [](auto x) { return std::nearbyint(x); }>);
  set("Sqrt", pure<RealTypes, [](auto x) { return std::sqrt(x); }>);
  set("Exp",
      pure<RealTypes, [](auto x) { return std::exp(x); }, [](auto v) { return simd::exp(v); }>);
  set("Log", pure<RealTypes, [](auto x) { return std::log(x); }>);
  set("Reciprocal", pure<RealTypes, [](auto x) { return decltype(x)(1) / x; }>);
  set("Sin", pure<RealTypes, [](auto x) { return std::sin(x); }>);
  set("Cos", pure<RealTypes, [](auto x) { return std::cos(x); }>);
  set("Tan", pure<RealTypes, [](auto x) { return std::tan(x); }>);
  set("Asin", pure<RealTypes, [](auto x) { return std::asin(x); }>);
  set("Acos", pure<RealTypes, [](auto x) { return std::acos(x); }>);
  set("Atan", pure<RealTypes, [](auto x) { return std::atan(x); }>);
  set("Sinh", pure<RealTypes, [](auto x) { return std::sinh(x); }>);
  set("Cosh", pure<RealTypes, [](auto x) { return std::cosh(x); }>);
  set("Asinh", pure<RealTypes, [](auto x) { return std::asinh(x); }>);
  set("Acosh", pure<RealTypes, [](auto x) { return std::acosh(x); }>);
  set("Atanh", pure<RealTypes, [](auto x) { return std::atanh(x); }>);
  set("Tanh",
      pure<RealTypes, [](auto x) { return std::tanh(x); }, [](auto v) { return simd::tanh(v); }>);
  set("Erf",
      pure<RealTypes, [](auto x) { return std::erf(x); }, [](auto v) { return simd::erf(v); }>);
  set("Sigmoid", pure<RealTypes, kSigmoid, [](auto v) { return simd::sigmoid(v); }>);
  set("Softplus", pure<RealTypes, kSoftplus>);
  set("Softsign", pure<RealTypes, [](auto x) { return x / (decltype(x)(1) + std::abs(x)); }>);
  set("Mish", pure<RealTypes, [](auto x) { return x * std::tanh(kSoftplus(x)); }>);
  set("Not", unary<Not>);
  set("BitwiseNot", unary<BitwiseNot>);
  set("LeakyRelu", unary<LeakyRelu>);
  set("Elu", unary<Elu>);
  set("Celu", unary<Celu>);
  set("Selu", unary<Selu>);
  set("HardSigmoid", unary<HardSigmoid>);
  set("HardSwish", unary<HardSwish>);
  set("ThresholdedRelu", unary<ThresholdedRelu>);
  set("Shrink", unary<Shrink>);
  set("Gelu", unary<Gelu>);
  // A bool output: never the input's buffer.
  declare(r.row("", "IsNaN"), {classify_kernel<IsNaN>, kReals});
  declare(r.row("", "IsInf"), {classify_kernel<IsInf>, kReals});
}

void register_binary(graph::OpRegistry& r) {
  auto in_place = [&](std::string_view op, const Declared& d) { set_in_place(r, op, d); };
  in_place("Add", binary<Arith<ArithTypes, kAdd>>);
  in_place("Sub", binary<Arith<ArithTypes, kSub>>);
  in_place("Mul", binary<Arith<ArithTypes, kMul>>);
  in_place("Div", binary<Arith<ArithTypes, kDiv>>);
  in_place("PRelu", binary<Arith<SignedTypes, kPRelu>>);
  in_place("Mod", binary<Mod>);
  in_place("BitShift", binary<BitShift>);
  in_place("BitwiseAnd", binary<Bitwise<Bits::bit_and>>);
  in_place("BitwiseOr", binary<Bitwise<Bits::bit_or>>);
  in_place("BitwiseXor", binary<Bitwise<Bits::bit_xor>>);
  in_place("Pow", {pow_kernel, dtypes_with_16bit(ArithTypes{})});
  in_place("Equal", binary<Predicate<NumericTypes, kEqual>>);
  in_place("Less", binary<Predicate<ArithTypes, kLess>>);
  in_place("LessOrEqual", binary<Predicate<ArithTypes, kLessOrEqual>>);
  in_place("Greater", binary<Predicate<ArithTypes, kGreater>>);
  in_place("GreaterOrEqual", binary<Predicate<ArithTypes, kGreaterOrEqual>>);
  in_place("And", binary<Predicate<TypeList<bool>, kAnd>>);
  in_place("Or", binary<Predicate<TypeList<bool>, kOr>>);
  in_place("Xor", binary<Predicate<TypeList<bool>, kXor>>);
  auto set = [&](std::string_view op, const Declared& d) { declare(r.row("", op), d); };
  const DTypeSet arith = dtypes_with_16bit(ArithTypes{});
  set("Sum", {variadic_kernel<kAdd>, arith});
  set("Mean", {variadic_kernel<kAdd, true>, arith});
  set("Max", {variadic_kernel<kMax>, arith});
  set("Min", {variadic_kernel<kMin>, arith});
  set("Clip", {clip_kernel, dtypes_of(ArithTypes{})});
  // Where moves the chosen elements without reading them: any size dispatch_bits moves.
  graph::OpSchema& where = r.row("", "Where");
  declare(where, {where_kernel, movable_dtypes()});
  where.kernel_dtype_of = 1;
  const DTypeSet casts =
      dtypes_of(CastTypes{}) |
      DTypeSet{DType::float8e4m3fn, DType::float8e4m3fnuz, DType::float8e5m2, DType::float8e5m2fnuz,
               DType::int4,         DType::uint4,          DType::float4e2m1};
  set("Cast", {cast_kernel, casts});
  set("CastLike", {cast_kernel, casts});
  // The arithmetic a 16-bit kernel does in float and rounds once (apply_binary_16), and the cast
  // to a 16-bit float (the copy of a carrier, then the same rounding as floats_to_halves): on
  // float32 carriers, the float32 kernel and the runtime's rounding give the same bits.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Cast"}) {
    r.row("", op).float32_carriers = graph::Float32Carriers::whole;
  }
}

}  // namespace

void register_elementwise(graph::OpRegistry& r) {
  register_unary(r);
  register_binary(r);
}

}  // namespace footprint::runtime::kernels
