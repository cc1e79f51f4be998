// onnxruntime's QGemm, MatMulIntegerToFloat and DynamicQuantizeMatMul (com.microsoft) against a
// plain-loop reference written here from their documentation: the int32 sum of
// (a - a_zero)(b - b_zero) over K (QGemm with A and B transposed as transA and transB say, plus
// its int32 C broadcast to [M, N]), then requantized with the multiplier
// alpha a_scale b_scale / y_scale in float32, or scaled to float by alpha a_scale b_scale (plus
// MatMulIntegerToFloat's bias); DynamicQuantizeMatMul's A first quantized to uint8 as
// DynamicQuantizeLinear does. Each runs with the weights a constant when preparing (oneDNN's int8
// product where the CPU has VNNI) and not (the plain loops); bad operands are refused in one line
// naming the node and the input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

template <class T>
DType dtype_of() {
  if constexpr (std::is_same_v<T, uint8_t>) return DType::uint8;
  if constexpr (std::is_same_v<T, int8_t>) return DType::int8;
  if constexpr (std::is_same_v<T, int32_t>) return DType::int32;
  return DType::float32;
}

template <class T>
Tensor tensor(Ints dims, const std::vector<T>& v) {
  return Tensor::of(dtype_of<T>(), std::move(dims), v);
}

std::vector<float> random_scales(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.001F, 0.02F);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

double round_half_even(double v) {
  const double f = std::floor(v);
  const double frac = v - f;
  if (frac > 0.5) return f + 1;
  if (frac < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1;
}

// Runs the node with the weights (input `b`) a constant while preparing and not; returns both
// outputs' bytes, which must be equal, and the first.
Tensor run_both_ways(const std::string& op, const std::vector<std::optional<Tensor>>& in,
                     const std::vector<Wire>& attrs, size_t b, std::vector<size_t> constants) {
  std::optional<Tensor> first;
  for (const bool constant_b : {false, true}) {
    PreparedRun k(op, in, attrs, 13);
    std::vector<size_t> c = constants;
    if (constant_b) c.push_back(b);
    k.constants(c);
    k.run();
    // Kernels allocate nothing; oneDNN's execute makes a few small bookkeeping blocks (264 bytes
    // in 6 with 2.6.3), freed before it returns.
    if (constant_b) {
      EXPECT_LE(k.allocations(), 16U) << op;
    } else {
      EXPECT_EQ(k.allocations(), 0U) << op;
    }
    if (!first) {
      first = k.out(0);
    } else {
      EXPECT_EQ(k.out(0).bytes, first->bytes) << op << ": constant weights differ";
    }
  }
  return *first;
}

// ---- QGemm

struct QGemmCase {
  int64_t m = 5, k = 7, n = 6;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0F;
  Ints c_dims;  // "none" when has_c is false
  bool has_c = true;
  bool quantized = true;
};

// A [M, K] (or [K, M]) uint8, B [K, N] (or [N, K]) int8 with per-column scales and zero points.
void check_qgemm(const QGemmCase& q, unsigned seed) {
  const auto a = random_ints<uint8_t>(static_cast<size_t>(q.m * q.k), seed);
  const auto b = random_ints<int8_t>(static_cast<size_t>(q.k * q.n), seed + 1);
  const float sa = 0.02F;
  const uint8_t za = 131;
  const auto sb = random_scales(static_cast<size_t>(q.n), seed + 2);
  const auto zb = random_ints<int8_t>(static_cast<size_t>(q.n), seed + 3, -4, 4);
  size_t c_count = 1;
  for (int64_t d : q.c_dims) c_count *= static_cast<size_t>(d);
  const auto c = random_ints<int32_t>(c_count, seed + 4, -5000, 5000);
  const float sy = 0.07F;
  const uint8_t zy = 120;
  const auto at = [&](int64_t i, int64_t p) { return a[q.trans_a ? p * q.m + i : i * q.k + p]; };
  const auto bt = [&](int64_t p, int64_t j) { return b[q.trans_b ? j * q.k + p : p * q.n + j]; };
  const int64_t c_rows = q.c_dims.size() == 2 ? q.c_dims[0] : 1;
  const int64_t c_cols = q.c_dims.empty() ? 1 : q.c_dims.back();
  std::vector<uint8_t> want_q;
  std::vector<float> want_f;
  for (int64_t i = 0; i < q.m; ++i) {
    for (int64_t j = 0; j < q.n; ++j) {
      int64_t acc = 0;
      for (int64_t p = 0; p < q.k; ++p) {
        acc += (int64_t{at(i, p)} - za) * (int64_t{bt(p, j)} - zb[j]);
      }
      if (q.has_c) acc += c[(c_rows == 1 ? 0 : i * c_cols) + (c_cols == 1 ? 0 : j)];
      // The scales multiplied in float32, as onnxruntime takes them.
      const float scale = sa * q.alpha * sb[j];
      if (q.quantized) {
        const float v = static_cast<float>(acc) * (scale / sy);
        const double r = round_half_even(v) + zy;
        want_q.push_back(static_cast<uint8_t>(std::min(255.0, std::max(0.0, r))));
      } else {
        want_f.push_back(static_cast<float>(acc) * scale);
      }
    }
  }
  std::vector<std::optional<Tensor>> in{
      tensor<uint8_t>(q.trans_a ? Ints{q.k, q.m} : Ints{q.m, q.k}, a),
      floats({}, {sa}),
      tensor<uint8_t>({}, {za}),
      tensor<int8_t>(q.trans_b ? Ints{q.n, q.k} : Ints{q.k, q.n}, b),
      floats({q.n}, sb),
      tensor<int8_t>({q.n}, zb)};
  if (q.has_c) {
    in.emplace_back(tensor<int32_t>(q.c_dims, c));
  } else if (q.quantized) {
    in.emplace_back(std::nullopt);
  }
  if (q.quantized) {
    in.emplace_back(floats({}, {sy}));
    in.emplace_back(tensor<uint8_t>({}, {zy}));
  }
  const std::vector<Wire> attrs{attr("transA", int64_t{q.trans_a}),
                                attr("transB", int64_t{q.trans_b}), attr_float("alpha", q.alpha)};
  const Tensor y = run_both_ways("com.microsoft::QGemm", in, attrs, 3, {1, 2, 4, 5, 6, 7, 8});
  EXPECT_EQ(y.dims, (Ints{q.m, q.n}));
  if (q.quantized) {
    EXPECT_EQ(y.values<uint8_t>(), want_q);
  } else {
    expect_close(y.floats(), want_f, 1e-6F);
  }
}

TEST(QuantizedProductsKernels, QGemmTransposesAndBroadcastsC) {
  unsigned seed = 1;
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      QGemmCase q;
      q.trans_a = ta;
      q.trans_b = tb;
      q.c_dims = {6};
      check_qgemm(q, seed += 10);
      q.quantized = false;
      q.alpha = 0.75F;
      check_qgemm(q, seed += 10);
    }
  }
  // C in each form it may take: a scalar, [1, N], a column [M, 1], all of Y; or none.
  for (const Ints& c : {Ints{}, Ints{1, 6}, Ints{5, 1}, Ints{5, 6}}) {
    QGemmCase q;
    q.c_dims = c;
    check_qgemm(q, seed += 10);
    q.quantized = false;
    check_qgemm(q, seed += 10);
  }
  QGemmCase none;
  none.has_c = false;
  check_qgemm(none, seed += 10);
  none.quantized = false;
  check_qgemm(none, seed += 10);
}

TEST(QuantizedProductsKernels, QGemmWideAndLong) {
  // More columns than the kernels' block of accumulators (256) and more rows than one chunk.
  QGemmCase q;
  q.m = 70;
  q.k = 129;
  q.n = 300;
  q.trans_b = true;
  q.c_dims = {300};
  check_qgemm(q, 500);
  q.quantized = false;
  check_qgemm(q, 600);
}

// ---- MatMulIntegerToFloat

TEST(QuantizedProductsKernels, MatMulIntegerToFloatScalesBatchesAndAddsTheBias) {
  // A uint8 [2, 3, 7] (its scale and zero point computed while running, as a dynamic quantizer
  // makes them), B int8 [7, 6] with per-column scales and zero points, a bias [6].
  const auto a = random_ints<uint8_t>(42, 71);
  const auto b = random_ints<int8_t>(42, 72);
  const auto sb = random_scales(6, 73);
  const auto zb = random_ints<int8_t>(6, 74, -3, 3);
  const std::vector<float> bias{0.5F, -1, 2, 0, 0.25F, -3};
  const float sa = 0.011F;
  const uint8_t za = 125;
  for (const bool with_extras : {true, false}) {
    std::vector<float> want;
    for (int64_t r = 0; r < 6; ++r) {
      for (int64_t j = 0; j < 6; ++j) {
        int64_t acc = 0;
        for (int64_t p = 0; p < 7; ++p) {
          acc += (int64_t{a[r * 7 + p]} - (with_extras ? za : 0)) *
                 (int64_t{b[p * 6 + j]} - (with_extras ? zb[j] : 0));
        }
        want.push_back(static_cast<float>(acc) * (sa * sb[j]) + (with_extras ? bias[j] : 0.0F));
      }
    }
    std::vector<std::optional<Tensor>> in{tensor<uint8_t>({2, 3, 7}, a), tensor<int8_t>({7, 6}, b),
                                          floats({}, {sa}), floats({6}, sb)};
    if (with_extras) {
      in.emplace_back(tensor<uint8_t>({}, {za}));
      in.emplace_back(tensor<int8_t>({6}, zb));
      in.emplace_back(floats({6}, bias));
    }
    const Tensor y = run_both_ways("com.microsoft::MatMulIntegerToFloat", in, {}, 1, {3, 5, 6});
    EXPECT_EQ(y.dims, (Ints{2, 3, 6}));
    expect_close(y.floats(), want, 1e-6F);
  }
}

// ---- DynamicQuantizeMatMul

TEST(QuantizedProductsKernels, DynamicQuantizeMatMulQuantizesAAsDynamicQuantizeLinear) {
  // A float [2, 3, 7] quantized to uint8 over [min(0, min A), max(0, max A)], then as
  // MatMulIntegerToFloat with B int8 [7, 6], per-column scales and zero points and a bias.
  const std::vector<float> a = random_floats({2, 3, 7}, 81).floats();
  const auto b = random_ints<int8_t>(42, 82);
  const auto sb = random_scales(6, 83);
  const auto zb = random_ints<int8_t>(6, 84, -3, 3);
  const std::vector<float> bias{0.5F, -1, 2, 0, 0.25F, -3};
  float lo = 0, hi = 0;
  for (const float v : a) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const float scale = (hi - lo) / 255.0F;
  const auto quantize = [&](float v) { return std::min(255.0, std::max(0.0, round_half_even(v))); };
  const auto za = static_cast<int64_t>(quantize(-lo / scale));
  for (const bool with_extras : {true, false}) {
    std::vector<float> want;
    for (int64_t r = 0; r < 6; ++r) {
      for (int64_t j = 0; j < 6; ++j) {
        int64_t acc = 0;
        for (int64_t p = 0; p < 7; ++p) {
          const auto q =
              static_cast<int64_t>(quantize(a[r * 7 + p] / scale + static_cast<float>(za)));
          acc += (q - za) * (int64_t{b[p * 6 + j]} - (with_extras ? zb[j] : 0));
        }
        want.push_back(static_cast<float>(acc) * (scale * sb[j]) + (with_extras ? bias[j] : 0.0F));
      }
    }
    std::vector<std::optional<Tensor>> in{floats({2, 3, 7}, a), tensor<int8_t>({7, 6}, b),
                                          floats({6}, sb)};
    if (with_extras) {
      in.emplace_back(tensor<int8_t>({6}, zb));
      in.emplace_back(floats({6}, bias));
    }
    const Tensor y = run_both_ways("com.microsoft::DynamicQuantizeMatMul", in, {}, 1, {2, 3, 4});
    EXPECT_EQ(y.dims, (Ints{2, 3, 6}));
    expect_close(y.floats(), want, 1e-5F);
  }
}

// ---- bad operands

std::string error_of(const std::string& op, const std::vector<std::optional<Tensor>>& in,
                     const std::vector<Wire>& attrs = {}) {
  std::string what;
  try {
    PreparedRun k(op, in, attrs, 13);
    k.constants({});
    what = k.run_error();
  } catch (const Error& e) {
    what = e.what();
  }
  const size_t at = what.find("node 'n0'");
  return at == std::string::npos ? what : what.substr(at);
}

TEST(QuantizedProductsKernels, BadOperandsAreRefusedNamingTheNodeAndTheInput) {
  const auto a = tensor<uint8_t>({4, 3}, random_ints<uint8_t>(12, 1));
  const auto b = tensor<int8_t>({3, 5}, random_ints<int8_t>(15, 2));
  const auto s = floats({}, {0.1F});
  const auto z = tensor<uint8_t>({}, {0});
  const auto zb = tensor<int8_t>({}, {0});
  const std::string qgemm = "com.microsoft::QGemm";
  EXPECT_EQ(error_of(qgemm, {a, s, z, b, s, zb, tensor<int32_t>({2, 5}, std::vector<int32_t>(10))}),
            "node 'n0' (QGemm): input 'C' [2,5] does not broadcast to the output [4,5]");
  EXPECT_EQ(error_of(qgemm, {a, s, z, b, floats({4}, {1, 1, 1, 1}), zb}),
            "node 'n0' (QGemm): input 'b_scale' [4] is not a scalar, one value per column [N] or "
            "per column of each matrix [..., 1, N] of [3,5]");
  EXPECT_EQ(error_of(qgemm, {a, s, z, b, s, zb, std::nullopt,
                             floats({}, {std::numeric_limits<float>::quiet_NaN()}), z}),
            "node 'n0' (QGemm): input 'y_scale' holds nan at 0: a scale must be positive and "
            "finite");
  EXPECT_EQ(error_of(qgemm, {a, floats({}, {-1}), z, b, s, zb}),
            "node 'n0' (QGemm): input 'a_scale' holds -1.000000 at 0: a scale must be positive "
            "and finite");
  const std::string mitf = "com.microsoft::MatMulIntegerToFloat";
  EXPECT_EQ(error_of(mitf, {a, b, s, s, z, zb, tensor<int32_t>({5}, std::vector<int32_t>(5))}),
            "node 'n0' (MatMulIntegerToFloat): input 'bias' is int32, not float");
  EXPECT_EQ(error_of(mitf, {a, b, s, s, z, zb, floats({4}, {1, 2, 3, 4})}),
            "node 'n0' (MatMulIntegerToFloat): input 'bias' [4] is not one value per column [5]");
  EXPECT_EQ(error_of(mitf, {a, b, s, s, tensor<int8_t>({}, {0})}),
            "node 'n0' (MatMulIntegerToFloat): input 'a_zero_point' is int8, not uint8 as its "
            "tensor");
  const std::string dynamic = "com.microsoft::DynamicQuantizeMatMul";
  const auto fa = floats({4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_EQ(error_of(dynamic, {a, b, s}),
            "node 'n0' (DynamicQuantizeMatMul): input 'A' is uint8, not float32");
  EXPECT_EQ(error_of(dynamic, {fa, b, floats({3}, {1, 1, 1})}),
            "node 'n0' (DynamicQuantizeMatMul): input 'b_scale' [3] is not a scalar, one value per "
            "column [N] or per column of each matrix [..., 1, N] of [3,5]");
  auto inf = fa;
  inf.bytes =
      floats({4, 3}, {1, 2, 3, 4, 5, std::numeric_limits<float>::infinity(), 7, 8, 9, 10, 11, 12})
          .bytes;
  EXPECT_EQ(error_of(dynamic, {inf, b, s}),
            "node 'n0' (DynamicQuantizeMatMul): input 'A' holds an infinite value: it has no "
            "quantization range");
}

}  // namespace
}  // namespace footprint::testing
