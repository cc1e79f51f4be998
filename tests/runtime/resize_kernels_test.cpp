// Resize through the executor's path (prepare, then run): the output is allocated with the
// extents shape inference predicted, so a kernel that interpolated into other extents than the
// predicted ones would show here. The interpolation modes themselves are covered in
// data_movement_kernels_test.cpp and by the ONNX conformance cases.
#include <gtest/gtest.h>

#include "runtime/prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

// Output 0 of a prepared and run Resize of a 2 x 4 plane to sizes 3 x 3 under `policy`.
Tensor kept_aspect(const char* policy) {
  const Tensor x = floats({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor sizes = Tensor::of(DType::int64, {2}, std::vector<int64_t>{3, 3});
  PreparedRun k("Resize", {x, std::nullopt, std::nullopt, sizes},
                {attr("axes", Ints{2, 3}), attr("keep_aspect_ratio_policy", policy)});
  k.run();
  EXPECT_EQ(k.allocations(), 0u) << policy;
  return k.out(0);
}

TEST(ResizeKernels, KeepAspectRatioPolicyPredictedShapeIsTheKernels) {
  // not_larger: scale min(3/2, 3/4) = 0.75 on both axes: 2 x 4 becomes 2 x 3 (1.5 rounds up).
  const Tensor smaller = kept_aspect("not_larger");
  EXPECT_EQ(smaller.dims, (Ints{1, 1, 2, 3}));
  EXPECT_EQ(smaller.floats(), (std::vector<float>{1, 2, 4, 5, 6, 8}));
  // not_smaller: scale max(3/2, 3/4) = 1.5: 2 x 4 becomes 3 x 6.
  const Tensor larger = kept_aspect("not_smaller");
  EXPECT_EQ(larger.dims, (Ints{1, 1, 3, 6}));
  EXPECT_EQ(larger.floats(),
            (std::vector<float>{1, 1, 2, 3, 3, 4, 1, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8}));
}

}  // namespace
}  // namespace footprint::testing
