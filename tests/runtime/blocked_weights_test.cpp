// Convolutions on oneDNN's blocked layouts inside a session: their weights are packed once when
// the model is prepared, the original is then released rather than kept beside its packed copy
// (a computed weight is freed, a mapped initializer's pages go back to the OS), and the result
// is the convolution's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "footprint/analysis/model_program.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "test_support.hpp"

namespace footprint::graph {
namespace {

using Ints = std::vector<int64_t>;

// Weights ConstantOfShape(dims, 0.01), their shape an initializer named `name`.
Var computed_weights(GraphBuilder& b, const std::vector<int64_t>& dims, const std::string& name) {
  auto shape = HostValue::make(DType::int64, {static_cast<int64_t>(dims.size())});
  std::copy(dims.begin(), dims.end(), shape->span<int64_t>().begin());
  auto fill = HostValue::make(DType::float32, {1});
  fill->span<float>()[0] = 0.01F;
  return b.constant_of_shape(b.constant(shape, name), fill);
}

// x [1, 32, 8, 8] -> Conv 3x3, pad 1, weights ConstantOfShape([32, 32, 3, 3], 0.01) -> y.
BuiltGraph conv_with_computed_weights(GraphBuilder& b) {
  Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(32), Dim::known(8), Dim::known(8)});
  Var w = computed_weights(b, {32, 32, 3, 3}, "w_shape");
  b.output(b.conv(x, w, Var(), {1, 1}, {1, 1, 1, 1}), "y");
  return b.to_graph();
}

TEST(BlockedWeights, ComputedWeightsArePackedOnceAndReleased) {
  if (!__builtin_cpu_supports("avx2")) {
    GTEST_SKIP() << "oneDNN's direct blocked convolutions need AVX2; this CPU runs im2col";
  }
  // Not propagated: the weights stay a node that the session computes when preparing.
  BuilderOptions no_propagation;
  no_propagation.propagate = false;
  GraphBuilder b(runtime::op_registry(), no_propagation);
  const BuiltGraph built = conv_with_computed_weights(b);
  runtime::SessionOptions options;
  options.threads = 1;
  runtime::Session session(*built.model, options);
  std::vector<runtime::Tensor> inputs;
  inputs.emplace_back("x", DType::float32, std::vector<int64_t>{1, 32, 8, 8});
  for (float& e : inputs[0].ref().span<float>()) e = 1.0F;
  const auto out = session.run(inputs);

  const uint64_t weight_bytes = uint64_t{32} * 32 * 3 * 3 * sizeof(float);
  // The computed weights, and the copy of their shape (int64[4]) when the model stores it
  // misaligned: only ConstantOfShape reads it.
  EXPECT_GE(session.prepared().released_constant_bytes, weight_bytes);
  EXPECT_LE(session.prepared().released_constant_bytes, weight_bytes + 4 * sizeof(int64_t));
  EXPECT_EQ(session.prepared().constant_bytes, 0u) << "the computed weights are not kept";
  EXPECT_GE(session.prepared().packed_weights_bytes, weight_bytes);
  EXPECT_EQ(session.prepared().planned_arena_bytes, session.last_run().arena_bytes);

  // Every output sums 0.01 over the window's inputs of 32 channels: 9 taps inside, 6 on an
  // edge, 4 in a corner.
  ASSERT_EQ(out.size(), 1u);
  const auto y = out[0].ref().span<const float>();
  ASSERT_EQ(y.size(), 32u * 8 * 8);
  for (int64_t c = 0; c < 32; ++c) {
    for (int64_t h = 0; h < 8; ++h) {
      for (int64_t w = 0; w < 8; ++w) {
        const int rows = (h == 0 || h == 7) ? 2 : 3;
        const int cols = (w == 0 || w == 7) ? 2 : 3;
        EXPECT_NEAR(y[static_cast<size_t>((c * 8 + h) * 8 + w)], 0.01F * 32 * rows * cols, 1e-4)
            << "at channel " << c << ", " << h << ", " << w;
      }
    }
  }
}

// Two convolutions whose weights the session computes (ConstantOfShape) and packs, the larger
// first: the second weight is computed only after the first convolution packed and released its
// own (analysis::PrepareOrder), so preparing never holds both computed weights (before, every
// constant was computed first: both weights and the first packed copy at once); analysis
// predicts the same peak.
TEST(BlockedWeights, EachComputedWeightIsPackedBeforeTheNextIsComputed) {
  if (!__builtin_cpu_supports("avx2")) {
    GTEST_SKIP() << "oneDNN's direct blocked convolutions need AVX2; this CPU runs im2col";
  }
  BuilderOptions no_propagation;
  no_propagation.propagate = false;
  GraphBuilder b(runtime::op_registry(), no_propagation);
  Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(64), Dim::known(8), Dim::known(8)});
  Var y = b.conv(x, computed_weights(b, {64, 64, 3, 3}, "w1_shape"), Var(), {1, 1}, {1, 1, 1, 1});
  y = b.conv(y, computed_weights(b, {32, 64, 3, 3}, "w2_shape"), Var(), {1, 1}, {1, 1, 1, 1});
  b.output(y, "y");
  BuiltGraph built = b.to_graph();
  const std::shared_ptr<const graph::Model> model = std::move(built.model);
  runtime::SessionOptions options;
  options.threads = 1;
  runtime::Session session(*model, options);
  std::vector<runtime::Tensor> inputs;
  inputs.emplace_back("x", DType::float32, std::vector<int64_t>{1, 64, 8, 8});
  for (float& e : inputs[0].ref().span<float>()) e = 1.0F;
  (void)session.run(inputs);
  const runtime::PreparedStats& p = session.prepared();
  const uint64_t w1 = uint64_t{64} * 64 * 3 * 3 * sizeof(float);
  const uint64_t w2 = w1 / 2;
  ASSERT_EQ(p.packed_weights_bytes, w1 + w2) << "packed without padding";
  // w1 and its packed copy; then w1's copy, w2 and its packed copy; and the copies of the two
  // shapes (int64[4]) where the model stores them misaligned, until ConstantOfShape read them.
  const uint64_t shapes = uint64_t{2} * 4 * sizeof(int64_t);
  EXPECT_GE(p.prepare_buffers_peak_bytes, std::max(2 * w1, w1 + 2 * w2));
  EXPECT_LE(p.prepare_buffers_peak_bytes, std::max(2 * w1, w1 + 2 * w2) + shapes);
  EXPECT_LT(p.prepare_buffers_peak_bytes, w1 + w2 + w1) << "both weights held at once";
  EXPECT_EQ(p.prepare_buffers_kept_bytes, p.packed_weights_bytes);
  const analysis::ModelProgram predicted =
      analysis::build_model_program(model, runtime::op_registry(), {});
  EXPECT_EQ(predicted.prepare.peak_bytes, p.prepare_buffers_peak_bytes);
  EXPECT_EQ(predicted.prepare.kept_bytes, p.prepare_buffers_kept_bytes);
}

TEST(BlockedWeights, MappedWeightsGiveTheirPagesBack) {
  if (!__builtin_cpu_supports("avx2")) {
    GTEST_SKIP() << "oneDNN's direct blocked convolutions need AVX2; this CPU runs im2col";
  }
  // Propagated: the weights are an initializer of the written model, read from its mapping.
  GraphBuilder b(runtime::op_registry());
  (void)conv_with_computed_weights(b);
  footprint::testing::TempDir dir;
  b.write_onnx(dir.path() / "conv.onnx");
  const graph::Model model = graph::load_model(dir.path() / "conv.onnx");
  runtime::Session session(model);
  std::vector<runtime::Tensor> inputs;
  inputs.emplace_back("x", DType::float32, std::vector<int64_t>{1, 32, 8, 8});
  for (float& e : inputs[0].ref().span<float>()) e = 1.0F;
  const auto out = session.run(inputs);
  // 36 KiB of weights: at least 8 whole 4 KiB pages go back, or the copy made for alignment.
  const runtime::PreparedStats& p = session.prepared();
  EXPECT_GE(p.released_mapped_bytes + p.released_constant_bytes, uint64_t{8} * 4096);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].ref().span<const float>()[9], 0.01F * 32 * 9, 1e-4) << "an inner output";
}

// What oneDNN 2.6.3's no-copy sgemm takes (and frees) on every call, a thread: 16,640 bytes with
// AVX2, 73,984 with AVX-512 (bench/sgemm_blocks.sh); the larger, wherever the test runs.
constexpr uint64_t kNoCopyCallBlock = 73984;

// Runs the one-input graph of `b` twice on ones of extents `x` with one thread: the second run
// must use the planned arena and allocate no more than its output, a few hundred bytes of
// oneDNN's bookkeeping and the no-copy gemm's block. Returns its outputs.
std::vector<runtime::Tensor> run_inside_the_plan(GraphBuilder& b, const Ints& x,
                                                 const std::string& what) {
  const BuiltGraph built = b.to_graph();
  runtime::SessionOptions options;
  options.threads = 1;
  runtime::Session session(*built.model, options);
  std::vector<runtime::Tensor> inputs;
  inputs.emplace_back("x", DType::float32, x);
  for (float& e : inputs[0].ref().span<float>()) e = 1.0F;
  (void)session.run(inputs);
  auto out = session.run(inputs);
  const runtime::PreparedStats& p = session.prepared();
  EXPECT_EQ(session.last_run().arena_bytes, p.planned_arena_bytes) << what;
  EXPECT_LE(session.last_run().peak_heap_bytes, p.outputs_bytes + 4096 + kNoCopyCallBlock)
      << what << " allocated " << session.last_run().peak_heap_bytes - p.outputs_bytes
      << " bytes beyond its output";
  return out;
}

// A 1x1 convolution is a gemm; oneDNN's sgemm packs large operands (and no-copy ones with more
// than 2048 input channels) into memory it allocates on every call, outside any plan. Those
// convolutions run blocked instead, so a later run allocates its output and a few hundred bytes
// of oneDNN's bookkeeping, nothing more.
TEST(BlockedWeights, A1x1ConvolutionWhoseGemmWouldAllocateRunsInsideThePlan) {
  if (!heap::available()) GTEST_SKIP() << "the counting allocator is not linked into this build";
  struct Case {
    int64_t in, out, side;
  };
  // ResNet-50's 128 -> 512 at 28x28 (620 KB per run with AVX2's copy path); 2304 -> 64 at 8x8
  // (the no-copy path's stack buffer overflows).
  for (const Case c : {Case{128, 512, 28}, Case{2304, 64, 8}}) {
    GraphBuilder b(runtime::op_registry());
    Var x = b.input("x", DType::float32,
                    {Dim::known(1), Dim::known(c.in), Dim::known(c.side), Dim::known(c.side)});
    auto w = HostValue::make(DType::float32, {c.out, c.in, 1, 1});
    for (size_t i = 0; i < w->span<float>().size(); ++i) {
      w->span<float>()[i] = static_cast<float>(i % 5) * 0.125F - 0.25F;
    }
    b.output(b.conv(x, b.constant(w, "w"), Var(), {1, 1}, {0, 0, 0, 0}), "y");
    const auto out =
        run_inside_the_plan(b, {1, c.in, c.side, c.side},
                            std::to_string(c.in) + " -> " + std::to_string(c.out) + " at " +
                                std::to_string(c.side) + "x" + std::to_string(c.side));
    // Output channel o sums the weights of row o: every input is 1.
    ASSERT_EQ(out.size(), 1u);
    const auto y = out[0].ref().span<const float>();
    for (int64_t o : {int64_t{0}, c.out / 2, c.out - 1}) {
      double want = 0;
      for (int64_t i = 0; i < c.in; ++i) {
        want += static_cast<double>((o * c.in + i) % 5) * 0.125 - 0.25;
      }
      EXPECT_NEAR(y[static_cast<size_t>(o * c.side * c.side + c.side + 1)], want, 1e-3) << o;
    }
  }
}

// A matrix product whose gemm oneDNN's sgemm would run on copies of its operands, in memory of
// its own (large M and N), runs as a 1x1 convolution over channels-last rows instead: a later run
// allocates its output and oneDNN's few hundred bytes, and the product is the same.
TEST(BlockedWeights, AMatrixProductWhoseGemmWouldAllocateRunsInsideThePlan) {
  if (!heap::available()) GTEST_SKIP() << "the counting allocator is not linked into this build";
  struct Case {
    Ints a;
    int64_t k, n;
    bool gemm;  // Gemm with transB and a bias, else MatMul
  };
  // A ConvNeXt's MLP (880 KB each run with AVX2's copy path), the same batched, a Gemm as
  // exported fully connected layers are.
  for (const Case& c : {Case{{3136, 96}, 96, 384, false}, Case{{2, 1568, 96}, 96, 384, false},
                        Case{{1024, 256}, 256, 512, true}}) {
    GraphBuilder b(runtime::op_registry());
    std::vector<Dim> a_dims;
    for (int64_t d : c.a) a_dims.push_back(Dim::known(d));
    Var x = b.input("x", DType::float32, a_dims);
    // B[k][n] (MatMul) or B[n][k] (Gemm, transB): element (k, n) is (k * 7 + n) % 5 / 8 - 0.25.
    auto w = HostValue::make(DType::float32, c.gemm ? Ints{c.n, c.k} : Ints{c.k, c.n});
    auto weight = [](int64_t k, int64_t n) {
      return static_cast<float>((k * 7 + n) % 5) * 0.125F - 0.25F;
    };
    for (int64_t k = 0; k < c.k; ++k) {
      for (int64_t n = 0; n < c.n; ++n) {
        w->span<float>()[static_cast<size_t>(c.gemm ? n * c.k + k : k * c.n + n)] = weight(k, n);
      }
    }
    auto bias = HostValue::make(DType::float32, {c.n});
    for (int64_t n = 0; n < c.n; ++n) bias->span<float>()[static_cast<size_t>(n)] = 0.5F;
    const Var y = c.gemm ? b.gemm(x, b.constant(w, "w"), b.constant(bias, "bias"), true)
                         : b.matmul(x, b.constant(w, "w"));
    b.output(y, "y");
    const auto out =
        run_inside_the_plan(b, c.a,
                            "[" + std::to_string(c.a.front()) + "..., " + std::to_string(c.k) +
                                "] x [" + std::to_string(c.k) + ", " + std::to_string(c.n) + "]");
    // Every row is the sum of B's column (plus the bias): A is all ones.
    ASSERT_EQ(out.size(), 1u);
    const auto ys = out[0].ref().span<const float>();
    const size_t rows = ys.size() / static_cast<size_t>(c.n);
    for (const size_t row : {size_t{0}, rows / 2, rows - 1}) {
      for (const int64_t n : {int64_t{0}, c.n / 3, c.n - 1}) {
        double want = c.gemm ? 0.5 : 0.0;
        for (int64_t k = 0; k < c.k; ++k) want += weight(k, n);
        EXPECT_NEAR(ys[row * static_cast<size_t>(c.n) + static_cast<size_t>(n)], want, 1e-3)
            << "row " << row << ", column " << n;
      }
    }
  }
}

// An initializer whose bytes are not aligned for its elements (PyTorch's exporter writes most of
// them so) is copied when preparing; the mapped original's pages then go back to the OS at once,
// so the process never holds the weight twice.
TEST(MappedWeights, ACopyMadeForAlignmentGivesTheMappedPagesBack) {
  constexpr int64_t kN = 128;  // a 64 KiB weight: 14 or more whole pages
  // The weight's name moves its bytes within the file; one of four lengths misaligns them.
  for (std::string name = "w"; name.size() <= 4; name += "w") {
    GraphBuilder b(runtime::op_registry());
    Var x = b.input("x", DType::float32, {Dim::known(1), Dim::known(kN)});
    auto w = HostValue::make(DType::float32, {kN, kN});
    for (size_t i = 0; i < static_cast<size_t>(kN * kN); ++i) {
      w->span<float>()[i] = static_cast<float>(i % 7) * 0.25F;
    }
    b.output(b.matmul(x, b.constant(w, name)), "y");
    (void)b.to_graph();
    footprint::testing::TempDir dir;
    b.write_onnx(dir.path() / "mm.onnx");
    const graph::Model model = graph::load_model(dir.path() / "mm.onnx");
    runtime::Session session(model);
    std::vector<runtime::Tensor> inputs;
    inputs.emplace_back("x", DType::float32, std::vector<int64_t>{1, kN});
    for (float& e : inputs[0].ref().span<float>()) e = 1.0F;
    const auto out = session.run(inputs);
    const runtime::PreparedStats& p = session.prepared();
    if (p.mapped_weights_bytes > 0) continue;  // read in place: aligned, nothing was copied
    EXPECT_GE(p.released_mapped_bytes, static_cast<uint64_t>(kN * kN * 4 - int64_t{2} * 4096));
    ASSERT_EQ(out.size(), 1u);
    // Column j sums (i * kN + j) % 7 / 4 over the rows i.
    for (int64_t j : {int64_t{0}, int64_t{5}, kN - 1}) {
      double want = 0;
      for (int64_t i = 0; i < kN; ++i) want += static_cast<double>((i * kN + j) % 7) * 0.25;
      EXPECT_NEAR(out[0].ref().span<const float>()[static_cast<size_t>(j)], want, 1e-3) << j;
    }
    return;
  }
  FAIL() << "no name length misaligned the weight";
}

}  // namespace
}  // namespace footprint::graph
