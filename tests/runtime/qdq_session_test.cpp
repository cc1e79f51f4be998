// A QDQ model (quantized activations, an int8 weight per output column and an int4 weight in
// blocks, each dequantized into a MatMul) run through runtime::Session and predicted by
// analysis: the weights' DequantizeLinear nodes are constants evaluated once while preparing,
// counted in the float bytes they make and the int8/int4 bytes they are made from (released
// after), and analysis predicts the run exactly: the arena obtained, the weights, the prepare
// peak, every value's dtype and bytes (runtime::check_shapes). The outputs are the formula's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "footprint/analysis/model_program.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/shape_check.hpp"

namespace footprint::graph {
namespace {

constexpr int64_t kRows = 3;
constexpr int64_t kIn = 16;
constexpr int64_t kOut = 8;

template <class T>
SharedValue value(DType t, std::vector<int64_t> dims, const std::vector<T>& v) {
  auto h = HostValue::make(t, std::move(dims));
  std::memcpy(h->data(), v.data(), h->bytes());
  return h;
}

// Weight element (k, j) of the int8 matrix, and of the int4 one (in [-8, 7]).
int8_t w8(int64_t k, int64_t j) {
  return static_cast<int8_t>((k * 37 + j * 11) % 255 - 127);
}
int w4(int64_t k, int64_t j) {
  return static_cast<int>((k * 5 + j * 3) % 16) - 8;
}
float x_at(int64_t r, int64_t k) {
  return std::sin(static_cast<float>(r * kIn + k)) * 3;
}

struct Qdq {
  std::shared_ptr<const Model> model;
  std::vector<float> w8_scale, w4_scale;
  std::vector<int8_t> w8_zp;
  float x_scale = 0.05F;
  uint8_t x_zp = 120;
};

// y = DQ(Q(x)) @ DQ(W8) + DQ(Q(x)) @ DQ(W4): W8 [16, 8] int8 per column (axis 1) with zero
// points, W4 [16, 8] int4 in blocks of 8 rows (axis 0, scale [2, 8]) without.
Qdq build() {
  Qdq q;
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(kRows), Dim::known(kIn)});
  const Var xs = b.constant(value<float>(DType::float32, {}, {q.x_scale}), "x_scale");
  const Var xz = b.constant(value<uint8_t>(DType::uint8, {}, {q.x_zp}), "x_zp");
  const Var xq = b.op1("DequantizeLinear", {b.op1("QuantizeLinear", {x, xs, xz}), xs, xz});

  std::vector<int8_t> w8v;
  for (int64_t k = 0; k < kIn; ++k) {
    for (int64_t j = 0; j < kOut; ++j) w8v.push_back(w8(k, j));
  }
  for (int64_t j = 0; j < kOut; ++j) {
    q.w8_scale.push_back(0.01F * static_cast<float>(j + 1));
    q.w8_zp.push_back(static_cast<int8_t>(j - 4));
  }
  const Var w8q = b.op1("DequantizeLinear",
                        {b.constant(value(DType::int8, {kIn, kOut}, w8v), "w8"),
                         b.constant(value(DType::float32, {kOut}, q.w8_scale), "w8_scale"),
                         b.constant(value(DType::int8, {kOut}, q.w8_zp), "w8_zp")},
                        {Attr::of("axis", int64_t{1})});

  std::vector<uint8_t> w4v(kIn * kOut / 2, 0);
  for (int64_t e = 0; e < kIn * kOut; ++e) {
    const auto nibble = static_cast<uint8_t>(w4(e / kOut, e % kOut) & 0xF);
    w4v[static_cast<size_t>(e / 2)] |= static_cast<uint8_t>(nibble << ((e % 2) * 4));
  }
  for (int64_t i = 0; i < 2 * kOut; ++i)
    q.w4_scale.push_back(0.02F + 0.005F * static_cast<float>(i));
  const Var w4q = b.op1("DequantizeLinear",
                        {b.constant(value(DType::int4, {kIn, kOut}, w4v), "w4"),
                         b.constant(value(DType::float32, {2, kOut}, q.w4_scale), "w4_scale")},
                        {Attr::of("axis", int64_t{0}), Attr::of("block_size", int64_t{8})});
  b.output(b.add(b.matmul(xq, w8q), b.matmul(xq, w4q)), "y");
  q.model = std::move(b.to_graph().model);
  return q;
}

// The same computed by the formulas, in double.
std::vector<double> reference(const Qdq& q) {
  std::vector<double> y(kRows * kOut, 0);
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t k = 0; k < kIn; ++k) {
      const float xq = std::clamp(std::nearbyint(x_at(r, k) / q.x_scale) + q.x_zp, 0.0F, 255.0F);
      const double xd = (static_cast<double>(xq) - q.x_zp) * q.x_scale;
      for (int64_t j = 0; j < kOut; ++j) {
        const auto jj = static_cast<size_t>(j);
        const double a = (w8(k, j) - q.w8_zp[jj]) * static_cast<double>(q.w8_scale[jj]);
        const double b = w4(k, j) * static_cast<double>(q.w4_scale[(k / 8) * kOut + j]);
        y[r * kOut + j] += xd * (a + b);
      }
    }
  }
  return y;
}

TEST(QdqSession, WeightsDequantizedWhilePreparingAndPredictedExactly) {
  const Qdq q = build();
  runtime::Session session(*q.model);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{kRows, kIn});
  auto xs = in[0].ref().span<float>();
  for (int64_t e = 0; e < kRows * kIn; ++e) xs[e] = x_at(e / kIn, e % kIn);
  const std::vector<runtime::Tensor> out = session.run(in);

  const runtime::PreparedStats& p = session.prepared();
  EXPECT_EQ(p.constant_nodes, 2u) << "the two weights' DequantizeLinear";
  EXPECT_EQ(p.steps, 5u) << "Q, DQ, two MatMuls, Add";
  EXPECT_EQ(p.constant_bytes, 2u * kIn * kOut * sizeof(float));
  EXPECT_EQ(session.last_run().arena_bytes, p.planned_arena_bytes);

  const analysis::ModelProgram predicted =
      analysis::build_model_program(q.model, runtime::op_registry(), {});
  EXPECT_EQ(predicted.timeline.weights_bytes, p.weights_bytes);
  EXPECT_EQ(predicted.prepare.peak_bytes, p.prepare_buffers_peak_bytes);
  EXPECT_EQ(predicted.prepare.kept_bytes, p.prepare_buffers_kept_bytes);
  // What the float weights are computed from, in the types they are stored in: int8 and int4
  // (two a byte) with their scales and zero points.
  EXPECT_EQ(predicted.timeline.prepare_only_weights_bytes,
            uint64_t{kIn * kOut} + kOut * 4 + kOut + kIn * kOut / 2 + 2 * kOut * 4);
  const runtime::ShapeCheck check = runtime::check_shapes(predicted, session);
  EXPECT_EQ(check.difference, "");

  const std::vector<double> want = reference(q);
  const auto got = out.at(0).ref().span<const float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << "at " << i;
  }
}

}  // namespace
}  // namespace footprint::graph
