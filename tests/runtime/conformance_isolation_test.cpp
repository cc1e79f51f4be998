// A node test that never ends is killed at its time limit and counted as an error naming the
// limit (runtime::run_case_isolated): `footprint conformance` never hangs on a case.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/runtime/conformance.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/tensor.hpp"
#include "test_support.hpp"

using namespace footprint;

namespace {

graph::SharedValue scalar(DType dtype, double v) {
  auto t = graph::HostValue::make(dtype, {});
  if (dtype == DType::int64) t->span<int64_t>()[0] = static_cast<int64_t>(v);
  if (dtype == DType::boolean) t->span<bool>()[0] = v != 0;
  if (dtype == DType::float32) t->span<float>()[0] = static_cast<float>(v);
  return t;
}

// v = v0; for 2^62 trips while true: v = v + 1. A case folder: model.onnx, test_data_set_0.
void write_endless_case(const std::filesystem::path& dir) {
  graph::GraphBuilder b(runtime::op_registry());
  const graph::Var v0 = b.input("v0", DType::float32, {Dim::known(1)});
  graph::GraphBuilder& body = b.subgraph();
  (void)body.input("i", DType::int64, {});
  const graph::Var c = body.input("c", DType::boolean, {});
  const graph::Var v = body.input("v", DType::float32, {Dim::known(1)});
  body.output(body.op1("Identity", {c}));
  body.output(body.add(v, body.constant(scalar(DType::float32, 1))));
  const std::vector<graph::Var> out = b.loop(b.constant(scalar(DType::int64, 0x1p62)),
                                             b.constant(scalar(DType::boolean, 1)), {v0}, body);
  b.output(out[0], "v");
  std::filesystem::create_directories(dir / "test_data_set_0");
  b.write_onnx(dir / "model.onnx");
  runtime::Tensor in("v0", DType::float32, std::vector<int64_t>{1});
  in.ref().span<float>()[0] = 0;
  runtime::write_tensor_file(dir / "test_data_set_0/input_0.pb", in);
  runtime::write_tensor_file(dir / "test_data_set_0/output_0.pb",
                             runtime::Tensor("v", DType::float32, std::vector<int64_t>{1}));
}

TEST(ConformanceIsolation, ACaseThatNeverEndsIsKilledAtItsLimit) {
  footprint::testing::TempDir dir;
  const std::filesystem::path c = dir.path() / "test_endless";
  write_endless_case(c);
  const auto start = std::chrono::steady_clock::now();
  const runtime::CaseResult r = runtime::run_case_isolated(c, std::chrono::seconds(1));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.outcome, runtime::CaseOutcome::error);
  EXPECT_EQ(r.reason, "did not finish in 1 s (killed)");
  EXPECT_EQ(r.name, "test_endless");
  EXPECT_LT(took, std::chrono::seconds(30)) << "killed at its limit, not run to its end";
}

}  // namespace
