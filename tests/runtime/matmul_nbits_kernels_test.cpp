// com.microsoft MatMulNBits against a hand-computed product and a plain-loop reference written
// here from onnxruntime's operator documentation (codes packed low bits first, blocks along K,
// W[n][k] = (code - zero point) x scale, default zero point 2^(bits - 1)): 2-, 4- and 8-bit
// codes, packed, float and absent zero points, g_idx, a bias, A of rank 1 to 3, a K that is not
// a multiple of the block, negative scales; the packed bytes the row declares against the state's;
// and bad operands refused in one line naming the node and the input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "footprint/core/float16.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

constexpr const char* kOp = "com.microsoft::MatMulNBits";

Tensor bytes_tensor(Ints dims, const std::vector<uint8_t>& v) {
  return Tensor::of(DType::uint8, std::move(dims), v);
}

// The quantized weights of one case, with the codes as numbers (the reference reads these, the
// kernel the packed bytes).
struct NBitsCase {
  int64_t k = 0, n = 0, bits = 4, block = 16;
  std::vector<std::vector<int>> codes;  // [n][k]
  std::vector<float> scales;            // [n * blocks]
  enum class Zero { none, packed, floats } zero = Zero::none;
  std::vector<int> zero_codes;     // [n * blocks], packed
  std::vector<float> zero_floats;  // [n * blocks], floats
  std::vector<int32_t> g_idx;      // [k] or empty
  std::vector<float> bias;         // [n] or empty

  int64_t blocks() const { return (k + block - 1) / block; }

  // Codes into bytes, `bits` at a time from each row's first bit, low bits first.
  static std::vector<uint8_t> pack(const std::vector<int>& codes, int64_t bits, size_t bytes) {
    std::vector<uint8_t> out(bytes, 0);
    for (size_t i = 0; i < codes.size(); ++i) {
      const size_t bit = i * static_cast<size_t>(bits);
      out[bit / 8] = static_cast<uint8_t>(out[bit / 8] | (codes[i] << (bit % 8)));
    }
    return out;
  }

  std::vector<std::optional<Tensor>> inputs(Tensor a) const {
    const int64_t blob = block * bits / 8;
    std::vector<uint8_t> b;
    for (int64_t r = 0; r < n; ++r) {
      const auto row = pack(codes[r], bits, static_cast<size_t>(blocks() * blob));
      b.insert(b.end(), row.begin(), row.end());
    }
    std::vector<std::optional<Tensor>> in{std::move(a), bytes_tensor({n, blocks(), blob}, b),
                                          floats({n, blocks()}, scales)};
    if (zero == Zero::packed) {
      const int64_t row_bytes = (blocks() * bits + 7) / 8;
      std::vector<uint8_t> z;
      for (int64_t r = 0; r < n; ++r) {
        const std::vector<int> row(zero_codes.begin() + r * blocks(),
                                   zero_codes.begin() + (r + 1) * blocks());
        const auto packed = pack(row, bits, static_cast<size_t>(row_bytes));
        z.insert(z.end(), packed.begin(), packed.end());
      }
      in.emplace_back(bytes_tensor({n, row_bytes}, z));
    } else if (zero == Zero::floats) {
      in.emplace_back(floats({n, blocks()}, zero_floats));
    } else if (!g_idx.empty() || !bias.empty()) {
      in.emplace_back(std::nullopt);
    }
    if (!g_idx.empty()) {
      in.emplace_back(Tensor::of(DType::int32, {k}, g_idx));
    } else if (!bias.empty()) {
      in.emplace_back(std::nullopt);
    }
    if (!bias.empty()) in.emplace_back(floats({n}, bias));
    return in;
  }

  std::vector<Wire> attrs() const {
    return {attr("K", k), attr("N", n), attr("bits", bits), attr("block_size", block)};
  }

  // W[n][k], in double.
  double weight(int64_t r, int64_t c) const {
    const int64_t blk = g_idx.empty() ? c / block : g_idx[c];
    const size_t at = static_cast<size_t>(r * blocks() + blk);
    double zp = std::pow(2.0, static_cast<double>(bits - 1));
    if (zero == Zero::packed) zp = zero_codes[at];
    if (zero == Zero::floats) zp = zero_floats[at];
    return (codes[r][c] - zp) * static_cast<double>(scales[at]);
  }

  // A [rows, K] x W^T (+ bias).
  std::vector<float> reference(const std::vector<float>& a) const {
    const auto rows = static_cast<int64_t>(a.size()) / k;
    std::vector<float> y;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t r = 0; r < n; ++r) {
        double acc = bias.empty() ? 0.0 : bias[r];
        for (int64_t c = 0; c < k; ++c) acc += a[i * k + c] * weight(r, c);
        y.push_back(static_cast<float>(acc));
      }
    }
    return y;
  }
};

NBitsCase random_case(int64_t k, int64_t n, int64_t bits, int64_t block, NBitsCase::Zero zero,
                      unsigned seed) {
  std::mt19937 gen(seed);
  NBitsCase c;
  c.k = k;
  c.n = n;
  c.bits = bits;
  c.block = block;
  c.zero = zero;
  const int top = (1 << bits) - 1;
  std::uniform_int_distribution<int> code(0, top);
  std::uniform_real_distribution<float> scale(0.01F, 0.2F);
  c.codes.assign(static_cast<size_t>(n), std::vector<int>(static_cast<size_t>(k)));
  for (auto& row : c.codes) {
    for (int& v : row) v = code(gen);
  }
  const auto count = static_cast<size_t>(n * c.blocks());
  for (size_t i = 0; i < count; ++i) {
    // Every third scale negative, as onnxruntime's symmetric quantizer makes them.
    c.scales.push_back(i % 3 == 2 ? -scale(gen) : scale(gen));
    c.zero_codes.push_back(code(gen));
    c.zero_floats.push_back(static_cast<float>(code(gen)) + 0.5F);
  }
  return c;
}

std::vector<float> values_of(const Tensor& t) {
  return t.floats();
}

// ---- values

TEST(MatMulNBitsKernels, HandComputedProduct) {
  // One block of 16 codes 9 (default zero point 8) at scale 0.5: W is a row of 0.5s, and a row
  // of A = 1, 2, ..., 16 sums to 136 x 0.5 = 68; the bias adds 1.5.
  NBitsCase c;
  c.k = 16;
  c.n = 1;
  c.codes = {std::vector<int>(16, 9)};
  c.scales = {0.5F};
  c.bias = {1.5F};
  std::vector<float> a(16);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i + 1);
  // The packed bytes are 0x99: both nibbles 9.
  EXPECT_EQ(NBitsCase::pack(c.codes[0], 4, 8), std::vector<uint8_t>(8, 0x99));
  PreparedRun k(kOp, c.inputs(floats({1, 16}, a)), c.attrs());
  k.run();
  EXPECT_EQ(values_of(k.out(0)), (std::vector<float>{69.5F}));
}

TEST(MatMulNBitsKernels, MatchesTheReferenceOverItsForms) {
  using Zero = NBitsCase::Zero;
  struct Form {
    int64_t k, n, bits, block;
    Zero zero;
    Ints a_dims;
    bool g_idx, bias;
  };
  const std::vector<Form> forms{
      {32, 5, 4, 16, Zero::packed, {3, 32}, false, false},
      {40, 7, 4, 16, Zero::none, {2, 3, 40}, false, true},  // K = 2.5 blocks
      {64, 3, 4, 32, Zero::floats, {64}, false, true},      // A of rank 1
      {48, 6, 2, 16, Zero::packed, {4, 48}, false, false},
      {33, 4, 8, 16, Zero::packed, {2, 33}, false, true},  // one code in the last block
      {32, 9, 4, 16, Zero::packed, {5, 32}, true, true},   // g_idx
      {128, 17, 4, 64, Zero::packed, {1, 3, 128}, false, false},
  };
  unsigned seed = 1;
  for (const Form& f : forms) {
    NBitsCase c = random_case(f.k, f.n, f.bits, f.block, f.zero, seed++);
    if (f.g_idx) {
      // Blocks in reverse order of k, as an act-order exporter might store them.
      for (int64_t i = 0; i < f.k; ++i)
        c.g_idx.push_back(static_cast<int32_t>((f.k - 1 - i) / f.block));
    }
    if (f.bias) c.bias = random_floats({f.n}, seed++).floats();
    const Tensor a = random_floats(f.a_dims, seed++);
    PreparedRun k(kOp, c.inputs(a), c.attrs());
    k.run();
    const std::string what = "K " + std::to_string(f.k) + " N " + std::to_string(f.n) + " bits " +
                             std::to_string(f.bits);
    Ints want_dims = f.a_dims;
    want_dims.back() = f.n;
    EXPECT_EQ(k.out(0).dims, want_dims) << what;
    expect_close(values_of(k.out(0)), c.reference(a.floats()), 1e-5F);
    // oneDNN's execute makes a few small bookkeeping blocks, freed before it returns; the kernel
    // itself allocates nothing.
    EXPECT_LE(k.allocations(), 16U) << what;
    // The state holds W as float32 [K, N], as the row declares.
    ASSERT_NE(k.state(), nullptr);
    EXPECT_EQ(k.state()->owned_bytes(), static_cast<uint64_t>(f.k * f.n) * 4) << what;
  }
}

TEST(MatMulNBitsKernels, ALargeProductPacksItsOwnCopyAndDropsTheFloats) {
  // M = N = 1100: oneDNN's sgemm would copy its operands, so MatMul's kernel runs it as a 1x1
  // convolution whose packed weights replace the float32 copy.
  NBitsCase c = random_case(32, 1100, 4, 16, NBitsCase::Zero::packed, 7);
  const Tensor a = random_floats({1100, 32}, 8);
  PreparedRun k(kOp, c.inputs(a), c.attrs());
  k.run();
  expect_close(values_of(k.out(0)), c.reference(a.floats()), 1e-5F);
  const graph::OpSchema* row = runtime::op_registry().find("com.microsoft", "MatMulNBits");
  ASSERT_NE(row, nullptr);
  std::vector<graph::ConcreteTensor> in;
  for (const auto& t : c.inputs(a)) in.push_back({t->dtype, t->dims});
  const uint64_t declared = row->packed(k.node(), in, {{DType::float32, {1100, 1100}}},
                                        std::vector<bool>(in.size(), true));
  ASSERT_NE(k.state(), nullptr);
  EXPECT_EQ(k.state()->owned_bytes(), declared);
  EXPECT_NE(declared, uint64_t{32 * 1100 * 4});  // the convolution's layout, not the floats
}

TEST(MatMulNBitsKernels, Float16RunsThroughFloat32Copies) {
  // A, the scales, float zero points and the bias in float16: the product is the float32 one of
  // their values, rounded once to float16.
  NBitsCase c = random_case(48, 5, 4, 16, NBitsCase::Zero::floats, 31);
  c.bias = random_floats({5}, 32).floats();
  const auto half = [](std::vector<float>& v) {
    std::vector<uint16_t> h;
    for (float& x : v) {
      h.push_back(half_from_float(x));
      x = float_from_half(h.back());  // the reference takes the values float16 holds
    }
    return h;
  };
  std::vector<float> a = random_floats({3, 48}, 33).floats();
  const auto a16 = half(a);
  const auto s16 = half(c.scales);
  const auto z16 = half(c.zero_floats);
  const auto b16 = half(c.bias);
  auto in = c.inputs(floats({3, 48}, a));
  in[0] = Tensor::of(DType::float16, {3, 48}, a16);
  in[2] = Tensor::of(DType::float16, {5, 3}, s16);
  in[3] = Tensor::of(DType::float16, {5, 3}, z16);
  in[5] = Tensor::of(DType::float16, {5}, b16);
  PreparedRun k(kOp, in, c.attrs());
  k.constants({1, 2, 3, 4, 5});
  k.run();
  ASSERT_EQ(k.out(0).dtype, DType::float16);
  std::vector<float> got;
  for (const uint16_t h : k.out(0).values<uint16_t>()) got.push_back(float_from_half(h));
  std::vector<float> want = c.reference(a);
  for (float& w : want) w = float_from_half(half_from_float(w));
  expect_close(got, want, 1e-3F);  // one float16 rounding apart at most
}

// ---- bad operands

std::string error_of(const std::vector<std::optional<Tensor>>& in, const std::vector<Wire>& attrs,
                     const std::vector<size_t>& constants = {1, 2, 3, 4}) {
  std::string what;
  try {
    PreparedRun k(kOp, in, attrs);
    k.constants(constants);
    what = k.run_error();
  } catch (const Error& e) {
    what = e.what();  // inference's, behind the model's name and the node's offset in it
  }
  const size_t at = what.find("node 'n0'");
  return at == std::string::npos ? what : what.substr(at);
}

TEST(MatMulNBitsKernels, BadOperandsAreRefusedNamingTheNodeAndTheInput) {
  const NBitsCase c = random_case(32, 3, 4, 16, NBitsCase::Zero::packed, 3);
  const Tensor a = random_floats({2, 32}, 4);
  const std::string node = "node 'n0' (MatMulNBits): ";
  auto in = c.inputs(a);
  EXPECT_EQ(error_of(c.inputs(random_floats({2, 31}, 4)), c.attrs()),
            node + "A (input 0) [2,31] does not end in K = 32");
  in[1] = bytes_tensor({3, 2, 7}, std::vector<uint8_t>(42, 0));  // a truncated blob
  EXPECT_EQ(error_of(in, c.attrs()),
            node +
                "B (input 1) [3,2,7] is not [N, ceil(K / block_size), block_size x bits / 8] = "
                "[3,2,8]");
  in = c.inputs(a);
  in[2] = floats({5}, {1, 1, 1, 1, 1});
  EXPECT_EQ(error_of(in, c.attrs()),
            node + "scales (input 2) [5] has 5 elements, not N x ceil(K / block_size) = 6");
  in = c.inputs(a);
  in[3] = bytes_tensor({3, 2}, std::vector<uint8_t>(6, 0x88));
  EXPECT_EQ(error_of(in, c.attrs()),
            node +
                "zero_points (input 3) [3,2] has 6 elements, not N x ceil(ceil(K / block_size) x "
                "bits / 8) (packed) = 3");
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    in = c.inputs(a);
    auto s = c.scales;
    s[4] = bad;
    in[2] = floats({3, 2}, s);
    EXPECT_EQ(error_of(in, c.attrs()), node + "scales (input 2) element 4 is " +
                                           (std::isnan(bad) ? "nan" : "inf") +
                                           ": a scale must be finite");
  }
  auto attrs = c.attrs();
  attrs[2] = attr("bits", int64_t{3});
  EXPECT_EQ(error_of(c.inputs(a), attrs), node + "attribute bits is 3, not 2, 4 or 8");
  attrs = c.attrs();
  attrs[3] = attr("block_size", int64_t{24});
  EXPECT_EQ(error_of(c.inputs(a), attrs),
            node + "attribute block_size is 24, not a power of two of at least 16");
  attrs = c.attrs();
  attrs[0] = attr("K", int64_t{0});
  EXPECT_EQ(error_of(c.inputs(a), attrs),
            node + "attributes K and N must be positive, are 0 and 3");
  // Weights computed while running cannot be dequantized once.
  EXPECT_EQ(error_of(c.inputs(a), c.attrs(), {2, 3}),
            node +
                "B (input 1) must be a constant: the weights are dequantized once, when "
                "preparing");
  NBitsCase g = c;
  g.g_idx.assign(32, 0);
  g.g_idx[17] = 2;
  EXPECT_EQ(error_of(g.inputs(a), g.attrs()),
            node + "g_idx (input 4) element 17 is 2, not a block in [0, 2)");
  in = c.inputs(a);
  in.emplace_back(std::nullopt);
  in.emplace_back(floats({2}, {1, 2}));
  EXPECT_EQ(error_of(in, c.attrs()), node + "bias (input 5) [2] has 2 elements, not N = 3");
  in = c.inputs(a);
  in[1] = Tensor::of(DType::int8, {3, 2, 8}, std::vector<int8_t>(48, 0));
  EXPECT_EQ(error_of(in, c.attrs()), node + "B (input 1) is int8, not uint8");
}

}  // namespace
}  // namespace footprint::testing
