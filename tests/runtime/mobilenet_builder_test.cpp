// The builder on a real small architecture: a MobileNetV2-style network (inverted residual blocks
// with depthwise convolutions, ReLU6, linear bottlenecks and residual adds) built in code,
// written with the ONNX writer and run by the runtime.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "test_support.hpp"

namespace footprint::graph {
namespace {

class MobileNetV2 {
 public:
  explicit MobileNetV2(GraphBuilder& b) : b_(b) {
    zero_ = b_.constant(scalar(0.0F), "relu6_min");
    six_ = b_.constant(scalar(6.0F), "relu6_max");
  }

  // (expansion t, channels c, repeats n, first stride s), as in the paper's table 2, scaled down.
  Var build(const Var& x, int64_t classes) {
    Var y = relu6(conv(x, 3, 16, 3, 2, 1));
    int64_t channels = 16;
    for (const auto [t, c, n, s] :
         {std::array<int64_t, 4>{1, 8, 1, 1}, {6, 12, 2, 2}, {6, 16, 2, 2}, {6, 24, 1, 1}}) {
      for (int64_t i = 0; i < n; ++i) {
        y = inverted_residual(y, channels, c, i == 0 ? s : 1, t);
        channels = c;
      }
    }
    y = relu6(conv(y, channels, 64, 1, 1, 1));
    y = b_.flatten(b_.global_average_pool(y));
    return b_.gemm(y, weight({classes, 64}, 64), weight({classes}, 0), /*trans_b=*/true);
  }

 private:
  Var inverted_residual(const Var& x, int64_t in, int64_t out, int64_t stride, int64_t t) {
    const int64_t hidden = in * t;
    Var y = t == 1 ? x : relu6(conv(x, in, hidden, 1, 1, 1));
    y = relu6(conv(y, hidden, hidden, 3, stride, hidden));  // depthwise
    y = conv(y, hidden, out, 1, 1, 1);                      // linear bottleneck
    return stride == 1 && in == out ? b_.add(x, y) : y;
  }

  Var conv(const Var& x, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t group) {
    const int64_t pad = k / 2;
    const int64_t fan_in = in / group * k * k;
    return b_.conv(x, weight({out, in / group, k, k}, fan_in), weight({out}, 0), {stride, stride},
                   {pad, pad, pad, pad}, group);
  }

  Var relu6(const Var& x) { return b_.clip(x, zero_, six_); }

  // Deterministic He-scaled weights (biases small), so the test needs no data files.
  Var weight(std::vector<int64_t> dims, int64_t fan_in) {
    auto v = HostValue::make(DType::float32, std::move(dims));
    const float scale = fan_in > 0 ? std::sqrt(2.0F / static_cast<float>(fan_in)) : 0.01F;
    for (float& e : v->span<float>()) {
      seed_ = seed_ * 6364136223846793005ULL + 1442695040888963407ULL;
      e = scale * (static_cast<float>(seed_ >> 40) / static_cast<float>(1 << 24) - 0.5F);
    }
    return b_.constant(std::move(v));
  }

  static SharedValue scalar(float x) {
    auto v = HostValue::make(DType::float32, {});
    v->span<float>()[0] = x;
    return v;
  }

  GraphBuilder& b_;
  Var zero_;
  Var six_;
  uint64_t seed_ = 1;
};

TEST(MobileNetV2Builder, BuildsInfersAndRuns) {
  GraphBuilder b(runtime::op_registry());
  Var x = b.input("x", DType::float32,
                  {Dim::named("N"), Dim::known(3), Dim::known(32), Dim::known(32)});
  MobileNetV2 net(b);
  Var y = net.build(x, 10);
  EXPECT_EQ(y.shape().to_string(), "[N,10]");
  EXPECT_EQ(y.value(), nullptr);
  b.output(y, "logits");
  // Stem 2, blocks 3 + 5 + 6 + 5 + 6 + 5 (a residual Add where stride 1 keeps the channels),
  // head 5.
  EXPECT_EQ(b.node_count(), 37u);

  testing::TempDir dir;
  b.write_onnx(dir.path() / "mobilenet_v2.onnx");
  const onnx::Model model = onnx::load_file(dir.path() / "mobilenet_v2.onnx");
  runtime::Session session(model, {.dims = {{"N", 2}}});
  std::vector<runtime::Tensor> inputs;
  inputs.emplace_back("x", DType::float32, std::vector<int64_t>{2, 3, 32, 32});
  const TensorRef in = inputs[0].ref();
  float v = 0;
  for (float& e : in.span<float>()) {
    v += 0.37F;
    e = v - std::floor(v);
  }
  const auto out = session.run(inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 10}));
  const TensorRef logits = out[0].ref();
  for (float e : logits.span<const float>()) EXPECT_TRUE(std::isfinite(e));
  // Prediction = measurement holds for a built model too.
  EXPECT_EQ(session.prepared().planned_arena_bytes, session.last_run().arena_bytes);
}

}  // namespace
}  // namespace footprint::graph
