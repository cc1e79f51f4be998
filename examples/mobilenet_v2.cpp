#include "mobilenet_v2.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/runtime/op_kernels.hpp"

namespace footprint::examples {
namespace {

using graph::GraphBuilder;
using graph::HostValue;
using graph::SharedValue;
using graph::Var;

// The reference implementation's rounding: channel counts are multiples of 8 (vector-friendly)
// and never more than 10 % below the scaled width.
int64_t round_channels(double channels) {
  auto rounded = std::max<int64_t>(8, static_cast<int64_t>(channels + 4) / 8 * 8);
  if (static_cast<double>(rounded) < 0.9 * channels) rounded += 8;
  return rounded;
}

// A 64-bit LCG (Knuth's MMIX constants): the same stream on every platform and compiler.
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  // Uniform in [-1, 1), from the top 24 bits (exact in a float).
  float next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>(state_ >> 40) / static_cast<float>(1 << 23) - 1.0F;
  }

 private:
  uint64_t state_;
};

class Builder {
 public:
  Builder(GraphBuilder& b, const MobileNetV2Config& config) : b_(b), rng_(config.seed) {
    zero_ = b_.constant(scalar(0.0F), "relu6_min");
    six_ = b_.constant(scalar(6.0F), "relu6_max");
  }

  Var build(const Var& x, const MobileNetV2Config& c) {
    // (expansion t, channels c, repeats n, first stride s): the paper's table 2.
    static constexpr std::array<std::array<int64_t, 4>, 7> kBlocks{{{1, 16, 1, 1},
                                                                    {6, 24, 2, 2},
                                                                    {6, 32, 3, 2},
                                                                    {6, 64, 4, 2},
                                                                    {6, 96, 3, 1},
                                                                    {6, 160, 3, 2},
                                                                    {6, 320, 1, 1}}};
    const double alpha = c.width_multiplier;
    int64_t channels = round_channels(32 * alpha);
    Var y = relu6(conv(x, 3, channels, 3, 2, 1));
    for (const auto& [t, out, n, s] : kBlocks) {
      const int64_t out_channels = round_channels(static_cast<double>(out) * alpha);
      for (int64_t i = 0; i < n; ++i) {
        y = inverted_residual(y, channels, out_channels, i == 0 ? s : 1, t);
        channels = out_channels;
      }
    }
    // The reference keeps the 1280-channel head for widths up to 1: thin networks lose too much
    // accuracy with a thinner one.
    const int64_t head = alpha > 1.0 ? round_channels(1280 * alpha) : 1280;
    y = relu6(conv(y, channels, head, 1, 1, 1));
    y = b_.flatten(b_.global_average_pool(y));
    return b_.gemm(y, weight({c.classes, head}, head), bias(c.classes), /*trans_b=*/true);
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
    return b_.conv(x, weight({out, in / group, k, k}, in / group * k * k), bias(out),
                   {stride, stride}, {pad, pad, pad, pad}, group);
  }

  Var relu6(const Var& x) { return b_.clip(x, zero_, six_); }

  // He initialisation: uniform with variance 2 / fan_in keeps the scale of ReLU activations
  // from layer to layer, so the logits are neither all bias nor saturated.
  Var weight(std::vector<int64_t> dims, int64_t fan_in) {
    auto v = HostValue::make(DType::float32, std::move(dims));
    const float limit = std::sqrt(6.0F / static_cast<float>(fan_in));
    for (float& e : v->span<float>()) e = limit * rng_.next();
    return b_.constant(std::move(v));
  }

  Var bias(int64_t size) {
    auto v = HostValue::make(DType::float32, {size});
    for (float& e : v->span<float>()) e = 0.01F * rng_.next();
    return b_.constant(std::move(v));
  }

  static SharedValue scalar(float x) {
    auto v = HostValue::make(DType::float32, {});
    v->span<float>()[0] = x;
    return v;
  }

  GraphBuilder& b_;
  Lcg rng_;
  Var zero_;
  Var six_;
};

}  // namespace

Var build_mobilenet_v2(GraphBuilder& b, const MobileNetV2Config& config) {
  if (config.height < 32 || config.width < 32 || config.classes < 1 ||
      !(config.width_multiplier > 0)) {
    throw UsageError(
        "mobilenet_v2: the input must be at least 32x32 (five stride-2 stages), with "
        "at least one class and a positive width multiplier");
  }
  Var x = b.input(
      "x", DType::float32,
      {Dim::named("N"), Dim::known(3), Dim::known(config.height), Dim::known(config.width)});
  Builder net(b, config);
  Var logits = net.build(x, config);
  b.output(logits, "logits");
  return logits;
}

void write_mobilenet_v2(const std::filesystem::path& path, const MobileNetV2Config& config) {
  GraphBuilder b(runtime::op_registry(), {.graph_name = "mobilenet_v2"});
  build_mobilenet_v2(b, config);
  b.write_onnx(path);
}

runtime::Tensor mobilenet_v2_input(int64_t n, const MobileNetV2Config& config) {
  runtime::Tensor x("x", DType::float32, {n, 3, config.height, config.width});
  // Its own stream, apart from the weights', so other configurations keep the same input.
  Lcg rng(0x1234'5678'9abc'def0ULL);
  for (float& e : x.ref().span<float>()) e = rng.next();
  return x;
}

}  // namespace footprint::examples
