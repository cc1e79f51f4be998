// Elementwise kernels on small hand-checked cases: unary math, broadcasting binary ops, logic,
// variadic ops, Clip, Where and Cast.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "footprint/core/float16.hpp"
#include "runtime/test_kernel_context.hpp"

namespace footprint::testing {
namespace {

std::vector<float> run_f32(const std::string& op, std::vector<std::optional<TestTensor>> in,
                           std::vector<Wire> attrs = {}, int64_t opset = 18) {
  KernelRun k(op, std::move(in), std::move(attrs), opset);
  k.run();
  EXPECT_EQ(k.allocations(), 0u) << op;
  return k.out(0).values<float>();
}

TEST(ElementwiseKernels, UnaryMath) {
  const TestTensor x = f32({4}, {-2, -0.5f, 0, 1.5f});
  expect_near(run_f32("Relu", {x}), {0, 0, 0, 1.5f});
  expect_near(run_f32("Abs", {x}), {2, 0.5f, 0, 1.5f});
  expect_near(run_f32("Neg", {x}), {2, 0.5f, 0, -1.5f});
  expect_near(run_f32("Sign", {x}), {-1, -1, 0, 1});
  expect_near(run_f32("Floor", {x}), {-2, -1, 0, 1});
  expect_near(run_f32("Ceil", {x}), {-2, 0, 0, 2});
  // Half to even: -0.5 -> -0, 1.5 -> 2, 2.5 -> 2.
  expect_near(run_f32("Round", {f32({3}, {-0.5f, 1.5f, 2.5f})}), {0, 2, 2});
  expect_near(run_f32("Exp", {f32({2}, {0, 1})}), {1, 2.7182818f});
  expect_near(run_f32("Sigmoid", {f32({3}, {0, 100, -100})}), {0.5f, 1, 0});
  expect_near(run_f32("LeakyRelu", {x}, {attr_float("alpha", 0.1f)}), {-0.2f, -0.05f, 0, 1.5f});
  expect_near(run_f32("HardSigmoid", {x}), {0.1f, 0.4f, 0.5f, 0.8f});
  expect_near(run_f32("HardSwish", {f32({3}, {-4, 0, 3})}), {0, 0, 3});
  expect_near(run_f32("Softsign", {f32({2}, {1, -3})}), {0.5f, -0.75f});
  expect_near(run_f32("ThresholdedRelu", {f32({3}, {0.5f, 1, 2})}), {0, 0, 2});
  expect_near(run_f32("Elu", {f32({2}, {-1, 2})}), {std::exp(-1.0f) - 1, 2});
  expect_near(run_f32("Gelu", {f32({2}, {0, 1})}), {0, 0.8413447f});
  expect_near(run_f32("Shrink", {f32({3}, {-1, 0.2f, 2})}, {attr_float("bias", 0.5f)}),
              {-0.5f, 0, 1.5f});
}

// Exp, Sigmoid, Tanh and Erf (so Gelu) take a vector path for float, 4, 8 or 16 lanes as the CPU
// has them: it agrees with libm within a few ulp, whole vectors, tails (n not a multiple of the
// lanes) and extremes included.
TEST(ElementwiseKernels, VectorisedFloatMath) {
  const std::vector<float> base = {-100, -20, -3.5f, -0.7f, -1e-3f, 0, 0.3f, 0.625f, 2, 9, 50, 88};
  std::vector<float> x;
  for (size_t i = 0; i < 37; ++i)
    x.push_back(base[i % 12] * (1.0f - 0.01f * static_cast<float>(i / 12)));
  for (size_t n : {size_t{7}, size_t{12}, size_t{16}, x.size()}) {
    const std::vector<float> part(x.begin(), x.begin() + static_cast<long>(n));
    const auto e = run_f32("Exp", {f32({static_cast<int64_t>(n)}, part)});
    const auto s = run_f32("Sigmoid", {f32({static_cast<int64_t>(n)}, part)});
    const auto t = run_f32("Tanh", {f32({static_cast<int64_t>(n)}, part)});
    const auto erf = run_f32("Erf", {f32({static_cast<int64_t>(n)}, part)});
    for (size_t i = 0; i < n; ++i) {
      const double v = part[i];
      EXPECT_NEAR(e[i], std::exp(v), 4e-7 * std::exp(v) + 1e-44) << v;  // + a subnormal step
      const double sig = 1 / (1 + std::exp(-v));
      EXPECT_NEAR(s[i], sig, 4e-7 * sig + 1e-44) << v;
      EXPECT_NEAR(t[i], std::tanh(v), 4e-7 * std::abs(std::tanh(v))) << v;
      EXPECT_NEAR(erf[i], std::erf(v), 5e-7) << v;
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  const auto e = run_f32("Exp", {f32({3}, {100, -inf, std::nanf("")})});
  EXPECT_EQ(e[0], inf);
  EXPECT_EQ(e[1], 0);
  EXPECT_TRUE(std::isnan(e[2]));
}

TEST(ElementwiseKernels, UnaryOnIntegersAndHalf) {
  KernelRun k("Abs", {i32({3}, {-3, 0, 7})});
  k.run();
  EXPECT_EQ(k.out(0).values<int32_t>(), (std::vector<int32_t>{3, 0, 7}));
  // float16 goes through float: 0x3c00 is 1.0, 0xc000 is -2.0.
  KernelRun h("Relu", {TestTensor::of<uint16_t>(DType::float16, {2}, {0x3c00, 0xc000})});
  h.run();
  EXPECT_EQ(h.out(0).values<uint16_t>(), (std::vector<uint16_t>{0x3c00, 0}));
  // Binary and variadic ops too: max(1, 2) and max(-2, 2) are 2 (0x4000); 1 < 2.
  KernelRun max("Max", {TestTensor::of<uint16_t>(DType::float16, {2}, {0x3c00, 0xc000}),
                        TestTensor::of<uint16_t>(DType::float16, {1}, {0x4000})});
  max.run();
  EXPECT_EQ(max.out(0).values<uint16_t>(), (std::vector<uint16_t>{0x4000, 0x4000}));
  KernelRun less("Less", {TestTensor::of<uint16_t>(DType::float16, {1}, {0x3c00}),
                          TestTensor::of<uint16_t>(DType::float16, {1}, {0x4000})});
  less.run();
  EXPECT_EQ(less.out(0).values<uint8_t>(), (std::vector<uint8_t>{1}));
  KernelRun bad("Exp", {i64({1}, {1})});
  EXPECT_NE(bad.run_error().find("dtype int64 is not supported"), std::string::npos);
}

TEST(ElementwiseKernels, InPlaceUnaryAndBinary) {
  KernelRun k("Relu", {f32({3}, {-1, 2, -3})});
  k.in_place().run();
  EXPECT_EQ(k.out(0).values<float>(), (std::vector<float>{0, 2, 0}));
  KernelRun b("Add", {f32({2, 2}, {1, 2, 3, 4}), f32({2}, {10, 20})});
  b.in_place().run();
  EXPECT_EQ(b.out(0).values<float>(), (std::vector<float>{11, 22, 13, 24}));
}

TEST(ElementwiseKernels, BinaryBroadcasting) {
  // [2,1,3] + [2,1] -> [2,2,3]
  expect_near(run_f32("Add", {f32({2, 1, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 1}, {10, 20})}),
              {11, 12, 13, 21, 22, 23, 14, 15, 16, 24, 25, 26});
  expect_near(run_f32("Sub", {f32({1}, {1}), f32({3}, {1, 2, 3})}), {0, -1, -2});
  expect_near(run_f32("Mul", {f32({2, 2}, {1, 2, 3, 4}), f32({}, {2})}), {2, 4, 6, 8});
  expect_near(run_f32("Div", {f32({2}, {1, 3}), f32({2}, {2, 4})}), {0.5f, 0.75f});
  expect_near(run_f32("Pow", {f32({3}, {2, 3, 4}), f32({1}, {2})}), {4, 9, 16});
  expect_near(run_f32("PRelu", {f32({2, 2}, {-1, 1, -2, 2}), f32({2}, {0.5f, 0.25f})}),
              {-0.5f, 1, -1, 2});
  // [3,1] with [1,4] walks an outer product.
  expect_near(run_f32("Mul", {f32({3, 1}, {1, 2, 3}), f32({1, 4}, {1, 10, 100, 1000})}),
              {1, 10, 100, 1000, 2, 20, 200, 2000, 3, 30, 300, 3000});
}

TEST(ElementwiseKernels, BinaryOnLargeTensorsWithThreads) {
  std::vector<float> a(size_t{3} * 5000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  KernelRun k("Add", {f32({3, 5000}, a), f32({3, 1}, {0, 1, 2})});
  k.threads(2).run();
  const auto y = k.out(0).values<float>();
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[5000], 5001);
  EXPECT_EQ(y[14999], 14999 + 2);
}

TEST(ElementwiseKernels, IntegerArithmetic) {
  KernelRun div("Div", {i32({3}, {7, -7, 1}), i32({3}, {2, 2, 0})});
  div.run();
  EXPECT_EQ(div.out(0).values<int32_t>(), (std::vector<int32_t>{3, -3, 0}));
  // Python's sign (of the divisor) by default, C's with fmod=1.
  KernelRun mod("Mod", {i64({2}, {-7, 7}), i64({2}, {3, -3})});
  mod.run();
  EXPECT_EQ(mod.out(0).values<int64_t>(), (std::vector<int64_t>{2, -2}));
  KernelRun fmod("Mod", {f32({2}, {-7, 7}), f32({2}, {3, -3})}, {attr("fmod", 1)});
  fmod.run();
  EXPECT_EQ(fmod.out(0).values<float>(), (std::vector<float>{-1, 1}));
  KernelRun shift("BitShift", {u8({2}, {1, 16}), u8({2}, {3, 2})}, {attr("direction", "RIGHT")});
  shift.run();
  EXPECT_EQ(shift.out(0).values<uint8_t>(), (std::vector<uint8_t>{0, 4}));
  KernelRun pow("Pow", {i64({2}, {2, 3}), f32({1}, {3})});
  pow.run();
  EXPECT_EQ(pow.out(0).values<int64_t>(), (std::vector<int64_t>{8, 27}));
}

// The quotients C leaves undefined trap on x86 (SIGFPE); the kernels define them instead: by
// zero 0, the smallest value by -1 wraps to itself (numpy's answer), its remainder 0; and sums
// and products past the type's range wrap as two's complement.
TEST(ElementwiseKernels, IntegerEdgesAreDefinedNotSignals) {
  constexpr int32_t kMin32 = INT32_MIN;
  constexpr int64_t kMin64 = INT64_MIN;
  KernelRun div("Div", {i32({4}, {kMin32, kMin32, 5, -5}), i32({4}, {-1, 0, -1, 0})});
  div.run();
  EXPECT_EQ(div.out(0).values<int32_t>(), (std::vector<int32_t>{kMin32, 0, -5, 0}));
  KernelRun div64("Div", {i64({2}, {kMin64, 9}), i64({1}, {-1})});
  div64.run();
  EXPECT_EQ(div64.out(0).values<int64_t>(), (std::vector<int64_t>{kMin64, -9}));
  for (const int64_t c_style : {0, 1}) {
    KernelRun mod("Mod", {i32({3}, {kMin32, 7, kMin32}), i32({3}, {-1, -1, 0})},
                  {attr("fmod", c_style)});
    mod.run();
    EXPECT_EQ(mod.out(0).values<int32_t>(), (std::vector<int32_t>{0, 0, 0})) << c_style;
  }
  KernelRun add("Add", {i32({2}, {INT32_MAX, 1}), i32({2}, {1, 2})});
  add.run();
  EXPECT_EQ(add.out(0).values<int32_t>(), (std::vector<int32_t>{kMin32, 3}));
  KernelRun mul("Mul", {i64({1}, {INT64_MAX}), i64({1}, {2})});
  mul.run();
  EXPECT_EQ(mul.out(0).values<int64_t>(), (std::vector<int64_t>{-2}));
  KernelRun sub("Sub", {i32({1}, {kMin32}), i32({1}, {1})});
  sub.run();
  EXPECT_EQ(sub.out(0).values<int32_t>(), (std::vector<int32_t>{INT32_MAX}));
}

TEST(ElementwiseKernels, ComparisonsAndLogic) {
  KernelRun less("Less", {f32({3}, {1, 2, 3}), f32({1}, {2})});
  less.run();
  EXPECT_EQ(less.out(0).values<uint8_t>(), (std::vector<uint8_t>{1, 0, 0}));
  KernelRun eq("Equal", {i64({2, 2}, {1, 2, 3, 4}), i64({2}, {1, 4})});
  eq.run();
  EXPECT_EQ(eq.out(0).values<uint8_t>(), (std::vector<uint8_t>{1, 0, 0, 1}));
  KernelRun x("Xor", {boolean({2, 2}, {1, 0, 1, 0}), boolean({2, 1}, {1, 0})});
  x.run();
  EXPECT_EQ(x.out(0).values<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 0}));
  KernelRun n("Not", {boolean({2}, {1, 0})});
  n.run();
  EXPECT_EQ(n.out(0).values<uint8_t>(), (std::vector<uint8_t>{0, 1}));
  const float inf = std::numeric_limits<float>::infinity();
  KernelRun isinf("IsInf", {f32({3}, {inf, -inf, 1})}, {attr("detect_negative", 0)});
  isinf.run();
  EXPECT_EQ(isinf.out(0).values<uint8_t>(), (std::vector<uint8_t>{1, 0, 0}));
  KernelRun isnan("IsNaN", {f32({2}, {std::nanf(""), 1})});
  isnan.run();
  EXPECT_EQ(isnan.out(0).values<uint8_t>(), (std::vector<uint8_t>{1, 0}));
}

TEST(ElementwiseKernels, Variadic) {
  const TestTensor a = f32({2, 2}, {1, 5, 3, 7});
  const TestTensor b = f32({2}, {4, 4});
  const TestTensor c = f32({1}, {2});
  expect_near(run_f32("Sum", {a, b, c}), {7, 11, 9, 13});
  expect_near(run_f32("Max", {a, b}), {4, 5, 4, 7});
  expect_near(run_f32("Min", {a, b, c}), {1, 2, 2, 2});
  expect_near(run_f32("Mean", {a, b}), {2.5f, 4.5f, 3.5f, 5.5f});
  expect_near(run_f32("Sum", {c}), {2});
  // The first input broadcast, not the output's shape.
  expect_near(run_f32("Sum", {c, a}), {3, 7, 5, 9});
  expect_near(run_f32("Max", {b, a}), {4, 5, 4, 7});
  expect_near(run_f32("Mean", {c, a, b}), {7 / 3.0f, 11 / 3.0f, 3, 13 / 3.0f});
}

// Float loops run at the CPU's widest vectors: planes of 37 (a full 16-lane vector, a part of
// one and a scalar tail) with same-shape, per-channel (on either side) and scalar operands agree
// with plain loops; doubles take the baseline loops.
TEST(ElementwiseKernels, WideFloatLoopsCoverTailsAndBroadcasts) {
  constexpr int64_t kChannels = 3, kPlane = 37;
  std::vector<float> x(kChannels * kPlane);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f - 10;
  const std::vector<float> s = {0.5f, 1.5f, 2.5f};
  std::vector<float> mul(x.size()), div(x.size()), add(x.size()), relu(x.size()), clip(x.size()),
      hard(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    mul[i] = x[i] * s[i / kPlane];
    div[i] = x[i] / 6;
    add[i] = x[i] + x[i];
    relu[i] = std::max(x[i], 0.0f);
    clip[i] = std::min(std::max(x[i], 0.0f), 6.0f);
    hard[i] = std::min(std::max(x[i] * 0.2f + 0.5f, 0.0f), 1.0f);
  }
  const TestTensor tx = f32({1, kChannels, 1, kPlane}, x);
  const TestTensor ts = f32({kChannels, 1, 1}, s);
  expect_near(run_f32("Mul", {tx, ts}), mul);
  expect_near(run_f32("Mul", {ts, tx}), mul);
  expect_near(run_f32("Div", {tx, f32({}, {6})}), div);
  expect_near(run_f32("Add", {tx, tx}), add);
  expect_near(run_f32("Relu", {tx}), relu);
  expect_near(run_f32("Clip", {tx, f32({}, {0}), f32({}, {6})}), clip);
  expect_near(run_f32("HardSigmoid", {tx}), hard);
  KernelRun d("Mul", {f64({1, kChannels, 1, kPlane}, {x.begin(), x.end()}),
                      f64({kChannels, 1, 1}, {s.begin(), s.end()})});
  d.run();
  const auto got = d.out(0).values<double>();
  ASSERT_EQ(got.size(), mul.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], mul[i]) << "at " << i;
}

TEST(ElementwiseKernels, ClipWhereCast) {
  const TestTensor x = f32({4}, {-2, 0, 1, 5});
  expect_near(run_f32("Clip", {x, f32({}, {-1}), f32({}, {2})}), {-1, 0, 1, 2});
  expect_near(run_f32("Clip", {x, std::nullopt, f32({}, {0.5f})}), {-2, 0, 0.5f, 0.5f});
  expect_near(run_f32("Clip", {x}, {attr_float("min", 0)}, 6), {0, 0, 1, 5});
  expect_near(run_f32("Where", {boolean({2, 1}, {1, 0}), f32({2}, {1, 2}), f32({}, {9})}),
              {1, 2, 9, 9});
  KernelRun cast("Cast", {f32({4}, {-1.7f, 0, 2.5f, 300})}, {attr("to", 3)});  // to int8
  cast.run();
  EXPECT_EQ(cast.out(0).values<int8_t>(), (std::vector<int8_t>{-1, 0, 2, 127}));
  KernelRun to_bool("Cast", {f32({2}, {0, 0.1f})}, {attr("to", 9)});
  to_bool.run();
  EXPECT_EQ(to_bool.out(0).values<uint8_t>(), (std::vector<uint8_t>{0, 1}));
  // 1.0 and 65504 (the largest half), 1e-7 underflows to the subnormal 2^-24 * 2 (rounded).
  KernelRun half("Cast", {f32({3}, {1, 65504, 1e-7f})}, {attr("to", 10)});
  half.run();
  EXPECT_EQ(half.out(0).values<uint16_t>(), (std::vector<uint16_t>{0x3c00, 0x7bff, 0x0002}));
  KernelRun back("Cast", {TestTensor::of<uint16_t>(DType::float16, {2}, {0x3c00, 0x0001})},
                 {attr("to", 1)});
  back.run();
  EXPECT_EQ(back.out(0).values<float>(), (std::vector<float>{1, std::ldexp(1.0f, -24)}));
  KernelRun like("CastLike", {i64({2}, {3, -4}), f64({}, {0})});
  like.run();
  EXPECT_EQ(like.out(0).values<double>(), (std::vector<double>{3, -4}));
}

// Casts between float32 and float16 over lengths that are and are not groups of eight (the
// converting instructions take eight), with ties, subnormals, overflow, infinities and a NaN in
// a group: each element as core's conversions give it, in both directions.
TEST(ElementwiseKernels, CastsBetweenFloatAndHalfAsCoreConverts) {
  std::vector<float> v;
  for (int i = 0; i < 37; ++i) v.push_back(std::ldexp(1.0f + static_cast<float>(i) / 1024, i - 20));
  v[3] = 1.0f + std::ldexp(1.0f, -11);  // a tie: rounds to even, 1.0
  v[9] = 70000.0f;                      // overflows to infinity
  v[17] = -std::numeric_limits<float>::infinity();
  v[20] = std::numeric_limits<float>::quiet_NaN();
  v[30] = std::ldexp(1.0f, -25) * 3;  // a subnormal half
  for (const size_t n : {size_t{37}, size_t{32}, size_t{5}}) {
    const std::vector<float> part(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
    KernelRun half("Cast", {f32({static_cast<int64_t>(n)}, part)}, {attr("to", 10)});
    half.run();
    const std::vector<uint16_t> bits = half.out(0).values<uint16_t>();
    ASSERT_EQ(bits.size(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(bits[i], half_from_float(part[i])) << n << " " << i;
    KernelRun back("Cast",
                   {TestTensor::of<uint16_t>(DType::float16, {static_cast<int64_t>(n)}, bits)},
                   {attr("to", 1)});
    back.run();
    const std::vector<float> wide = back.out(0).values<float>();
    for (size_t i = 0; i < n; ++i) {
      const float want = float_from_half(bits[i]);
      EXPECT_TRUE(std::isnan(want) ? std::isnan(wide[i]) : wide[i] == want) << n << " " << i;
    }
  }
}

// in_place is declared beside the kernels that honour it, and every view row runs (as a copy
// when its output has a buffer of its own) without a per-op assignment.
TEST(RuntimeRegistry, InPlaceAndViewKernelsComeWithTheKernels) {
  const graph::OpRegistry& r = runtime::op_registry();
  for (const char* op : {"Relu", "Sigmoid", "Add", "Mul", "Less", "Xor"}) {
    EXPECT_TRUE(r.find("", op)->in_place) << op;
  }
  for (const char* op : {"IsNaN", "Sum", "Where", "Cast", "Softmax", "MatMul"}) {
    EXPECT_FALSE(r.find("", op)->in_place) << op;
  }
  for (const graph::OpSchema& s : r.all()) {
    if (s.output_view_of >= 0) {
      EXPECT_NE(s.kernel, nullptr) << s.op_type;
    }
  }
}

}  // namespace
}  // namespace footprint::testing
