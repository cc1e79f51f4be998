// Loop inside a session: the carried values go back and forth between two sets in the step's
// scratch, the body's arena is planned after them, each iteration's scan output is written into
// its row of the node's output, and the figures analysis predicts are the run's.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "footprint/analysis/model_program.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "test_support.hpp"

using namespace footprint;
using graph::GraphBuilder;
using graph::HostValue;
using graph::Var;

namespace {

graph::SharedValue scalar_int(int64_t v) {
  auto t = HostValue::make(DType::int64, {});
  t->span<int64_t>()[0] = v;
  return t;
}

graph::SharedValue scalar_float(float v) {
  auto t = HostValue::make(DType::float32, {});
  t->span<float>()[0] = v;
  return t;
}

graph::SharedValue scalar_bool(bool v) {
  auto t = HostValue::make(DType::boolean, {});
  t->span<bool>()[0] = v;
  return t;
}

// s = x; for i in 0..M-1 (while s[0] < limit when `with_cond`): s = s * 2 + i, scan out s.
// Returns the model written and read back, x float[4].
std::shared_ptr<const graph::Model> doubling_loop(const footprint::testing::TempDir& dir,
                                                  int64_t trips, bool with_cond) {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(4)});
  GraphBuilder& body = b.subgraph();
  const Var i = body.input("i", DType::int64, {});
  const Var c = body.input("c", DType::boolean, {});
  const Var s = body.input("s", DType::float32, {Dim::known(4)});
  const Var two = body.constant(scalar_float(2));
  const Var next = body.add(body.op1("Mul", {s, two}),
                            body.op1("Cast", {i}, {graph::Attr::of("to", int64_t{1})}));
  if (with_cond) {
    const Var first = body.op1("Gather", {next, body.constant(scalar_int(0))});
    body.output(body.op1("Less", {first, body.constant(scalar_float(50))}));
  } else {
    body.output(body.op1("Identity", {c}));
  }
  body.output(next);
  body.output(body.op1("Identity", {next}));
  const Var cond = with_cond ? b.constant(scalar_bool(true)) : Var();
  const std::vector<Var> out = b.loop(b.constant(scalar_int(trips)), cond, {x}, body);
  b.output(out[0], "last");
  b.output(out[1], "all");
  b.write_onnx(dir.path() / "loop.onnx");
  return std::make_shared<const graph::Model>(graph::load_model(dir.path() / "loop.onnx"));
}

std::vector<runtime::Tensor> input_x() {
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{4});
  const float v[4] = {1, 2, 3, 4};
  std::copy(v, v + 4, in[0].ref().span<float>().begin());
  return in;
}

}  // namespace

TEST(LoopSession, ForLoopCarriesAndScansInsideItsStep) {
  const footprint::testing::TempDir dir;
  const auto model = doubling_loop(dir, 3, false);
  runtime::Session session(*model);
  const auto out = session.run(input_x());
  ASSERT_EQ(out.size(), 2u);
  // s0 = x; s1 = 2x; s2 = 4x + 1; s3 = 8x + 4.
  std::vector<float> want_last, want_all;
  for (float x : {1.0F, 2.0F, 3.0F, 4.0F}) want_last.push_back(8 * x + 4);
  for (int k = 0; k < 3; ++k) {
    for (float x : {1.0F, 2.0F, 3.0F, 4.0F}) {
      float s = x;
      for (int i = 0; i <= k; ++i) s = 2 * s + static_cast<float>(i);
      want_all.push_back(s);
    }
  }
  const auto last = out[0].ref().span<const float>();
  const auto all = out[1].ref().span<const float>();
  EXPECT_EQ(std::vector<float>(last.begin(), last.end()), want_last);
  EXPECT_EQ(std::vector<int64_t>(out[1].ref().dims.begin(), out[1].ref().dims.end()),
            (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(std::vector<float>(all.begin(), all.end()), want_all);
  // The plan held: the step's scratch (two sets of the carried float[4] and the scalars, then
  // the body's arena) is the arena the run obtained, as analysis predicts.
  EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
  const analysis::ModelProgram predicted =
      analysis::build_model_program(model, runtime::op_registry(), {});
  ASSERT_EQ(predicted.program.program.steps.size(), 1u);
  const uint64_t carried_sets = 64 + 2 * 64;  // scalars; float[4] twice, 64-byte aligned
  EXPECT_EQ(predicted.program.step_subgraph_offset.at(0), carried_sets);
  EXPECT_GT(predicted.program.program.steps[0].workspace, carried_sets) << "the body's arena";
}

TEST(LoopSession, WhileLoopStopsOnItsConditionAndReportsTheTripsRun) {
  const footprint::testing::TempDir dir;
  // At most 10 trips; s[0] goes 1, 2, 5, 12, 27, 58: the body says stop after the fifth.
  const auto model = doubling_loop(dir, 10, true);
  runtime::Session session(*model);
  const auto out = session.run(input_x());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::vector<int64_t>(out[1].ref().dims.begin(), out[1].ref().dims.end()),
            (std::vector<int64_t>{5, 4}))
      << "the scan output holds the trips run, not its bound of 10";
  EXPECT_EQ(out[0].ref().span<const float>()[0], 58.0F);
  EXPECT_EQ(out[1].ref().span<const float>()[16], 58.0F);
  EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
}

// Scan: a running sum over x's rows read along axis 1 from the end (scan_input_directions 1),
// each step's sum written along axis 1 of the output: sums[:, t] = sum of x[:, T - 1 - u] for
// u <= t. The state and each slice live in the step's scratch; the figures hold.
TEST(LoopSession, ScanReadsAndWritesAlongItsAxesAndDirections) {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(2), Dim::known(3)});
  const Var init = b.input("init", DType::float32, {Dim::known(2)});
  GraphBuilder& body = b.subgraph();
  const Var s = body.input("s", DType::float32, {Dim::known(2)});
  const Var column = body.input("column", DType::float32, {Dim::known(2)});
  const Var next = body.add(s, column);
  body.output(next);
  body.output(body.op1("Identity", {next}));
  const std::vector<Var> out =
      b.op("Scan", {init, x},
           {graph::Attr::of("body", body), graph::Attr::of("num_scan_inputs", int64_t{1}),
            graph::Attr::of("scan_input_axes", std::vector<int64_t>{1}),
            graph::Attr::of("scan_input_directions", std::vector<int64_t>{1}),
            graph::Attr::of("scan_output_axes", std::vector<int64_t>{1})},
           2);
  b.output(out[0], "total");
  b.output(out[1], "sums");
  const footprint::testing::TempDir dir;
  b.write_onnx(dir.path() / "scan.onnx");
  const graph::Model model = graph::load_model(dir.path() / "scan.onnx");
  runtime::Session session(model);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{2, 3});
  in.emplace_back("init", DType::float32, std::vector<int64_t>{2});
  const float xs[6] = {1, 2, 3, 10, 20, 30};
  std::copy(xs, xs + 6, in[0].ref().span<float>().begin());
  in[1].ref().span<float>()[0] = 100;
  in[1].ref().span<float>()[1] = 200;
  const auto got = session.run(in);
  ASSERT_EQ(got.size(), 2u);
  const auto total = got[0].ref().span<const float>();
  EXPECT_EQ(std::vector<float>(total.begin(), total.end()), (std::vector<float>{106, 260}));
  const auto sums = got[1].ref().span<const float>();
  // Row 0 from the end: 100 + 3, + 2, + 1; row 1: 200 + 30, + 20, + 10.
  EXPECT_EQ(std::vector<float>(sums.begin(), sums.end()),
            (std::vector<float>{103, 105, 106, 230, 250, 260}));
  EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
}
