// Generator kernels: Constant (tensor and list attributes), ConstantOfShape, Range, EyeLike.
#include <gtest/gtest.h>

#include "runtime/test_kernel_context.hpp"

namespace footprint::testing {
namespace {

TEST(GeneratorKernels, ConstantFromRawTensor) {
  KernelRun k("Constant", {}, {attr_tensor("value", float_tensor("", {2}, {1.5f, -2}))});
  k.run();
  EXPECT_EQ(k.allocations(), 0u);  // (0 without the counting allocator: sanitizer builds)
  EXPECT_EQ(k.out(0).values<float>(), (std::vector<float>{1.5f, -2}));
}

TEST(GeneratorKernels, ConstantFromVarintField) {
  // int64_data (field 7), one varint per element, negative included.
  Wire t;
  t.int_field(1, 3).int_field(2, static_cast<int64_t>(DType::int64));
  for (int64_t v : {5, -1, 300}) t.int_field(7, v);
  KernelRun k("Constant", {}, {attr_tensor("value", t)});
  k.run();
  EXPECT_EQ(k.allocations(), 0u);
  EXPECT_EQ(k.out(0).values<int64_t>(), (std::vector<int64_t>{5, -1, 300}));
}

TEST(GeneratorKernels, ConstantFromListAttributes) {
  KernelRun ints("Constant", {}, {attr("value_ints", std::vector<int64_t>{3, 4})});
  ints.run();
  EXPECT_EQ(ints.out(0).values<int64_t>(), (std::vector<int64_t>{3, 4}));
  KernelRun f("Constant", {}, {attr_float("value_float", 0.25f)});
  f.run();
  EXPECT_EQ(f.out(0).values<float>(), (std::vector<float>{0.25f}));
  KernelRun fs("Constant", {}, {attr_floats("value_floats", {1, 2, 3})});
  fs.run();
  EXPECT_EQ(fs.out(0).values<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(GeneratorKernels, ConstantOfShape) {
  KernelRun zeros("ConstantOfShape", {i64({2}, {2, 2})});
  zeros.run();
  EXPECT_EQ(zeros.out(0).values<float>(), std::vector<float>(4, 0));
  KernelRun sevens("ConstantOfShape", {i64({2}, {1, 3})},
                   {attr_tensor("value", raw_tensor<int32_t>("", DType::int32, {1}, {7}))});
  sevens.run();
  EXPECT_EQ(sevens.allocations(), 0u);
  EXPECT_EQ(sevens.out(0).values<int32_t>(), (std::vector<int32_t>{7, 7, 7}));
}

TEST(GeneratorKernels, Range) {
  KernelRun f("Range", {f32({}, {1}), f32({}, {2}), f32({}, {0.25f})});
  f.run();
  EXPECT_EQ(f.out(0).values<float>(), (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
  KernelRun down("Range", {i64({}, {10}), i64({}, {4}), i64({}, {-3})});
  down.run();
  EXPECT_EQ(down.out(0).values<int64_t>(), (std::vector<int64_t>{10, 7}));
}

TEST(GeneratorKernels, EyeLike) {
  KernelRun k("EyeLike", {f32({3, 4}, std::vector<float>(12, 5))}, {attr("k", 1)});
  k.run();
  EXPECT_EQ(k.out(0).values<float>(), (std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  KernelRun typed("EyeLike", {f32({2, 2}, {0, 0, 0, 0})},
                  {attr("dtype", static_cast<int64_t>(DType::int32))});
  typed.run();
  EXPECT_EQ(typed.out(0).values<int32_t>(), (std::vector<int32_t>{1, 0, 0, 1}));
}

}  // namespace
}  // namespace footprint::testing
