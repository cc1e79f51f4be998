// Each registry row with a kernel says which dtypes that kernel runs (OpSchema::kernel_dtypes),
// and the promise is kept: over every plain dtype, a node of the row runs exactly where the row
// says it does and fails naming the dtype elsewhere, so `analyze` can warn where `run` will
// refuse.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "footprint/graph/op_registry.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "runtime/kernels/dtype_dispatch.hpp"
#include "test_kernel_context.hpp"

namespace footprint::runtime {
namespace {

using testing::KernelRun;
using testing::TestTensor;

TEST(KernelDtypes, EveryRowWithAKernelDeclaresItsDtypes) {
  size_t rows = 0;
  for (const graph::OpSchema& s : op_registry().all()) {
    if (s.kernel == nullptr) {
      EXPECT_TRUE(s.kernel_dtypes.empty()) << s.domain << "::" << s.op_type;
      continue;
    }
    ++rows;
    EXPECT_FALSE(s.kernel_dtypes.empty()) << s.domain << "::" << s.op_type << " runs no dtype?";
    const int of = s.kernel_dtype_of;
    if (of >= 0) {
      EXPECT_LT(of, s.max_inputs) << s.op_type;
    } else {
      EXPECT_LT(-1 - of, s.max_outputs) << s.op_type;
    }
  }
  EXPECT_GT(rows, 100u);
  // The inference-only rows promise nothing.
  for (const graph::OpSchema& s : graph::OpRegistry::builtin().all())
    EXPECT_TRUE(s.kernel_dtypes.empty()) << s.op_type;
}

const DType kPlain[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16,
                        DType::int8,    DType::uint8,   DType::int16,   DType::uint16,
                        DType::int32,   DType::uint32,  DType::int64,   DType::uint64,
                        DType::boolean};

// Runs `op` on `inputs` zero tensors of `t` (extents [2]); nullopt where inference refuses the
// node (ONNX's type constraints, the graph layer's business), else whether the kernel ran.
std::optional<bool> runs(const std::string& op, size_t inputs, DType t,
                         std::vector<testing::Wire> attrs = {}) {
  std::vector<std::optional<TestTensor>> in;
  for (size_t i = 0; i < inputs; ++i) in.emplace_back(TestTensor::zeros(t, {2}));
  std::optional<KernelRun> k;
  try {
    k.emplace(op, std::move(in), std::move(attrs));
  } catch (const Error&) {
    return std::nullopt;
  }
  try {
    k->run();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::string(dtype_name(t))), std::string::npos)
        << op << ": a refusal names the dtype: " << e.what();
    return false;
  }
  return true;
}

void expect_declared_as_run(const std::string& op, size_t inputs,
                            const std::vector<testing::Wire>& attrs = {}) {
  const graph::OpSchema* row = op_registry().find("", op);
  ASSERT_NE(row, nullptr) << op;
  size_t checked = 0;
  for (const DType t : kPlain) {
    const std::optional<bool> ran = runs(op, inputs, t, attrs);
    if (!ran) continue;
    ++checked;
    EXPECT_EQ(*ran, row->kernel_dtypes.contains(t))
        << op << " on " << dtype_name(t) << ": declared " << row->kernel_dtypes.to_string();
  }
  EXPECT_GT(checked, 0u) << op;
}

// The kernels' C++ types (dtype_dispatch.hpp) agree with core's table on every element size.
template <class T>
void expect_size_matches() {
  EXPECT_EQ(dtype_bits(kernels::dtype_of<T>()), static_cast<int>(sizeof(T) * 8))
      << dtype_name(kernels::dtype_of<T>());
}

template <class... Ts>
void expect_sizes_match(kernels::TypeList<Ts...> /*list*/) {
  (expect_size_matches<Ts>(), ...);
}

TEST(KernelDtypes, KernelTypesAgreeWithTheTable) {
  expect_sizes_match(kernels::CastTypes{});
  EXPECT_EQ(kernels::dtypes_of(kernels::RealTypes{}).to_string(), "float, double");
  EXPECT_EQ(kernels::dtypes_with_16bit(kernels::RealTypes{}).to_string(),
            "float, float16, double, bfloat16");
  EXPECT_FALSE(kernels::movable_dtypes().contains(DType::complex128));
  EXPECT_TRUE(kernels::movable_dtypes().contains(DType::bfloat16));
}

TEST(KernelDtypes, ElementwiseRowsRunExactlyWhatTheyDeclare) {
  for (const char* op :
       {"Abs", "Neg", "Sign", "Relu", "Floor", "Sqrt", "Exp", "Tanh", "Sigmoid", "Not", "LeakyRelu",
        "Elu", "HardSigmoid", "HardSwish", "Shrink", "Gelu", "IsNaN", "Clip"})
    expect_declared_as_run(op, 1);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "PRelu", "Mod", "BitShift", "Equal", "Less",
                         "GreaterOrEqual", "And", "Xor", "Sum", "Mean", "Max", "Min", "Pow"})
    expect_declared_as_run(op, 2);
}

TEST(KernelDtypes, ReductionAndDataMovementRowsRunExactlyWhatTheyDeclare) {
  for (const char* op :
       {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceLogSumExp", "ArgMax", "Softmax",
        "LogSoftmax", "Transpose", "Identity", "Dropout", "Shape", "Size", "NonZero"})
    expect_declared_as_run(op, 1);
  expect_declared_as_run("Concat", 2, {testing::attr("axis", 0)});
  // A dot product of two [2] vectors: float32 and, through float32 copies, the 16-bit floats.
  expect_declared_as_run("MatMul", 2);
}

TEST(KernelDtypes, ANodeTheKernelDoesNotRunIsNamed) {
  // A float64 product: the row runs float32 and the 16-bit floats only, and says so before
  // anything runs.
  KernelRun ok("MatMul", {TestTensor::zeros(DType::float16, {2, 2}),
                          TestTensor::zeros(DType::float16, {2, 2})});
  KernelRun wide("MatMul", {TestTensor::zeros(DType::float64, {2, 2}),
                            TestTensor::zeros(DType::float64, {2, 2})});
  EXPECT_EQ(graph::dtype_refused(wide.graph(), wide.node()), DType::float64);
  EXPECT_EQ(graph::dtype_refused(ok.graph(), ok.node()), std::nullopt);
  EXPECT_THROW(wide.run(), Error);
  // Where's promise is about its values (input 1), not its bool condition.
  KernelRun where("Where",
                  {TestTensor::zeros(DType::boolean, {2}), TestTensor::zeros(DType::float16, {2}),
                   TestTensor::zeros(DType::float16, {2})});
  EXPECT_EQ(graph::dtype_refused(where.graph(), where.node()), std::nullopt);
  where.run();
}

}  // namespace
}  // namespace footprint::runtime
