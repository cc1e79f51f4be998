// QuantizeLinear, DequantizeLinear (ONNX and com.microsoft domains) and DynamicQuantizeLinear,
// prepared and run as the executor runs them, against values worked out by hand: ties rounding
// to even, saturation, negative zero points, per-axis and blocked scales on either side of the
// axis, 4-bit elements packed two a byte with odd counts, float16 arithmetic; and the bad inputs
// refused naming the node and the input. The ONNX backend cases run in conformance_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "footprint/core/minifloat.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/op_registry.hpp"
#include "runtime/prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

template <class T>
Tensor tensor(DType t, Ints dims, const std::vector<T>& v) {
  return Tensor::of(t, std::move(dims), v);
}
Tensor scalar(float v) {
  return floats({}, {v});
}
// A 4-bit tensor of `dims` from its packed bytes.
Tensor packed(DType t, Ints dims, const std::vector<uint8_t>& bytes) {
  Tensor x{t, std::move(dims), {}};
  if (bytes.size() != (x.numel() + 1) / 2) throw std::runtime_error("packed: wrong byte count");
  for (uint8_t b : bytes) x.bytes.push_back(static_cast<std::byte>(b));
  return x;
}

// Output 0 of `op` run prepared (twice) on `in`, having allocated nothing while running.
Tensor run(const std::string& op, std::vector<std::optional<Tensor>> in,
           std::vector<Wire> attrs = {}, int64_t opset = 21) {
  PreparedRun k(op, std::move(in), std::move(attrs), opset);
  k.run();
  EXPECT_EQ(k.allocations(), 0u) << op;
  return k.out(0);
}

std::vector<int> ints_of(const Tensor& t) {
  std::vector<int> v;
  for (size_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype) {
      case DType::int8:
        v.push_back(t.values<int8_t>()[i]);
        break;
      case DType::uint8:
        v.push_back(t.values<uint8_t>()[i]);
        break;
      case DType::int16:
        v.push_back(t.values<int16_t>()[i]);
        break;
      case DType::uint16:
        v.push_back(t.values<uint16_t>()[i]);
        break;
      default:
        throw std::runtime_error("ints_of: not a whole-byte integer tensor");
    }
  }
  return v;
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  std::vector<uint8_t> v;
  for (std::byte b : t.bytes) v.push_back(std::to_integer<uint8_t>(b));
  return v;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(QuantizeLinearKernel, RoundsHalfToEvenAndSaturates) {
  // x / 2 + 128: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0, -1.5 -> -2, 3.5 -> 4; beyond the range
  // (and infinities) saturate; NaN goes to the bottom, as the reference's int conversion does.
  const Tensor x = floats({13}, {0, 1, 2, 3, 5, -1, -3, 7, 1000, -1000, kInf, -kInf, kNaN});
  const Tensor y = run("QuantizeLinear", {x, scalar(2), tensor<uint8_t>(DType::uint8, {}, {128})});
  EXPECT_EQ(y.dtype, DType::uint8);
  EXPECT_EQ(ints_of(y),
            (std::vector<int>{128, 128, 129, 130, 130, 128, 126, 132, 255, 0, 255, 0, 0}));
}

TEST(QuantizeLinearKernel, QuotientsPastTheMagicNumbersReachSaturate) {
  // Quotients around 2^22, 2^23 and 1.5 x 2^23, where adding 1.5 x 2^23 no longer rounds to the
  // nearest integer, and the largest floats, on both signs: every one saturates, on int8 and
  // uint8 alike (the byte types' vectorised path) and on int16. 40 elements, so the vectorised
  // loop runs whole vectors and a tail.
  std::vector<float> v;
  for (float m : {4194303.0F, 4194304.0F, 6291456.0F, 8388607.0F, 8388608.0F, 12582912.0F,
                  12582913.0F, 16777216.0F, 3.0e38F, 1.0e30F}) {
    v.push_back(m);
    v.push_back(-m);
    v.push_back(m / 2);
    v.push_back(-m / 2);
  }
  const Tensor x = floats({40}, v);
  const Tensor y8 = run("QuantizeLinear", {x, scalar(0.5F), tensor<int8_t>(DType::int8, {}, {3})});
  const Tensor u8 =
      run("QuantizeLinear", {x, scalar(0.5F), tensor<uint8_t>(DType::uint8, {}, {3})});
  const Tensor i16 =
      run("QuantizeLinear", {x, scalar(0.5F), tensor<int16_t>(DType::int16, {}, {3})});
  const std::vector<int> a = ints_of(y8);
  const std::vector<int> b = ints_of(u8);
  const std::vector<int> c = ints_of(i16);
  for (size_t i = 0; i < v.size(); ++i) {
    const bool up = v[i] > 0;
    EXPECT_EQ(a[i], up ? 127 : -128) << v[i];
    EXPECT_EQ(b[i], up ? 255 : 0) << v[i];
    EXPECT_EQ(c[i], up ? 32767 : -32768) << v[i];
  }
}

TEST(QuantizeLinearKernel, NegativeZeroPointInt8) {
  // x / 0.5 - 3: 2.5 -> 2, 3.5 -> 4, 0.5 -> 0, -0.5 -> 0; -143 and 127 saturate to -128 and 127.
  const Tensor x = floats({6}, {1.25F, 1.75F, -70, 65, 0.25F, -0.25F});
  const Tensor y = run("QuantizeLinear", {x, scalar(0.5F), tensor<int8_t>(DType::int8, {}, {-3})});
  EXPECT_EQ(ints_of(y), (std::vector<int>{-1, 1, -128, 127, -3, -3}));
}

TEST(QuantizeLinearKernel, SixteenBitTypes) {
  const Tensor x = floats({5}, {32767.5F, -32768.5F, 40000, 0.5F, 1.5F});
  const Tensor y = run("QuantizeLinear", {x, scalar(1), tensor<int16_t>(DType::int16, {}, {0})});
  EXPECT_EQ(ints_of(y), (std::vector<int>{32767, -32768, 32767, 0, 2}));
  // x / 0.5 + 100 on uint16: -100.5 -> -100 (even), so 0; 80100 saturates.
  const Tensor u = floats({5}, {-50, -50.25F, -51, 40000, 0.75F});
  const Tensor uy =
      run("QuantizeLinear", {u, scalar(0.5F), tensor<uint16_t>(DType::uint16, {}, {100})});
  EXPECT_EQ(ints_of(uy), (std::vector<int>{0, 0, 0, 65535, 102}));
}

TEST(QuantizeLinearKernel, PerAxis) {
  // Axis 1 (the innermost): the scale and zero point change every element.
  const Tensor x = floats({2, 3}, {1, 2, 4, -3, 5, 10});
  const Tensor y = run("QuantizeLinear",
                       {x, floats({3}, {1, 2, 4}), tensor<int8_t>(DType::int8, {3}, {0, 1, -1})});
  EXPECT_EQ(ints_of(y), (std::vector<int>{1, 2, 0, -3, 3, 1}));
  // Axis 0: one scale per row; 1.5 -> 2, 2.5 -> 2, -3.5 -> -4.
  const Tensor rows = floats({2, 3}, {1, 2, 3, 15, 25, -35});
  const Tensor yr =
      run("QuantizeLinear", {rows, floats({2}, {1, 10}), tensor<int8_t>(DType::int8, {2}, {0, 0})},
          {attr("axis", int64_t{0})});
  EXPECT_EQ(ints_of(yr), (std::vector<int>{1, 2, 3, 2, 2, -4}));
  // Opset 13 reads the same axis.
  const Tensor y13 =
      run("QuantizeLinear",
          {x, floats({3}, {1, 2, 4}), tensor<int8_t>(DType::int8, {3}, {0, 1, -1})}, {}, 13);
  EXPECT_EQ(ints_of(y13), ints_of(y));
}

TEST(QuantizeLinearKernel, BlockedAlongEitherSideOfTheAxis) {
  // Axis 1 innermost, blocks of 2 over 5 elements: 3 blocks, the last of one element.
  const Tensor x = floats({2, 5}, {1, 2, 3, 5, 9, 1, 2, 3, 4, 12});
  const Tensor s = floats({2, 3}, {1, 2, 4, 0.5F, 1, 8});
  const Tensor zp = tensor<uint8_t>(DType::uint8, {2, 3}, {0, 10, 20, 1, 2, 3});
  const Tensor y = run("QuantizeLinear", {x, s, zp}, {attr("block_size", int64_t{2})});
  // Row 0: 1/1, 2/1 | 3/2 = 1.5 -> 2, 5/2 = 2.5 -> 2, + 10 | 9/4 = 2.25 -> 2, + 20.
  // Row 1: 1/0.5, 2/0.5, + 1 | 3, 4, + 2 | 12/8 = 1.5 -> 2, + 3.
  EXPECT_EQ(ints_of(y), (std::vector<int>{1, 2, 12, 12, 22, 3, 5, 5, 6, 5}));
  // Axis 0 with a row of scales per block: rows 0-1 take scale row 0, row 2 scale row 1.
  const Tensor xc = floats({3, 2}, {1, 2, 3, 4, 10, 12});
  const Tensor sc = floats({2, 2}, {1, 2, 4, 8});
  const Tensor yc =
      run("QuantizeLinear", {xc, sc, tensor<int8_t>(DType::int8, {2, 2}, {0, 0, 0, 0})},
          {attr("block_size", int64_t{2}), attr("axis", int64_t{0})});
  EXPECT_EQ(ints_of(yc), (std::vector<int>{1, 1, 3, 2, 2, 2}));
}

TEST(QuantizeLinearKernel, FourBitPackedLowNibbleFirstOddCount) {
  // int4 with zero point -1: -1, 0, -8, 8 -> 7, -10 - 1 -> -8; five elements in three bytes, the
  // last high nibble 0.
  const Tensor x = floats({5}, {0, 1, -7, 9, -9.5F});
  const Tensor y = run("QuantizeLinear", {x, scalar(1), packed(DType::int4, {}, {0x0F})});
  EXPECT_EQ(y.dtype, DType::int4);
  EXPECT_EQ(bytes_of(y), (std::vector<uint8_t>{0x0F, 0x78, 0x08}));
  // uint4 by output_dtype (opset 21), no zero point: 1, 15 (20 saturates), 3.
  const int64_t uint4 = static_cast<int64_t>(DType::uint4);
  const Tensor u =
      run("QuantizeLinear", {floats({3}, {1, 20, 3}), scalar(1)}, {attr("output_dtype", uint4)});
  EXPECT_EQ(u.dtype, DType::uint4);
  EXPECT_EQ(bytes_of(u), (std::vector<uint8_t>{0xF1, 0x03}));
}

// y = saturate(nearbyint(x / s) + zp) element by element: the spec's formula, written apart from
// the kernel's chunked loops.
int reference_quantize(float x, float s, int zp, int lo, int hi) {
  const float q = std::nearbyint(x / s) + static_cast<float>(zp);
  return static_cast<int>(std::clamp(q, static_cast<float>(lo), static_cast<float>(hi)));
}

TEST(QuantizeLinearKernel, FourBitPerAxisOnTwoThreadsMatchesTheFormula) {
  // [3, 6667] along axis 0: rows of an odd length, so rows start on both nibbles, and two
  // threads split the 20001 elements (at even indices).
  const Ints dims{3, 6667};
  const Tensor x = random_floats(dims, 7);
  const std::vector<float> scales{0.13F, 0.25F, 0.07F};
  PreparedRun k("QuantizeLinear", {x, floats({3}, scales), packed(DType::int4, {3}, {0x8F, 0x03})},
                {attr("axis", int64_t{0})}, 21);
  k.threads(2).run();
  EXPECT_EQ(k.allocations(), 0u);
  const std::vector<int> zps{-1, -8, 3};
  const Tensor& y = k.out(0);
  ASSERT_EQ(y.bytes.size(), 10001u);
  const std::vector<float> xs = x.floats();
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t row = i / 6667;
    const int want = reference_quantize(xs[i], scales[row], zps[row], -8, 7);
    const int nibble = (std::to_integer<int>(y.bytes[i / 2]) >> ((i % 2) * 4)) & 0xF;
    ASSERT_EQ((nibble ^ 8) - 8, want) << "element " << i;
  }
  EXPECT_EQ(std::to_integer<int>(y.bytes.back()) >> 4, 0) << "the padding nibble";
}

TEST(QuantizeLinearKernel, QuotientsAtAndBesideHalvesRoundAsDividing) {
  // The float32 per-tensor path multiplies by 1 / scale where the CPU has wide vectors, dividing
  // only near halves: every x here is a tie (k + 0.5) * s, or one of its float neighbours, whose
  // product and quotient differ in the last bits, at scales whose reciprocals are inexact; the
  // bytes must be the spec's x / s rounded, element by element, on both integer types.
  for (const float s : {0.1F, 0.0123F, 3.7F, 1.0F / 3.0F, 0.007843138F, 1e-30F, 2.5e37F}) {
    std::vector<float> xs;
    for (int k = -140; k < 140; ++k) {
      const float tie = (static_cast<float>(k) + 0.5F) * s;
      xs.insert(xs.end(), {tie, std::nextafter(tie, kInf), std::nextafter(tie, -kInf),
                           static_cast<float>(k) * s});
    }
    xs.push_back(kNaN);
    const auto n = static_cast<int64_t>(xs.size());
    const Tensor x = floats({n}, xs);
    const Tensor u = run("QuantizeLinear", {x, scalar(s), tensor<uint8_t>(DType::uint8, {}, {3})});
    const Tensor i = run("QuantizeLinear", {x, scalar(s), tensor<int8_t>(DType::int8, {}, {-2})});
    const std::vector<int> us = ints_of(u);
    const std::vector<int> is = ints_of(i);
    for (size_t e = 0; e + 1 < xs.size(); ++e) {
      ASSERT_EQ(us[e], reference_quantize(xs[e], s, 3, 0, 255)) << "x " << xs[e] << " s " << s;
      ASSERT_EQ(is[e], reference_quantize(xs[e], s, -2, -128, 127)) << "x " << xs[e] << " s " << s;
    }
    EXPECT_EQ(us.back(), 0) << "NaN to the bottom";
    EXPECT_EQ(is.back(), -128) << "NaN to the bottom";
  }
}

TEST(QuantizeLinearKernel, Float16DividesInFloat16) {
  // 1 / 0.39990234375 is 2.50061 in float but rounds to 2.5 in float16, the scale's precision
  // (the spec), which rounds half to even to 2, not 3.
  const Tensor x = tensor<uint16_t>(DType::float16, {1}, {0x3C00});
  const Tensor s = tensor<uint16_t>(DType::float16, {}, {0x3666});
  EXPECT_EQ(ints_of(run("QuantizeLinear", {x, s})), (std::vector<int>{2}));
  // With precision float (opset 23), it is 3.
  const int64_t f32 = static_cast<int64_t>(DType::float32);
  EXPECT_EQ(ints_of(run("QuantizeLinear", {x, s}, {attr("precision", f32)})),
            (std::vector<int>{3}));
  // bfloat16 input: 3.0 / 2 = 1.5 -> 2.
  const Tensor b = tensor<uint16_t>(DType::bfloat16, {1}, {0x4040});
  const Tensor bs = tensor<uint16_t>(DType::bfloat16, {}, {0x4000});
  EXPECT_EQ(ints_of(run("QuantizeLinear", {b, bs})), (std::vector<int>{2}));
}

TEST(DequantizeLinearKernel, PerTensorAndPerAxis) {
  const Tensor y = run("DequantizeLinear", {tensor<int8_t>(DType::int8, {4}, {-128, 127, -3, 0}),
                                            scalar(0.5F), tensor<int8_t>(DType::int8, {}, {-3})});
  EXPECT_EQ(y.floats(), (std::vector<float>{-62.5F, 65, 0, 1.5F}));
  const Tensor ya = run("DequantizeLinear",
                        {tensor<uint8_t>(DType::uint8, {2, 2}, {130, 8, 0, 255}),
                         floats({2}, {2, 0.25F}), tensor<uint8_t>(DType::uint8, {2}, {128, 0})});
  EXPECT_EQ(ya.floats(), (std::vector<float>{4, 2, -256, 63.75F}));
  // Opset 10: no axis attribute, a scalar scale, no zero point.
  const Tensor y10 =
      run("DequantizeLinear", {tensor<uint8_t>(DType::uint8, {2}, {0, 3}), scalar(2)}, {}, 10);
  EXPECT_EQ(y10.floats(), (std::vector<float>{0, 6}));
}

TEST(DequantizeLinearKernel, FourBitAndBlocked) {
  // int4 -1, 0, -8, 7, -8 (the bytes QuantizeLinear wrote above) minus zero point -1, times 2.
  const Tensor y = run("DequantizeLinear", {packed(DType::int4, {5}, {0x0F, 0x78, 0x08}), scalar(2),
                                            packed(DType::int4, {}, {0x0F})});
  EXPECT_EQ(y.floats(), (std::vector<float>{0, 2, -14, 16, -14}));
  // uint4 [2, 3] = {1, 2, 3; 4, 5, 15}, blocks of 2 along axis 1 (scale and zero point [2, 2]).
  const Tensor x = packed(DType::uint4, {2, 3}, {0x21, 0x43, 0xF5});
  const Tensor s = floats({2, 2}, {1, 10, 0.5F, 2});
  const Tensor zp = packed(DType::uint4, {2, 2}, {0x10, 0x32});
  const Tensor yb = run("DequantizeLinear", {x, s, zp}, {attr("block_size", int64_t{2})});
  EXPECT_EQ(yb.floats(), (std::vector<float>{1, 2, 20, 1, 1.5F, 24}));
}

TEST(DequantizeLinearKernel, WideIntegersAndHalfOutputs) {
  const Tensor y16 =
      run("DequantizeLinear", {tensor<int16_t>(DType::int16, {2}, {-32768, 32767}), scalar(0.5F),
                               tensor<int16_t>(DType::int16, {}, {1})});
  EXPECT_EQ(y16.floats(), (std::vector<float>{-16384.5F, 16383}));
  const Tensor y32 =
      run("DequantizeLinear",
          {tensor<int32_t>(DType::int32, {2}, {2147483647, -2147483647 - 1}), scalar(1)});
  EXPECT_EQ(y32.floats(), (std::vector<float>{2147483648.0F, -2147483648.0F}));
  // A float16 scale gives float16: (3, -7) x 0.5 = 1.5 (0x3E00), -3.5 (0xC300).
  const Tensor yh = run("DequantizeLinear", {tensor<int8_t>(DType::int8, {2}, {3, -7}),
                                             tensor<uint16_t>(DType::float16, {}, {0x3800})});
  EXPECT_EQ(yh.dtype, DType::float16);
  EXPECT_EQ(yh.values<uint16_t>(), (std::vector<uint16_t>{0x3E00, 0xC300}));
  // output_dtype (opset 23) bfloat16 from a float scale: 1 x 0.5 = 0x3F00.
  const int64_t bf16 = static_cast<int64_t>(DType::bfloat16);
  const Tensor yb = run("DequantizeLinear", {tensor<uint8_t>(DType::uint8, {1}, {1}), scalar(0.5F)},
                        {attr("output_dtype", bf16)}, 23);
  EXPECT_EQ(yb.dtype, DType::bfloat16);
  EXPECT_EQ(yb.values<uint16_t>(), (std::vector<uint16_t>{0x3F00}));
}

TEST(QuantizationKernels, RoundTripOnTwoThreadsPerAxisAndBlocked) {
  // Dequantizing what QuantizeLinear made gives back x to within half a step, element by
  // element, for a tensor large enough to be split among threads.
  const Ints dims{4, 3000};
  const Tensor x = random_floats(dims, 3);
  const Tensor s = floats({4, 2}, {0.01F, 0.02F, 0.03F, 0.04F, 0.05F, 0.06F, 0.07F, 0.08F});
  const Tensor zp = tensor<int8_t>(DType::int8, {4, 2}, {0, 1, -1, 2, -2, 3, -3, 4});
  PreparedRun q("QuantizeLinear", {x, s, zp}, {attr("block_size", int64_t{1500})}, 21);
  q.threads(2).run();
  PreparedRun dq("DequantizeLinear", {q.out(0), s, zp}, {attr("block_size", int64_t{1500})}, 21);
  dq.threads(2).run();
  EXPECT_EQ(q.allocations() + dq.allocations(), 0u);
  const std::vector<float> xs = x.floats();
  const std::vector<float> back = dq.out(0).floats();
  const std::vector<float> sv = s.floats();
  for (size_t i = 0; i < xs.size(); ++i) {
    const float step = sv[(i / 3000) * 2 + (i % 3000) / 1500];
    ASSERT_LE(std::fabs(back[i] - xs[i]), step / 2 * 1.0001F) << "element " << i;
  }
}

TEST(DynamicQuantizeLinearKernel, ScaleAndZeroPointFromTheData) {
  // [-51, 204]: 255 wide, so scale 1 and zero point 51; 25.5 -> 26 and 24.5 -> 24 (even).
  PreparedRun k("DynamicQuantizeLinear", {floats({6}, {-51, 0, 204, 102, 25.5F, 24.5F})}, {}, 21,
                3);
  k.run();
  EXPECT_EQ(k.allocations(), 0u);
  EXPECT_EQ(ints_of(k.out(0)), (std::vector<int>{0, 51, 255, 153, 77, 75}));
  EXPECT_EQ(k.out(1).floats(), (std::vector<float>{1}));
  EXPECT_EQ(ints_of(k.out(2)), (std::vector<int>{51}));
}

TEST(DynamicQuantizeLinearKernel, RangeAlwaysHoldsZero) {
  // All positive: the range starts at 0, zero point 0.
  PreparedRun pos("DynamicQuantizeLinear", {floats({2}, {255, 51})}, {}, 21, 3);
  pos.run();
  EXPECT_EQ(ints_of(pos.out(0)), (std::vector<int>{255, 51}));
  EXPECT_EQ(ints_of(pos.out(2)), (std::vector<int>{0}));
  // All negative: it ends at 0, zero point 255; -5.5 -> -6.
  PreparedRun neg("DynamicQuantizeLinear", {floats({2}, {-255, -5.5F})}, {}, 21, 3);
  neg.run();
  EXPECT_EQ(ints_of(neg.out(0)), (std::vector<int>{0, 249}));
  EXPECT_EQ(neg.out(1).floats(), (std::vector<float>{1}));
  EXPECT_EQ(ints_of(neg.out(2)), (std::vector<int>{255}));
  // All zero: an empty range gives scale 1 / 255.
  PreparedRun zero("DynamicQuantizeLinear", {floats({2}, {0, 0})}, {}, 21, 3);
  zero.run();
  EXPECT_EQ(ints_of(zero.out(0)), (std::vector<int>{0, 0}));
  EXPECT_EQ(zero.out(1).floats(), (std::vector<float>{1.0F / 255.0F}));
}

TEST(QuantizationKernels, MicrosoftDomainIsTheSameOp) {
  // Built (and so evaluated through the runtime's rows) with both domains' ops.
  graph::GraphBuilder b(runtime::op_registry());
  auto constant = [&](DType t, Ints dims, const void* data) {
    auto v = graph::HostValue::make(t, std::move(dims));
    std::memcpy(v->data(), data, v->bytes());
    return b.constant(v);
  };
  const std::vector<int8_t> xq{-3, 0, 5, 127, -128, 1};
  const std::vector<float> sv{0.5F, 2};
  const std::vector<int8_t> zv{-3, 1};
  const graph::Var x = constant(DType::int8, {3, 2}, xq.data());
  const graph::Var s = constant(DType::float32, {2}, sv.data());
  const graph::Var zp = constant(DType::int8, {2}, zv.data());
  const graph::Var ms = b.op("DequantizeLinear", {x, s, zp}, {}, 1, "com.microsoft")[0];
  const graph::Var onnx = b.op("DequantizeLinear", {x, s, zp})[0];
  ASSERT_NE(ms.value(), nullptr);
  ASSERT_NE(onnx.value(), nullptr);
  const auto got = ms.value()->span<float>();
  // (x - zp) x scale per column.
  const std::vector<float> want{0, -2, 4, 252, -62.5F, 0};
  EXPECT_EQ(std::vector<float>(got.begin(), got.end()), want);
  const auto again = onnx.value()->span<float>();
  EXPECT_EQ(std::vector<float>(again.begin(), again.end()), want);
  const graph::Var back = b.op("QuantizeLinear", {ms, s, zp}, {}, 1, "com.microsoft")[0];
  ASSERT_NE(back.value(), nullptr);
  const auto q = back.value()->span<int8_t>();
  EXPECT_EQ(std::vector<int8_t>(q.begin(), q.end()), xq);
}

// ---- Bad input: one error naming the node and the input

TEST(QuantizationKernels, ScalesKnownOnlyWhenRunningAreCheckedByTheKernel) {
  // 65 scales: more than inference holds as a known value, so the kernel is the one to check.
  std::vector<float> scales(65, 0.5F);
  scales[64] = 0;
  const Tensor x = tensor<uint8_t>(DType::uint8, {65}, std::vector<uint8_t>(65, 1));
  PreparedRun k("DequantizeLinear", {x, floats({65}, scales)}, {attr("axis", int64_t{0})}, 21);
  k.constants({});  // the scale computed while running: nothing to check when preparing
  EXPECT_EQ(k.run_error(),
            "node 'n0' (DequantizeLinear): x_scale (input 1) element 64 is 0: a scale must "
            "be positive and finite");
  scales[64] = kNaN;
  scales[3] = -2;
  PreparedRun c("QuantizeLinear", {floats({65}, std::vector<float>(65, 1)), floats({65}, scales)},
                {attr("axis", int64_t{0})}, 21);
  // A constant scale is checked once, when preparing.
  EXPECT_EQ(c.run_error(),
            "node 'n0' (QuantizeLinear): y_scale (input 1) element 3 is -2: a scale must be "
            "positive and finite");
}

TEST(QuantizationKernels, SmallFloatsQuantizeByCasting) {
  // To float8: x / scale + zero point cast half to even, no integer rounding; past the largest
  // value saturate (default) or NaN. Back: (x - zero point) * scale, exactly.
  const int64_t e4m3 = static_cast<int64_t>(DType::float8e4m3fn);
  // 1.5 / 2 = 0.75; 4.4 / 2 = 2.2 -> 2.25; 1000 / 2 = 500 past 448 (rounding to 512); -0.005
  // -> -3 x 2^-9, a subnormal.
  const Tensor x = floats({4}, {1.5F, 4.4F, 1000, -0.01F});
  EXPECT_EQ(bytes_of(run("QuantizeLinear", {x, scalar(2)}, {attr("output_dtype", e4m3)})),
            (std::vector<uint8_t>{0x34, 0x41, 0x7E, 0x83}));
  EXPECT_EQ(bytes_of(run("QuantizeLinear", {x, scalar(2)},
                         {attr("output_dtype", e4m3), attr("saturate", int64_t{0})})),
            (std::vector<uint8_t>{0x34, 0x41, 0x7F, 0x83}));               // 500 overflows: NaN
  const Tensor q = tensor<uint8_t>(DType::float8e5m2, {2}, {0x3C, 0xC2});  // 1, -3
  const Tensor zp = tensor<uint8_t>(DType::float8e5m2, {}, {0x40});        // 2
  EXPECT_EQ(run("DequantizeLinear", {q, scalar(0.5F), zp}).floats(),
            (std::vector<float>{-0.5F, -2.5F}));
  // float4e2m1 (opset 23), two a byte, the first element in the low nibble: 1.5 / 2 = 0.75, a
  // tie between 0.5 and 1 -> 1 (even); 2.2 -> 2; 500 saturates at 6; -0.005 -> -0; 2.5, a tie
  // between 2 and 3 -> 2; the odd count's last byte has 0 above.
  const int64_t f4 = static_cast<int64_t>(DType::float4e2m1);
  const Tensor x5 = floats({5}, {1.5F, 4.4F, 1000, -0.01F, 5});
  const Tensor y4 = run("QuantizeLinear", {x5, scalar(2)}, {attr("output_dtype", f4)}, 23);
  EXPECT_EQ(y4.dtype, DType::float4e2m1);
  EXPECT_EQ(bytes_of(y4), (std::vector<uint8_t>{0x42, 0x87, 0x04}));
  // Back with a zero point of 1 (0x2): (1 - 1) x 0.5, (-3 - 1) x 0.5.
  const Tensor q4 = packed(DType::float4e2m1, {2}, {0xD2});
  const Tensor z4 = packed(DType::float4e2m1, {}, {0x02});
  EXPECT_EQ(run("DequantizeLinear", {q4, scalar(0.5F), z4}, {}, 23).floats(),
            (std::vector<float>{0, -2}));
  // Per axis 1 of [3, 2001] on two threads: runs of 2001 (odd) elements, so runs and threads
  // start on either nibble; each element's nibble is its own value's code.
  const Tensor xw = random_floats({3, 2001}, 5);
  const Tensor sw = floats({2001}, std::vector<float>(2001, 0.25F));
  PreparedRun qw("QuantizeLinear", {xw, sw}, {attr("output_dtype", f4), attr("axis", int64_t{1})},
                 23);
  qw.threads(2).run();
  EXPECT_EQ(qw.allocations(), 0u);
  const std::vector<uint8_t> codes = bytes_of(qw.out(0));
  ASSERT_EQ(codes.size(), (3U * 2001 + 1) / 2);
  const std::vector<float> xv = xw.floats();
  for (size_t e = 0; e < xv.size(); ++e) {
    const int code = (codes[e / 2] >> ((e % 2) * 4)) & 0xF;
    ASSERT_EQ(code, encode_float4e2m1(xv[e] / 0.25F)) << "element " << e;
  }
  EXPECT_EQ(codes.back() >> 4, 0) << "the odd count's padding";
  // Neither row refuses it any more (analyze's warning reads the rows).
  OneNode g;
  g.input("x", DType::float32, {2}).input("s", DType::float32, {});
  g.node(node_with("QuantizeLinear", {"x", "s"}, {"y"}, {attr("output_dtype", f4)}, "q4f"));
  g.node(node_with("QuantizeLinear", {"x", "s"}, {"y8"}, {attr("output_dtype", e4m3)}, "q8"));
  g.output("y").output("y8");
  const auto inferred = infer(g.graph, 23, nullptr, runtime::op_registry());
  EXPECT_EQ(graph::dtype_refused(inferred->graph, inferred->graph.node(0)), std::nullopt);
  EXPECT_EQ(graph::dtype_refused(inferred->graph, inferred->graph.node(1)), std::nullopt);
  PreparedRun i32("QuantizeLinear", {tensor<int32_t>(DType::int32, {1}, {1}), scalar(1)}, {}, 21);
  EXPECT_EQ(i32.run_error(),
            "node 'n0' (QuantizeLinear): quantizing int32 is not supported (footprint quantizes "
            "float, float16, bfloat16)");
}

}  // namespace
}  // namespace footprint::testing
