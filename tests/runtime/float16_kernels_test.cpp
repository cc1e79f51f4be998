// Float16 (and bfloat16) nodes of the rows onnxconverter_common's float16 models use: values
// checked by hand as half bit patterns, each chosen so that a kernel that rounded anywhere but
// once, to nearest even, on store (or accumulated in 16 bits) would give another pattern; and
// the products' float32 copies declared exactly (scratch for what runs, the state for constants).
//
// Patterns used: 0x3c00 1.0, 0x3c01 1 + 2^-10, 0x3c02 1 + 2^-9, 0x4000 2.0, 0x1000 2^-11,
// 0x6000 512, 0x6001 512.5, 0x6002 513, 0x6800 2048, 0x3555 the half nearest 1/3.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "footprint/core/float16.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "runtime/prepared_kernel_run.hpp"
#include "test_kernel_context.hpp"

namespace footprint {
namespace {

using testing::attr;
using testing::Ints;
using testing::KernelRun;
using testing::PreparedRun;
using testing::Tensor;
using testing::TestTensor;
using Halves = std::vector<uint16_t>;

Tensor halves(Ints dims, const Halves& v) {
  return Tensor::of(DType::float16, std::move(dims), v);
}

Tensor floats_of(const Tensor& h) {
  std::vector<float> f;
  for (const uint16_t b : h.values<uint16_t>()) f.push_back(float_from_half(b));
  return Tensor::of(DType::float32, h.dims, f);
}

TEST(Float16Kernels, ConvRoundsOnceToNearestEvenAfterAFloatSum) {
  // y = x * 1 + 2^-11: 1 + 2^-11 is a tie between 1 and 1 + 2^-10 (to the even 1.0);
  // 1 + 3 * 2^-11 a tie between 1 + 2^-10 and 1 + 2^-9 (to the even 1 + 2^-9); 2 + 2^-11 is a
  // quarter of an ulp above 2.
  const Tensor x = halves({1, 1, 1, 3}, {0x3c00, 0x3c01, 0x4000});
  const Tensor w = halves({1, 1, 1, 1}, {0x3c00});
  const Tensor b = halves({1}, {0x1000});
  PreparedRun k("Conv", {x, w, b});
  k.run();
  EXPECT_EQ(k.out(0).dtype, DType::float16);
  EXPECT_EQ(k.out(0).values<uint16_t>(), (Halves{0x3c00, 0x3c02, 0x4000}));

  // The same node in float32: the 16-bit one adds a 64-byte float32 copy of x and of y to the
  // scratch (W and b are constants, converted once into the state: 4 bytes each).
  PreparedRun f("Conv", {floats_of(x), floats_of(w), floats_of(b)});
  f.run();
  EXPECT_EQ(k.workspace_bytes(), f.workspace_bytes() + 64 + 64);
  // The conversions allocate nothing beyond what the float32 kernel does (oneDNN's execution).
  EXPECT_EQ(k.allocations(), f.allocations());
  ASSERT_TRUE(k.has_state());
  const uint64_t inner = f.has_state() ? f.state()->owned_bytes() : 0;
  EXPECT_EQ(k.state()->owned_bytes(), inner + 4 + 4);
}

TEST(Float16Kernels, ConvMatchesAFloatReferenceOnAWindow) {
  // A 3x3 window over 2 channels with padding: each output is a sum of 18 products of halves,
  // computed in float32 and rounded once; the reference sums in double and rounds the same way
  // (the products of halves are exact in float, the sums of these small values too).
  const Tensor x = halves(
      {1, 2, 3, 3}, {0x3c00, 0x4000, 0x4200, 0x3800, 0xbc00, 0x3c01, 0x4400, 0x3400, 0xb800, 0x3c00,
                     0x3c00, 0x3c00, 0x4000, 0x4000, 0xc000, 0x3555, 0x3e00, 0x3a00});
  std::vector<uint16_t> wv(18);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = half_from_float(static_cast<float>(i % 5) - 2.0f);
  const Tensor w = halves({1, 2, 3, 3}, wv);
  PreparedRun k("Conv", {x, w}, {attr("pads", Ints{1, 1, 1, 1})});
  k.run();
  const auto xf = floats_of(x).floats();
  const auto wf = floats_of(w).floats();
  Halves want;
  for (size_t oh = 0; oh < 3; ++oh) {
    for (size_t ow = 0; ow < 3; ++ow) {
      double acc = 0;
      for (size_t c = 0; c < 2; ++c) {
        for (size_t kh = 0; kh < 3; ++kh) {
          for (size_t kw = 0; kw < 3; ++kw) {
            // The input row and column under tap (kh, kw), one past the padding.
            const size_t h = oh + kh, wi = ow + kw;
            if (h < 1 || h > 3 || wi < 1 || wi > 3) continue;
            acc +=
                static_cast<double>(xf[c * 9 + (h - 1) * 3 + (wi - 1)]) * wf[c * 9 + kh * 3 + kw];
          }
        }
      }
      want.push_back(half_from_float(static_cast<float>(acc)));
    }
  }
  EXPECT_EQ(k.out(0).values<uint16_t>(), want);
}

TEST(Float16Kernels, ConvWeightsComputedWhileRunningAreNamed) {
  // Only the bias is a constant: the weights would need a float32 copy no scratch was planned for.
  PreparedRun k("Conv", {halves({1, 1, 1, 1}, {0x3c00}), halves({1, 1, 1, 1}, {0x3c00})});
  k.constants({2});
  const std::string e = k.run_error();
  EXPECT_NE(e.find("'n0' (Conv)"), std::string::npos) << e;
  EXPECT_NE(e.find("input 1 is float16 computed while running"), std::string::npos) << e;
}

TEST(Float16Kernels, GemmAndMatMulRoundOnceAfterAFloatSum) {
  // [1 + 2^-10, 1] . [1, 2^-11]: 1 + 2^-10 + 2^-11 = 1 + 3 * 2^-11, a tie to the even 1 + 2^-9;
  // a sum rounded to half after its first product would keep 1 + 2^-10.
  const Tensor a = halves({1, 2}, {0x3c01, 0x3c00});
  const Tensor b = halves({2, 1}, {0x3c00, 0x1000});
  PreparedRun gemm("Gemm", {a, b});
  gemm.run();
  EXPECT_EQ(gemm.out(0).values<uint16_t>(), (Halves{0x3c02}));
  // MatMul's B computed while running (attention's keys): its float32 copy is in the scratch.
  PreparedRun mm("MatMul", {a, b});
  mm.constants({});
  mm.run();
  EXPECT_EQ(mm.out(0).values<uint16_t>(), (Halves{0x3c02}));
  PreparedRun mm32("MatMul", {floats_of(a), floats_of(b)});
  mm32.constants({});
  mm32.run();
  EXPECT_EQ(mm.workspace_bytes(), mm32.workspace_bytes() + uint64_t{3} * 64);  // A, B and Y
  EXPECT_EQ(mm.allocations(), mm32.allocations());
}

// n 16-bit floats of dtype t spread over (-1, 1), seeded.
Tensor spread_16(DType t, Ints dims, uint32_t seed) {
  size_t n = 1;
  for (const int64_t d : dims) n *= static_cast<size_t>(d);
  Halves v(n);
  uint32_t s = seed;
  for (uint16_t& e : v) {
    s = s * 1664525U + 1013904223U;
    const float f = static_cast<float>(s >> 8) / 8388608.0F - 1.0F;
    e = t == DType::float16 ? half_from_float(f) : bfloat16_from_float(f);
  }
  return Tensor::of(t, std::move(dims), v);
}

// The elements of [n, c, pixels] laid out [n, pixels, c] (channels-last).
Halves channels_last(const Halves& v, int64_t n, int64_t c, int64_t pixels) {
  Halves last(v.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < pixels; ++p) {
        last[static_cast<size_t>((i * pixels + p) * c + ch)] =
            v[static_cast<size_t>((i * c + ch) * pixels + p)];
      }
    }
  }
  return last;
}

float widen_bits(DType t, uint16_t b) {
  return t == DType::float16 ? float_from_half(b) : float_from_bfloat16(b);
}

TEST(Float16Kernels, GemmOfFewRowsStreamsItsSixteenBitWeights) {
  // A classifier head's shape, odd: 3 rows of K = 600 (longer than a widened chunk, not a
  // multiple of any vector) by N = 70 columns (not a multiple of a block), B either way round, C
  // or none. Each output is the float sum rounded once: within one unit of the last place of the
  // double sum. B stays 16-bit in the state (N K 2 bytes, C widened), A's rows are widened into
  // the workspace, and two threads give the bytes one does.
  constexpr int64_t m = 3, k = 600, n = 70;
  for (const DType t : {DType::float16, DType::bfloat16}) {
    for (const bool trans_b : {false, true}) {
      for (const bool with_c : {false, true}) {
        const Tensor a = spread_16(t, {m, k}, 3);
        const Tensor b = spread_16(t, trans_b ? Ints{n, k} : Ints{k, n}, 4);
        const Tensor c = spread_16(t, {n}, 5);
        std::vector<std::optional<Tensor>> in{a, b};
        if (with_c) in.emplace_back(c);
        const std::string what =
            std::string(dtype_name(t)) + (trans_b ? ", transB" : "") + (with_c ? ", C" : "");
        PreparedRun one("Gemm", in, {attr("transB", int64_t{trans_b ? 1 : 0})});
        one.constants({1, 2});
        one.run();
        const auto y = one.out(0).values<uint16_t>();
        const auto av = a.values<uint16_t>();
        const auto bv = b.values<uint16_t>();
        const auto cv = c.values<uint16_t>();
        const double ulp = t == DType::float16 ? 1.0 / 1024 : 1.0 / 128;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double ref = with_c ? widen_bits(t, cv[static_cast<size_t>(j)]) : 0.0;
            for (int64_t p = 0; p < k; ++p) {
              const size_t bi = static_cast<size_t>(trans_b ? j * k + p : p * n + j);
              ref += static_cast<double>(widen_bits(t, av[static_cast<size_t>(i * k + p)])) *
                     widen_bits(t, bv[bi]);
            }
            const float got = widen_bits(t, y[static_cast<size_t>(i * n + j)]);
            ASSERT_NEAR(got, ref, ulp * std::max(std::abs(ref), 1e-2))
                << what << " " << i << "," << j;
          }
        }
        EXPECT_EQ(one.workspace_bytes(), static_cast<uint64_t>(m * k) * sizeof(float)) << what;
        ASSERT_TRUE(one.has_state()) << what;
        const uint64_t kept = static_cast<uint64_t>(n * k) * 2 + (with_c ? n * sizeof(float) : 0);
        EXPECT_EQ(one.state()->owned_bytes(), kept) << what;
        std::vector<graph::ConcreteTensor> ins{{t, a.dims}, {t, b.dims}};
        if (with_c) ins.push_back({t, c.dims});
        const graph::OpSchema* row = runtime::op_registry().find("", "Gemm");
        EXPECT_EQ(row->packed(one.node(), ins, {{t, {m, n}}}, {false, true, true}), kept) << what;
        PreparedRun two("Gemm", in, {attr("transB", int64_t{trans_b ? 1 : 0})});
        two.constants({1, 2}).threads(2).run();
        EXPECT_EQ(two.out(0).values<uint16_t>(), y) << what;
      }
    }
  }
  // B computed while running: no copy of it was planned, and preparing says so.
  PreparedRun computed(
      "Gemm", {spread_16(DType::float16, {1, 4}, 8), spread_16(DType::float16, {4, 2}, 9)});
  computed.constants({});
  const std::string e = computed.run_error();
  EXPECT_NE(e.find("'n0' (Gemm)"), std::string::npos) << e;
  EXPECT_NE(e.find("computed while running"), std::string::npos) << e;
  // Nine rows: the float32 copies (B widened: N K 4 bytes at least).
  PreparedRun nine("Gemm",
                   {spread_16(DType::float16, {9, k}, 6), spread_16(DType::float16, {k, n}, 7)});
  nine.constants({1});
  nine.run();
  EXPECT_GE(nine.state()->owned_bytes(), static_cast<uint64_t>(n * k) * sizeof(float));
}

TEST(Float16Kernels, SoftmaxRowsWidenedOrNotRoundOnce) {
  // A row short enough to be widened on the stack (37, and 4096 exactly), one longer (5000) and
  // a strided one (axis 0 of [37, 3]): each output the float softmax rounded once, so within one
  // unit of the last place of the double one.
  for (const auto& [dims, axis] :
       {std::pair{Ints{2, 37}, int64_t{-1}}, std::pair{Ints{1, 4096}, int64_t{-1}},
        std::pair{Ints{1, 5000}, int64_t{-1}}, std::pair{Ints{37, 3}, int64_t{0}}}) {
    const Tensor x = spread_16(DType::float16, dims, 11);
    PreparedRun soft("Softmax", {x}, {attr("axis", axis)});
    soft.run();
    const auto xv = x.values<uint16_t>();
    const auto yv = soft.out(0).values<uint16_t>();
    const size_t rows = static_cast<size_t>(axis == 0 ? dims[1] : dims[0]);
    const size_t len = static_cast<size_t>(axis == 0 ? dims[0] : dims[1]);
    const size_t step = axis == 0 ? rows : 1;
    for (size_t r = 0; r < rows; ++r) {
      const size_t base = axis == 0 ? r : r * len;
      double sum = 0;
      for (size_t i = 0; i < len; ++i)
        sum += std::exp(double{float_from_half(xv[base + i * step])});
      for (size_t i = 0; i < len; ++i) {
        const double ref = std::exp(double{float_from_half(xv[base + i * step])}) / sum;
        ASSERT_NEAR(float_from_half(yv[base + i * step]), ref, ref / 1024) << len << " at " << i;
      }
    }
  }
}

TEST(Float16Kernels, LayoutChangesMoveTheTwoBytesOfEachElement) {
  // A few channels (an input image: pixel by pixel) and many (channel by channel), over more
  // pixels than a block: channels-last is [N, H, W, C] of the same elements, and back.
  for (const int64_t c : {int64_t{3}, int64_t{20}}) {
    const Ints nchw{2, c, 17, 19};
    const Tensor x = spread_16(DType::float16, nchw, 12);
    PreparedRun to("footprint::ToChannelsLast", {x});
    to.run();
    const auto xv = x.values<uint16_t>();
    EXPECT_EQ(to.out(0).values<uint16_t>(), channels_last(xv, 2, c, int64_t{17} * 19))
        << c << " channels";
    PreparedRun back("footprint::FromChannelsLast", {to.out(0)});
    back.run();
    EXPECT_EQ(back.out(0).values<uint16_t>(), xv) << c << " channels";
  }
}

TEST(Float16Kernels, BFloat16ProductsRunToo) {
  // bfloat16 1.5 (0x3fc0) times 3 (0x4040) is 4.5 (0x4090).
  const Tensor a = Tensor::of(DType::bfloat16, {1, 1}, Halves{0x3fc0});
  const Tensor b = Tensor::of(DType::bfloat16, {1, 1}, Halves{0x4040});
  PreparedRun mm("MatMul", {a, b});
  mm.run();
  EXPECT_EQ(mm.out(0).values<uint16_t>(), (Halves{0x4090}));
}

TEST(Float16Kernels, ReduceMeanAccumulatesInFloat) {
  // 2048 + 1 + 1 + 1 = 2051 in float; / 4 = 512.75, a tie between 512.5 and 513 (to the even
  // 513). Summed in half, each + 1 would round back to 2048 and give 512.
  KernelRun k("ReduceMean",
              {TestTensor::of<uint16_t>(DType::float16, {4}, {0x6800, 0x3c00, 0x3c00, 0x3c00})},
              {attr("keepdims", int64_t{0})});
  k.run();
  EXPECT_EQ(k.out(0).values<uint16_t>(), (Halves{0x6002}));
}

TEST(Float16Kernels, SoftmaxAndPow) {
  KernelRun soft("Softmax", {TestTensor::of<uint16_t>(DType::float16, {3}, {0, 0, 0})});
  soft.run();
  EXPECT_EQ(soft.out(0).values<uint16_t>(), (Halves{0x3555, 0x3555, 0x3555}));
  // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20, just above 1 + 2^-9: rounds to it; 3^2 = 9 (0x4880).
  KernelRun pow("Pow", {TestTensor::of<uint16_t>(DType::float16, {2}, {0x3c01, 0x4200}),
                        TestTensor::of<uint16_t>(DType::float16, {1}, {0x4000})});
  pow.run();
  EXPECT_EQ(pow.out(0).values<uint16_t>(), (Halves{0x3c02, 0x4880}));
}

TEST(Float16Kernels, PoolsAndLayerNormalization) {
  // Max of a 2x2 window: 3.5 (0x4300) among 1, -2, 0.5; the global average of 1, 2, 3, 4 is 2.5.
  const auto plane = [] {
    return TestTensor::of<uint16_t>(DType::float16, {1, 1, 2, 2}, {0x3c00, 0xc000, 0x4300, 0x3800});
  };
  KernelRun max("MaxPool", {plane()}, {attr("kernel_shape", Ints{2, 2})});
  max.run();
  EXPECT_EQ(max.out(0).values<uint16_t>(), (Halves{0x4300}));
  KernelRun avg("GlobalAveragePool", {TestTensor::of<uint16_t>(DType::float16, {1, 1, 2, 2},
                                                               {0x3c00, 0x4000, 0x4200, 0x4400})});
  avg.run();
  EXPECT_EQ(avg.out(0).values<uint16_t>(), (Halves{0x4100}));
  // (x - mean) / sqrt(var + 1e-5) for -1, 1: 0.999995 apart from 1, under half an ulp (2^-12).
  KernelRun ln("LayerNormalization",
               {TestTensor::of<uint16_t>(DType::float16, {2}, {0xbc00, 0x3c00}),
                TestTensor::of<uint16_t>(DType::float16, {2}, {0x3c00, 0x4000}),
                TestTensor::of<uint16_t>(DType::float16, {2}, {0, 0x3c00})});
  ln.run();
  EXPECT_EQ(ln.out(0).values<uint16_t>(), (Halves{0xbc00, 0x4200}));  // -1 * 1 + 0, 1 * 2 + 1
}

// Halves of n values spread over [-4, 4) (with a NaN and both zeros among them when asked).
TestTensor spread(Ints dims, bool specials) {
  size_t n = 1;
  for (const int64_t d : dims) n *= static_cast<size_t>(d);
  Halves v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = half_from_float(static_cast<float>((i * 37) % 256) / 32.0f - 4.0f);
  if (specials && n > 3) {
    v[1] = 0x7e00;  // NaN
    v[2] = 0x8000;  // -0
  }
  return TestTensor::of<uint16_t>(DType::float16, std::move(dims), v);
}

// The same tensor in float32 (every half is a float).
TestTensor widened(const TestTensor& h) {
  std::vector<float> f;
  for (const uint16_t b : h.values<uint16_t>()) f.push_back(float_from_half(b));
  return TestTensor::of<float>(DType::float32, h.dims, f);
}

Halves rounded(const std::vector<float>& f) {
  Halves h;
  for (const float v : f) h.push_back(half_from_float(v));
  return h;
}

TEST(Float16Kernels, BlocksOfElementwiseOpsRoundAsTheFloatKernelThenOnce) {
  // Longer than a block (256) and not a multiple of one, so the conversions' tails run too; the
  // float32 kernel on the widened values, rounded, is what the 16-bit kernel must store (the
  // same float op, vector form included), bit for bit, NaN included.
  for (const char* op : {"Erf", "Tanh", "Exp", "Relu", "Sqrt", "HardSwish"}) {
    const TestTensor x = spread({1, 700}, true);
    KernelRun h(op, {x});
    h.run();
    KernelRun f(op, {widened(x)});
    f.run();
    EXPECT_EQ(h.out(0).values<uint16_t>(), rounded(f.out(0).values<float>())) << op;
  }
  // Broadcast rows: [3, 300] with [300] (a row operand), with [3, 1] (a column: stride 0) and
  // with itself in place.
  const TestTensor a = spread({3, 300}, true);
  for (const TestTensor& b : {spread({300}, false), spread({3, 1}, false)}) {
    for (const char* op : {"Add", "Mul", "Div", "Sub"}) {
      KernelRun h(op, {a, b});
      h.run();
      KernelRun f(op, {widened(a), widened(b)});
      f.run();
      EXPECT_EQ(h.out(0).values<uint16_t>(), rounded(f.out(0).values<float>())) << op;
    }
  }
  KernelRun same("Mul", {a, a});
  same.in_place().run();
  KernelRun same32("Mul", {widened(a), widened(a)});
  same32.run();
  EXPECT_EQ(same.out(0).values<uint16_t>(), rounded(same32.out(0).values<float>()));
}

TEST(Float16Kernels, MaxPoolPicksTheElementTheFloatLoopDoes) {
  // 3x3, stride 2, padding and ceil_mode, on planes with a NaN and a -0: the 16-bit path (rows
  // widened once) keeps the same element as the float32 kernel, so the widened result rounds
  // back to it exactly.
  const TestTensor x = spread({1, 2, 13, 11}, true);
  const std::vector<testing::Wire> attrs{
      attr("kernel_shape", Ints{3, 3}), attr("strides", Ints{2, 2}), attr("pads", Ints{1, 0, 1, 1}),
      attr("ceil_mode", int64_t{1})};
  KernelRun h("MaxPool", {x}, attrs);
  h.run();
  KernelRun f("MaxPool", {widened(x)}, attrs);
  f.run();
  EXPECT_EQ(h.out(0).values<uint16_t>(), rounded(f.out(0).values<float>()));
}

TEST(Float16Kernels, ChannelsLastMaxPoolComparesThePatternsAsTheFloatLoop) {
  // The channels-last max pool compares 16-bit patterns without widening them: it must keep
  // the element the NCHW loop keeps (which compares floats, `x > best`), bit for bit, with
  // NaNs first, later and everywhere in a window, both zeros side by side, both infinities and
  // negatives; 40 channels are two vectors of sixteen and a tail.
  const Ints nchw{2, 40, 9, 8};
  const int64_t c = 40;
  const int64_t pixels = int64_t{9} * 8;
  for (const DType t : {DType::float16, DType::bfloat16}) {
    const uint16_t nan = t == DType::float16 ? 0x7e01 : 0x7fc1;
    const uint16_t inf = t == DType::float16 ? 0x7c00 : 0x7f80;
    Tensor x = spread_16(t, nchw, 31);
    std::vector<uint16_t> v = x.values<uint16_t>();
    for (size_t i = 0; i < v.size(); ++i) {
      if (i % 7 == 0) v[i] = nan;
      if (i % 11 == 0) v[i] = static_cast<uint16_t>(nan | 0x8000);
      if (i % 5 == 1) v[i] = 0x8000;
      if (i % 5 == 2) v[i] = 0;
      if (i % 13 == 3) v[i] = inf;
      if (i % 17 == 4) v[i] = static_cast<uint16_t>(inf | 0x8000);
    }
    const Halves last = channels_last(v, 2, c, pixels);
    const std::vector<testing::Wire> attrs{attr("kernel_shape", Ints{3, 3}),
                                           attr("strides", Ints{2, 1}),
                                           attr("pads", Ints{1, 1, 1, 0})};
    PreparedRun plain("MaxPool", {Tensor::of(t, nchw, v)}, attrs);
    plain.run();
    PreparedRun nhwc("footprint::NhwcMaxPool", {Tensor::of(t, Ints{2, 9, 8, c}, last)}, attrs);
    nhwc.run();
    EXPECT_EQ(nhwc.out(0).values<uint16_t>(),
              channels_last(plain.out(0).values<uint16_t>(), 2, c, int64_t{5} * 7))
        << dtype_name(t);
  }
}

TEST(Float16Kernels, TheProductRowsDeclareTheirSixteenBitFloats) {
  const graph::OpRegistry& r = runtime::op_registry();
  for (const auto& [domain, op] :
       {std::pair{"", "Conv"}, std::pair{"", "Gemm"}, std::pair{"", "MatMul"},
        std::pair{"footprint", "MatMulAdd"}, std::pair{"footprint", "NhwcConv"}}) {
    const graph::OpSchema* row = r.find(domain, op);
    ASSERT_NE(row, nullptr) << op;
    for (const DType t : {DType::float32, DType::float16, DType::bfloat16}) {
      EXPECT_TRUE(row->kernel_dtypes.contains(t)) << op << " " << dtype_name(t);
      EXPECT_TRUE(row->epilogue_dtypes.contains(t)) << op << " " << dtype_name(t);
    }
    EXPECT_FALSE(row->kernel_dtypes.contains(DType::float64)) << op;
  }
}

}  // namespace
}  // namespace footprint
