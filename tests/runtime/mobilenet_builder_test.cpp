// The builder on a real small architecture: the example MobileNetV2 (examples/mobilenet_v2.hpp:
// inverted residual blocks with depthwise convolutions, ReLU6, linear bottlenecks and residual
// adds) built in code, written with the ONNX writer and run by the runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "mobilenet_v2.hpp"
#include "test_support.hpp"

namespace footprint::graph {
namespace {

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(MobileNetV2Builder, BuildsInfersAndRuns) {
  GraphBuilder b(runtime::op_registry());
  Var y = examples::build_mobilenet_v2(b);
  EXPECT_EQ(y.shape().to_string(), "[N,1000]");
  EXPECT_EQ(y.value(), nullptr);
  // Stem 2; blocks: the first (expansion 1) 3, the other 16 have 5 each plus a residual Add in
  // the 10 that keep stride 1 and their channels; head 5 (conv, ReLU6, pool, flatten, Gemm).
  EXPECT_EQ(b.node_count(), 2u + 3u + 16u * 5u + 10u + 5u);

  testing::TempDir dir;
  b.write_onnx(dir.path() / "mobilenet_v2.onnx");
  const graph::Model model = graph::load_model(dir.path() / "mobilenet_v2.onnx");
  runtime::Session session(model, {.dims = {{"N", 2}}});
  std::vector<runtime::Tensor> inputs;
  inputs.push_back(examples::mobilenet_v2_input(2));
  const auto out = session.run(inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, 1000}));
  const TensorRef logits = out[0].ref();
  // He-scaled weights keep the logits finite and spread: not all bias (about 0.01), not huge.
  float largest = 0;
  for (float e : logits.span<const float>()) {
    EXPECT_TRUE(std::isfinite(e));
    largest = std::max(largest, std::abs(e));
  }
  EXPECT_GT(largest, 0.1F);
  EXPECT_LT(largest, 1e4F);
  // Prediction = measurement holds for a built model too.
  EXPECT_EQ(session.prepared().planned_arena_bytes, session.last_run().arena_bytes);
}

TEST(MobileNetV2Builder, EveryBuildWritesTheSameBytes) {
  testing::TempDir dir;
  examples::write_mobilenet_v2(dir.path() / "a.onnx");
  examples::write_mobilenet_v2(dir.path() / "b.onnx");
  const std::string a = file_bytes(dir.path() / "a.onnx");
  EXPECT_GT(a.size(), 6'000'000u);  // about 1.7 M float weights
  EXPECT_EQ(a, file_bytes(dir.path() / "b.onnx"));
}

}  // namespace
}  // namespace footprint::graph
