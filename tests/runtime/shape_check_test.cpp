// runtime::check_shapes (`run --check-shapes`) as a specification: it agrees when prediction and
// run bound the same extents, and names the first value that differs when they did not.
#include "footprint/runtime/shape_check.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "footprint/onnx/model_source.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "tiny_cnn.hpp"

namespace footprint::runtime {
namespace {

std::shared_ptr<const graph::Model> tiny_cnn() {
  return std::make_shared<const graph::Model>(
      graph::load_model(onnx::ModelSource::adopt(examples::make_tiny_cnn())));
}

analysis::ModelProgram predicted_at(const std::shared_ptr<const graph::Model>& model, int64_t n) {
  analysis::ModelProgramOptions options;
  options.dims["N"] = n;
  return analysis::build_model_program(model, op_registry(), options);
}

TEST(ShapeCheck, AgreesWithTheRunAtItsDimsAndNamesTheFirstValueThatDiffers) {
  const auto model = tiny_cnn();
  Session session(*model);
  std::vector<Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{3, 1, 8, 8});
  session.prepare(in);
  const ShapeCheck same = check_shapes(predicted_at(model, 3), session);
  EXPECT_EQ(same.difference, "");
  EXPECT_EQ(same.values, session.prepared_values().size());
  // Predicted for N=2, run at N=3: the input is the first value, and it differs.
  const ShapeCheck other = check_shapes(predicted_at(model, 2), session);
  EXPECT_EQ(other.difference,
            "value 'x': predicted float[2,1,8,8] (512 B), ran float[3,1,8,8] (768 B)");
}

TEST(ShapeCheck, AValueOnlyOneSideHasIsADifference) {
  const auto model = tiny_cnn();
  SessionOptions unfused;
  unfused.fuse = false;
  Session session(*model, unfused);
  std::vector<Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{1, 1, 8, 8});
  session.prepare(in);
  // Analysis fuses the Relu into the Conv and moves it channels-last; the run kept the Conv's
  // own output and its input's layout.
  const ShapeCheck c = check_shapes(predicted_at(model, 1), session);
  EXPECT_TRUE(c.difference.find("ran but is not predicted") != std::string::npos ||
              c.difference.find("predicted but the run has no such value") != std::string::npos)
      << c.difference;
}

}  // namespace
}  // namespace footprint::runtime
