// MatMulNBits and QGemm (com.microsoft) on thousands of random operands (seeded): attributes and
// operands that fit and that do not (bits, block sizes, K, B's blocks and blobs, the counts of
// scales and zero points, their types, g_idx entries, C's broadcast, scales that are NaN). Each
// case must either match the documented formula element by element (computed here by indexing,
// apart from the kernels) or be refused with one footprint::Error naming the node, never anything
// else, and exactly when the operands do not fit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "runtime/prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

// Runs the case; the error's text from the node's name on, or "" when it ran.
std::string outcome(const std::string& op, const std::vector<std::optional<Tensor>>& in,
                    const std::vector<Wire>& attrs, std::optional<PreparedRun>& kept,
                    const std::vector<size_t>& constants) {
  std::string what;
  try {
    kept.emplace(op, in, attrs, 13);
    kept->constants(constants);
    what = kept->run_error();
  } catch (const Error& e) {
    what = e.what();
  }
  return what;
}

bool names_the_node(const std::string& what, const std::string& op) {
  return what.find("node 'n0' (" + op + "): ") != std::string::npos &&
         what.find('\n') == std::string::npos;
}

// ---- MatMulNBits

TEST(QuantizedProductsFuzz, MatMulNBitsMatchesTheFormulaOrNamesTheNode) {
  std::mt19937 gen(20261206);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  int ran = 0, refused = 0;
  for (int iteration = 0; iteration < 1500; ++iteration) {
    const int64_t k = pick(1, 80), n = pick(1, 9);
    const int64_t bits = std::vector<int64_t>{2, 3, 4, 4, 4, 8}[static_cast<size_t>(pick(0, 5))];
    const int64_t block =
        std::vector<int64_t>{8, 16, 16, 32, 32, 24, 64}[static_cast<size_t>(pick(0, 6))];
    const bool attributes_fit =
        (bits == 2 || bits == 4 || bits == 8) && block >= 16 && (block & (block - 1)) == 0;
    // Sizes from the attributes as given (what a model would store), perturbed now and then.
    const int64_t blocks = (k + block - 1) / block;
    const int64_t blob = block * bits / 8;
    const int perturb = pick(0, 11);
    Ints a_dims;
    for (int r = pick(1, 3); r > 1; --r) a_dims.push_back(pick(1, 3));
    a_dims.push_back(perturb == 0 ? k + 1 : k);
    Ints b_dims{n, perturb == 1 ? blocks + 1 : blocks, perturb == 2 ? blob - 1 : blob};
    const int64_t scale_count = perturb == 3 ? n * blocks + 1 : n * blocks;
    const int zero_form = pick(0, 3);  // none, packed, float, int8 (not allowed)
    const int64_t row_bytes = (blocks * bits + 7) / 8;
    const int64_t zero_count = zero_form == 1   ? (perturb == 4 ? n * row_bytes + 1 : n * row_bytes)
                               : zero_form == 2 ? (perturb == 4 ? n * blocks - 1 : n * blocks)
                                                : n * blocks;
    const bool has_g_idx = pick(0, 4) == 0;
    const bool bad_g_idx = has_g_idx && perturb == 5;
    const bool has_bias = pick(0, 1) == 1;
    const bool bad_bias = has_bias && perturb == 6;
    const bool nan_scale = perturb == 7;
    // Perturbations 8 to 11 change nothing; 4 only where there are zero points.
    const bool valid = attributes_fit && perturb > 3 &&
                       !(perturb == 4 && (zero_form == 1 || zero_form == 2)) && !bad_g_idx &&
                       !bad_bias && !nan_scale && zero_form != 3;
    if (b_dims[1] <= 0 || b_dims[2] <= 0 || scale_count <= 0 || zero_count <= 0) continue;

    std::vector<uint8_t> b(static_cast<size_t>(b_dims[0] * b_dims[1] * b_dims[2]));
    for (uint8_t& v : b) v = static_cast<uint8_t>(pick(0, 255));
    std::vector<float> scales(static_cast<size_t>(scale_count));
    for (float& v : scales) v = static_cast<float>(pick(-100, 100)) / 512.0F;
    if (nan_scale) scales[static_cast<size_t>(pick(0, static_cast<int>(scale_count) - 1))] = NAN;
    std::vector<uint8_t> zp_bytes(static_cast<size_t>(zero_count));
    for (uint8_t& v : zp_bytes) v = static_cast<uint8_t>(pick(0, 255));
    std::vector<float> zp_floats(static_cast<size_t>(zero_count));
    for (float& v : zp_floats) v = static_cast<float>(pick(0, 15)) + 0.25F;
    std::vector<int32_t> g_idx(static_cast<size_t>(k));
    for (int32_t& v : g_idx) v = pick(0, static_cast<int>(std::max<int64_t>(blocks, 1)) - 1);
    if (bad_g_idx) g_idx[static_cast<size_t>(pick(0, static_cast<int>(k) - 1))] = pick(-2, -1);
    std::vector<float> bias(static_cast<size_t>(bad_bias ? n + 1 : n));
    for (float& v : bias) v = static_cast<float>(pick(-8, 8)) / 4.0F;
    const Tensor a = random_floats(a_dims, static_cast<unsigned>(iteration));

    std::vector<std::optional<Tensor>> in{a, Tensor::of(DType::uint8, b_dims, b),
                                          floats({scale_count}, scales)};
    if (zero_form == 1) in.emplace_back(Tensor::of(DType::uint8, {zero_count}, zp_bytes));
    if (zero_form == 2) in.emplace_back(floats({zero_count}, zp_floats));
    if (zero_form == 3) {
      in.emplace_back(Tensor::of(DType::int8, {zero_count},
                                 std::vector<int8_t>(static_cast<size_t>(zero_count), 0)));
    }
    if (zero_form == 0 && (has_g_idx || has_bias)) in.emplace_back(std::nullopt);
    if (has_g_idx) in.emplace_back(Tensor::of(DType::int32, {k}, g_idx));
    if (!has_g_idx && has_bias) in.emplace_back(std::nullopt);
    if (has_bias) in.emplace_back(floats({static_cast<int64_t>(bias.size())}, bias));
    const std::vector<Wire> attrs{attr("K", k), attr("N", n), attr("bits", bits),
                                  attr("block_size", block)};
    std::optional<PreparedRun> run;
    const std::string what = outcome("com.microsoft::MatMulNBits", in, attrs, run, {1, 2, 3, 4});
    const std::string label =
        "case " + std::to_string(iteration) + " (K " + std::to_string(k) + ", N " +
        std::to_string(n) + ", bits " + std::to_string(bits) + ", block " + std::to_string(block) +
        ", perturb " + std::to_string(perturb) + ", zero form " + std::to_string(zero_form) + ")";
    if (!what.empty()) {
      ++refused;
      EXPECT_TRUE(names_the_node(what, "MatMulNBits")) << label << ": " << what;
      EXPECT_FALSE(valid) << label << " was refused: " << what;
      continue;
    }
    ++ran;
    ASSERT_TRUE(valid) << label << " ran";
    // The formula, by indexing: W[n][k] = (code - zero point) x scale, block k / block_size or
    // g_idx[k].
    const std::vector<float> av = a.floats();
    const int64_t rows = static_cast<int64_t>(av.size()) / k;
    std::vector<float> want;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = has_bias ? bias[static_cast<size_t>(j)] : 0.0;
        for (int64_t c = 0; c < k; ++c) {
          const int64_t blk = has_g_idx ? g_idx[static_cast<size_t>(c)] : c / block;
          const int64_t bit = c * bits;
          const int code = (b[static_cast<size_t>(j * blocks * blob + bit / 8)] >> (bit % 8)) &
                           ((1 << bits) - 1);
          double zp = std::pow(2.0, static_cast<double>(bits - 1));
          if (zero_form == 1) {
            const int64_t zbit = blk * bits;
            zp = (zp_bytes[static_cast<size_t>(j * row_bytes + zbit / 8)] >> (zbit % 8)) &
                 ((1 << bits) - 1);
          } else if (zero_form == 2) {
            zp = zp_floats[static_cast<size_t>(j * blocks + blk)];
          }
          acc += av[static_cast<size_t>(r * k + c)] * (code - zp) *
                 scales[static_cast<size_t>(j * blocks + blk)];
        }
        want.push_back(static_cast<float>(acc));
      }
    }
    expect_close(run->out(0).floats(), want, 1e-4F);
    if (::testing::Test::HasFailure()) break;
  }
  // Both outcomes occur often enough to mean something.
  EXPECT_GT(ran, 200);
  EXPECT_GT(refused, 200);
}

// ---- QGemm

TEST(QuantizedProductsFuzz, QGemmMatchesTheFormulaOrNamesTheNode) {
  std::mt19937 gen(611);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  int ran = 0, refused = 0;
  for (int iteration = 0; iteration < 800; ++iteration) {
    const int64_t m = pick(1, 6), k = pick(1, 9), n = pick(1, 7);
    const bool ta = pick(0, 1) == 1, tb = pick(0, 1) == 1;
    const int perturb = pick(0, 7);
    bool valid = true;
    const Ints a_dims = ta ? Ints{k, m} : Ints{m, k};
    Ints b_dims = tb ? Ints{n, k} : Ints{k, n};
    if (perturb == 0) {
      b_dims[tb ? 1 : 0] += 1;  // the inner extents differ
      valid = false;
    }
    // C: none, a scalar, [N], [M, 1], [M, N], or one that does not broadcast.
    const int c_form = pick(0, 5);
    const Ints c_dims = c_form == 1   ? Ints{}
                        : c_form == 2 ? Ints{n}
                        : c_form == 3 ? Ints{m, 1}
                        : c_form == 4 ? Ints{m, n}
                                      : Ints{m + 1, n};
    if (c_form == 5) valid = false;
    const bool per_column = pick(0, 1) == 1;
    const int64_t sb_count = per_column ? (perturb == 1 ? n + 1 : n) : 1;
    if (per_column && perturb == 1) valid = false;
    const bool quantized = pick(0, 1) == 1;
    const bool nan_scale = perturb == 2;  // y_scale's: only where there is one
    if (nan_scale && quantized) valid = false;
    const bool int8_zero_of_uint8 = perturb == 3;
    if (int8_zero_of_uint8) valid = false;

    const auto bytes = [&](size_t count, int lo, int hi) {
      std::vector<uint8_t> v(count);
      for (uint8_t& x : v) x = static_cast<uint8_t>(pick(lo, hi));
      return v;
    };
    const auto a = bytes(static_cast<size_t>(m * k), 0, 255);
    std::vector<int8_t> b(static_cast<size_t>(b_dims[0] * b_dims[1]));
    for (int8_t& x : b) x = static_cast<int8_t>(pick(-128, 127));
    const float sa = static_cast<float>(pick(1, 50)) / 1000.0F;
    const uint8_t za = static_cast<uint8_t>(pick(0, 255));
    std::vector<float> sb(static_cast<size_t>(sb_count));
    for (float& x : sb) x = static_cast<float>(pick(1, 50)) / 1000.0F;
    std::vector<int8_t> zb(static_cast<size_t>(sb_count));
    for (int8_t& x : zb) x = static_cast<int8_t>(pick(-5, 5));
    size_t c_count = 1;
    for (int64_t d : c_dims) c_count *= static_cast<size_t>(d);
    std::vector<int32_t> c(c_count);
    for (int32_t& x : c) x = pick(-2000, 2000);
    const float sy = nan_scale ? NAN : static_cast<float>(pick(1, 100)) / 100.0F;
    const uint8_t zy = static_cast<uint8_t>(pick(0, 255));

    std::vector<std::optional<Tensor>> in{
        Tensor::of(DType::uint8, a_dims, a),
        floats({}, {sa}),
        int8_zero_of_uint8 ? Tensor::of(DType::int8, {}, std::vector<int8_t>{0})
                           : Tensor::of(DType::uint8, {}, std::vector<uint8_t>{za}),
        Tensor::of(DType::int8, b_dims, b),
        per_column ? floats({sb_count}, sb) : floats({}, sb),
        per_column ? Tensor::of(DType::int8, {sb_count}, zb) : Tensor::of(DType::int8, {}, zb)};
    if (c_form > 0) {
      in.emplace_back(Tensor::of(DType::int32, c_dims, c));
    } else if (quantized) {
      in.emplace_back(std::nullopt);
    }
    if (quantized) {
      in.emplace_back(floats({}, {sy}));
      in.emplace_back(Tensor::of(DType::uint8, {}, std::vector<uint8_t>{zy}));
    }
    const std::vector<Wire> attrs{attr("transA", int64_t{ta}), attr("transB", int64_t{tb})};
    std::optional<PreparedRun> run;
    const bool constant_b = pick(0, 1) == 1;
    std::vector<size_t> constants{1, 2, 4, 5, 6, 7, 8};
    if (constant_b) constants.push_back(3);
    const std::string what = outcome("com.microsoft::QGemm", in, attrs, run, constants);
    const std::string label = "case " + std::to_string(iteration) + " (perturb " +
                              std::to_string(perturb) + ", C form " + std::to_string(c_form) +
                              (quantized ? ", quantized" : ", float") + ")";
    if (!what.empty()) {
      ++refused;
      EXPECT_TRUE(names_the_node(what, "QGemm")) << label << ": " << what;
      EXPECT_FALSE(valid) << label << " was refused: " << what;
      continue;
    }
    ++ran;
    ASSERT_TRUE(valid) << label << " ran";
    const int64_t c_rows = c_dims.size() == 2 ? c_dims[0] : 1;
    const int64_t c_cols = c_dims.empty() ? 1 : c_dims.back();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          const int64_t av = a[static_cast<size_t>(ta ? p * m + i : i * k + p)];
          const int64_t bv = b[static_cast<size_t>(tb ? j * k + p : p * n + j)];
          acc += (av - za) * (bv - zb[per_column ? static_cast<size_t>(j) : 0]);
        }
        if (c_form > 0) {
          acc += c[static_cast<size_t>((c_rows == 1 ? 0 : i * c_cols) + (c_cols == 1 ? 0 : j))];
        }
        const float scale = sa * sb[per_column ? static_cast<size_t>(j) : 0];
        const size_t at = static_cast<size_t>(i * n + j);
        if (quantized) {
          const float v = std::nearbyint(static_cast<float>(acc) * (scale / sy)) + zy;
          const auto want = static_cast<uint8_t>(std::min(255.0F, std::max(0.0F, v)));
          EXPECT_EQ(run->out(0).values<uint8_t>()[at], want) << label << " at " << at;
        } else {
          const float want = static_cast<float>(acc) * scale;
          EXPECT_NEAR(run->out(0).floats()[at], want, 1e-6 * (1 + std::fabs(want)))
              << label << " at " << at;
        }
      }
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(ran, 150);
  EXPECT_GT(refused, 150);
}

}  // namespace
}  // namespace footprint::testing
