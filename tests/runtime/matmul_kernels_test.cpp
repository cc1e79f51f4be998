// Gemm and MatMul against naive loops on small random tensors: every transpose, alpha and beta,
// C of each broadcastable shape (the bias path and the broadcast-then-sum path), numpy batch
// broadcasting and 1-D operands.
#include <gtest/gtest.h>

#include "runtime/prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

// Y = alpha * A' B' + beta * C, with C broadcast from `c_dims` (empty: no C).
std::vector<float> ref_gemm(const Tensor& a, const Tensor& b, const std::optional<Tensor>& c,
                            bool ta, bool tb, float alpha, float beta) {
  const int64_t m = a.dims[ta ? 1 : 0], k = a.dims[ta ? 0 : 1], n = b.dims[tb ? 0 : 1];
  const auto av = a.floats(), bv = b.floats();
  std::vector<float> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        acc += av[static_cast<size_t>(ta ? p * m + i : i * k + p)] *
               bv[static_cast<size_t>(tb ? j * k + p : p * n + j)];
      }
      double cv = 0;
      if (c) {
        const int64_t rows = c->dims.size() == 2 ? c->dims[0] : 1;
        const int64_t cols = c->dims.empty() ? 1 : c->dims.back();
        cv = c->floats()[static_cast<size_t>((rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j))];
      }
      y[static_cast<size_t>(i * n + j)] = static_cast<float>(alpha * acc + beta * cv);
    }
  }
  return y;
}

TEST(GemmKernel, EveryTransposeAlphaBetaAndCShape) {
  const int64_t m = 5, k = 7, n = 6;
  const std::vector<Ints> c_shapes{{}, {n}, {1, n}, {m, n}, {m, 1}, {1, 1}, {1}};
  unsigned seed = 1;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (const auto& [alpha, beta] :
           {std::pair{1.0f, 1.0f}, {0.5f, 1.0f}, {1.0f, 0.25f}, {-2.0f, 0.0f}}) {
        for (size_t ci = 0; ci <= c_shapes.size(); ++ci) {
          SCOPED_TRACE(::testing::Message() << "ta " << ta << " tb " << tb << " alpha " << alpha
                                            << " beta " << beta << " c " << ci);
          const Tensor a = random_floats(ta ? Ints{k, m} : Ints{m, k}, seed++);
          const Tensor b = random_floats(tb ? Ints{n, k} : Ints{k, n}, seed++);
          std::optional<Tensor> c;
          if (ci < c_shapes.size()) c = random_floats(c_shapes[ci], seed++);
          std::vector<std::optional<Tensor>> inputs{a, b};
          if (c) inputs.push_back(c);
          PreparedRun g("Gemm", inputs,
                        {attr("transA", int64_t{ta}), attr("transB", int64_t{tb}),
                         attr_float("alpha", alpha), attr_float("beta", beta)});
          g.run();
          expect_close(g.out(0).floats(), ref_gemm(a, b, c, ta, tb, alpha, beta));
        }
      }
    }
  }
}

TEST(GemmKernel, FullyConnectedLayerReadsTheWeightInPlace) {
  // [1, 2048] x [1000, 2048]^T + [1000]: the bias path, no copy of the weight anywhere.
  const Tensor a = random_floats({1, 2048}, 11);
  const Tensor w = random_floats({1000, 2048}, 12);
  const Tensor b = random_floats({1000}, 13);
  PreparedRun g("Gemm", {a, w, b}, {attr("transB", int64_t{1})});
  g.run();
  expect_close(g.out(0).floats(), ref_gemm(a, w, b, false, true, 1, 1), 1e-3f);
  // The scratch is oneDNN's per-thread blocks, far below the 8 MB weight.
  EXPECT_LT(g.workspace_bytes(), w.bytes.size() / 4);
  EXPECT_LE(g.allocations(), 16u);
}

TEST(GemmKernel, OtherDtypesFailClearly) {
  PreparedRun g("Gemm", {Tensor::of<double>(DType::float64, {1, 1}, {1.0}),
                         Tensor::of<double>(DType::float64, {1, 1}, {2.0})});
  EXPECT_NE(g.run_error().find("dtype double is not supported"), std::string::npos);
}

// numpy matmul: 1-D operands promoted, batch dims broadcast.
std::vector<float> ref_matmul(const Tensor& a, const Tensor& b) {
  Ints ad = a.dims, bd = b.dims;
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const size_t rank = std::max(ad.size(), bd.size());
  ad.insert(ad.begin(), rank - ad.size(), 1);
  bd.insert(bd.begin(), rank - bd.size(), 1);
  const int64_t m = ad[rank - 2], k = ad[rank - 1], n = bd[rank - 1];
  Ints batch;
  for (size_t i = 0; i + 2 < rank; ++i) batch.push_back(std::max(ad[i], bd[i]));
  int64_t batches = 1;
  for (int64_t e : batch) batches *= e;
  const auto av = a.floats(), bv = b.floats();
  std::vector<float> y;
  for (int64_t bi = 0; bi < batches; ++bi) {
    // The batch index's offsets into A and B, broadcasting size-1 dims.
    int64_t rest = bi, a_off = 0, b_off = 0, a_stride = m * k, b_stride = k * n;
    for (size_t i = batch.size(); i-- > 0;) {
      const int64_t idx = rest % batch[i];
      rest /= batch[i];
      a_off += (ad[i] == 1 ? 0 : idx) * a_stride;
      b_off += (bd[i] == 1 ? 0 : idx) * b_stride;
      a_stride *= ad[i];
      b_stride *= bd[i];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += av[static_cast<size_t>(a_off + i * k + p)] *
                 bv[static_cast<size_t>(b_off + p * n + j)];
        }
        y.push_back(static_cast<float>(acc));
      }
    }
  }
  return y;
}

TEST(MatMulKernel, BroadcastsBatchesAndPromotesVectors) {
  const std::vector<std::pair<Ints, Ints>> cases{
      {{3, 4}, {4, 5}},
      {{2, 3, 4}, {2, 4, 5}},
      {{2, 1, 3, 4}, {1, 5, 4, 6}},
      {{3, 4}, {2, 2, 4, 5}},
      {{2, 3, 3, 4}, {4, 2}},
      {{4}, {4}},
      {{4}, {2, 4, 3}},
      {{2, 3, 4}, {4}},
      {{1, 1, 7}, {3, 7, 1}},
      // One B for every batch of A, run as a single product of the batches' rows: sequence-first
      // attention's [S, 1, K] x [K, N], and a B with leading 1s.
      {{5, 1, 6}, {6, 7}},
      {{2, 3, 4}, {1, 4, 5}},
  };
  unsigned seed = 50;
  for (const auto& [ad, bd] : cases) {
    const Tensor a = random_floats(ad, seed++);
    const Tensor b = random_floats(bd, seed++);
    PreparedRun mm("MatMul", {a, b});
    mm.run();
    expect_close(mm.out(0).floats(), ref_matmul(a, b));
  }
}

TEST(MatMulKernel, AnEmptyInnerDimGivesZeros) {
  PreparedRun mm("MatMul", {floats({2, 0}, {}), floats({0, 3}, {})});
  mm.run();
  EXPECT_EQ(mm.out(0).floats(), std::vector<float>(6, 0.0f));
}

}  // namespace
}  // namespace footprint::testing
