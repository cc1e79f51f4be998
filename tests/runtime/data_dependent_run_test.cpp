// Running graphs whose extents depend on values (issue 15). Analysis plans each such tensor at
// the bound its op declares; the run places it there, the op reports what the data made of it
// (NonZero's count, the branch an If took), every later extent follows from that, and the
// outputs come back at those extents. A kernel prepared for fixed extents runs at its bound only
// where rows are independent and only rows vary; anything else is refused naming the node.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "footprint/analysis/model_program.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/shape_check.hpp"
#include "test_support.hpp"

using namespace footprint;
using graph::Attr;
using graph::GraphBuilder;
using graph::HostValue;
using graph::Var;

namespace {

graph::SharedValue ints(const std::vector<int64_t>& v) {
  auto h = HostValue::make(DType::int64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), h->span<int64_t>().begin());
  return h;
}

graph::SharedValue floats(std::vector<int64_t> dims, const std::vector<float>& v) {
  auto h = HostValue::make(DType::float32, std::move(dims));
  std::copy(v.begin(), v.end(), h->span<float>().begin());
  return h;
}

std::shared_ptr<const graph::Model> written(const GraphBuilder& b,
                                            const footprint::testing::TempDir& dir) {
  b.write_onnx(dir.path() / "model.onnx");
  return std::make_shared<const graph::Model>(graph::load_model(dir.path() / "model.onnx"));
}

// The indices of x's non-zero elements, flattened: int64[<=numel(x)].
Var nonzero_indices(GraphBuilder& b, const Var& x) {
  const Var flat = b.reshape(x, b.constant(ints({-1})));
  return b.reshape(b.op1("NonZero", {flat}), b.constant(ints({-1})));
}

runtime::Tensor vector_tensor(const std::string& name, std::vector<int64_t> dims,
                              const std::vector<float>& v) {
  runtime::Tensor t(name, DType::float32, std::move(dims));
  std::copy(v.begin(), v.end(), t.ref().span<float>().begin());
  return t;
}

// What analysis predicts for the model (fused, as the session runs it), checked against the
// session's last run value by value.
std::string shape_difference(const std::shared_ptr<const graph::Model>& model,
                             const runtime::Session& session) {
  analysis::ModelProgramOptions o;
  o.subgraph_arena = analysis::subgraph_arena("auto");
  const analysis::ModelProgram predicted =
      analysis::build_model_program(model, runtime::op_registry(), o);
  return runtime::check_shapes(predicted, session).difference;
}

std::vector<float> values(const runtime::Tensor& t) {
  const auto s = t.ref().span<const float>();
  return {s.begin(), s.end()};
}

TEST(DataDependentRun, NonZeroThenGatherReturnsWhatTheDataSelects) {
  footprint::testing::TempDir dir;
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(6)});
  const Var picked = b.op1("Gather", {x, nonzero_indices(b, x)});
  b.output(b.op1("Neg", {picked}), "y");
  const auto model = written(b, dir);
  EXPECT_EQ(picked.shape().to_string().substr(0, 2), "[<")
      << "analysis knows the count only as a bound";

  runtime::Session session(*model);
  struct Case {
    std::vector<float> x, y;
  };
  const std::vector<Case> cases = {{{0, 1.5F, 0, -2, 3, 0}, {-1.5F, 2, -3}},
                                   {{0, 0, 0, 0, 0, 0}, {}},
                                   {{1, 2, 3, 4, 5, 6}, {-1, -2, -3, -4, -5, -6}},
                                   {{0, 0, 0, 0, 0, 7}, {-7}}};
  for (const Case& c : cases) {
    std::vector<runtime::Tensor> in;
    in.push_back(vector_tensor("x", {6}, c.x));
    const std::vector<runtime::Tensor> out = session.run(in);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{static_cast<int64_t>(c.y.size())}));
    EXPECT_EQ(values(out[0]), c.y);
    // The arena is the plan's, planned with every data-dependent tensor at its bound.
    EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
    EXPECT_EQ(shape_difference(model, session), "");
    // What the run reports of them: the selected values and their negations, 4 bytes each, and
    // the int64 indices (NonZero's [1, n] and its flattened view).
    const uint64_t n = c.y.size();
    EXPECT_EQ(session.last_run().bounded_used_bytes, n * 8 + n * 4 + n * 4);
  }
  const runtime::PreparedStats& p = session.prepared();
  EXPECT_EQ(p.bounded_bytes, 6u * 8 + 6 * 4 + 6 * 4) << "the same buffers at their bound of 6";
  ASSERT_EQ(p.bounded_by.size(), 1u);
  EXPECT_NE(p.bounded_by[0].find("(NonZero)"), std::string::npos) << p.bounded_by[0];
  size_t bounded = 0;
  for (const auto& v : session.prepared_values()) bounded += v.bounded ? 1 : 0;
  EXPECT_EQ(bounded, p.bounded_values);
  EXPECT_GE(bounded, 4u) << "NonZero's output, its flattened view, the gathered and the negated";
}

// The rows a product reads are selected by the data: the product runs on the bound of rows it
// was prepared for (its primitive fixed), and only the rows the data made are returned.
TEST(DataDependentRun, AProductOverSelectedRowsRunsAtItsBound) {
  footprint::testing::TempDir dir;
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(8), Dim::known(1)});
  const Var rows = b.op1("Gather", {x, nonzero_indices(b, x)});  // float[<=8,1]
  const Var w = b.constant(floats({1, 3}, {1, 2, 3}));
  const Var bias = b.constant(floats({3}, {0.5F, 0, -0.5F}));
  b.output(b.matmul(rows, w), "product");
  b.output(b.op1("Relu", {b.gemm(rows, w, bias)}), "fully_connected");
  const auto model = written(b, dir);

  runtime::Session session(*model);
  for (const std::vector<float>& x_values : std::vector<std::vector<float>>{
           {0, 2, 0, 0, -1, 0, 0, 4}, {1, 1, 1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}}) {
    std::vector<runtime::Tensor> in;
    in.push_back(vector_tensor("x", {8, 1}, x_values));
    const std::vector<runtime::Tensor> out = session.run(in);
    std::vector<float> product, fc;
    for (float v : x_values) {
      if (v == 0) continue;
      for (float k : {1.0F, 2.0F, 3.0F}) product.push_back(v * k);
      for (float e : {v * 1 + 0.5F, v * 2, v * 3 - 0.5F}) fc.push_back(e > 0 ? e : 0);
    }
    const auto rows_made = static_cast<int64_t>(product.size() / 3);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{rows_made, 3}));
    EXPECT_EQ(values(out[0]), product);
    EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{rows_made, 3}));
    EXPECT_EQ(values(out[1]), fc);
    EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
    EXPECT_EQ(shape_difference(model, session), "");
  }
}

// If on a condition computed when running, with branches of different extents: the node's output
// is planned at the larger, and takes the extents of the branch that ran.
TEST(DataDependentRun, AnIfOnARuntimeConditionTakesTheExtentsOfItsBranch) {
  footprint::testing::TempDir dir;
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(6)});
  const Var cond = b.input("cond", DType::boolean, {});
  const Var zero = b.constant(ints({0}));
  GraphBuilder& then_b = b.subgraph();
  then_b.output(then_b.op1("Slice", {x, zero, then_b.constant(ints({2}))}));
  GraphBuilder& else_b = b.subgraph();
  else_b.output(else_b.op1("Slice", {x, zero, else_b.constant(ints({5}))}));
  const Var chosen = b.if_else(cond, then_b, else_b)[0];
  b.output(b.op1("Neg", {chosen}), "y");
  const auto model = written(b, dir);

  runtime::Session session(*model);
  for (const bool take_then : {true, false, true}) {
    std::vector<runtime::Tensor> in;
    in.push_back(vector_tensor("x", {6}, {1, 2, 3, 4, 5, 6}));
    in.emplace_back("cond", DType::boolean, std::vector<int64_t>{});
    in.back().ref().span<bool>()[0] = take_then;
    const std::vector<runtime::Tensor> out = session.run(in);
    ASSERT_EQ(out.size(), 1u);
    const std::vector<float> want =
        take_then ? std::vector<float>{-1, -2} : std::vector<float>{-1, -2, -3, -4, -5};
    EXPECT_EQ(values(out[0]), want) << (take_then ? "then" : "else");
    EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
    EXPECT_EQ(shape_difference(model, session), "");
  }
}

// A Slice whose end is an input: the kernel reads it and reports the extent it cut.
TEST(DataDependentRun, ASliceWithARuntimeEndReportsItsExtent) {
  footprint::testing::TempDir dir;
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(2), Dim::known(5)});
  const Var end = b.input("end", DType::int64, {Dim::known(1)});
  const Var cut = b.op1("Slice", {x, b.constant(ints({1})), end, b.constant(ints({1}))});
  b.output(b.op1("Neg", {cut}), "y");
  const auto model = written(b, dir);
  runtime::Session session(*model);
  for (const int64_t e : {3, 1, 5, 99, -1}) {
    std::vector<runtime::Tensor> in;
    in.push_back(vector_tensor("x", {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    in.emplace_back("end", DType::int64, std::vector<int64_t>{1});
    in.back().ref().span<int64_t>()[0] = e;
    const std::vector<runtime::Tensor> out = session.run(in);
    const int64_t kept = std::clamp<int64_t>(e < 0 ? e + 5 : e, 0, 5) - 1;
    EXPECT_EQ(out[0].dims(), (std::vector<int64_t>{2, kept})) << "end " << e;
    std::vector<float> want;
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t c = 1; c <= kept; ++c) want.push_back(-static_cast<float>(r * 5 + c));
    }
    EXPECT_EQ(values(out[0]), want) << "end " << e;
    EXPECT_EQ(shape_difference(model, session), "");
  }
}

// Compress keeps the slices its condition selects: along an axis, or of the flattened input.
TEST(DataDependentRun, CompressKeepsWhatItsConditionSelects) {
  footprint::testing::TempDir dir;
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(3), Dim::known(2)});
  const Var rows = b.input("rows", DType::boolean, {Dim::known(3)});
  const Var elements = b.input("elements", DType::boolean, {Dim::known(4)});
  b.output(b.op1("Neg", {b.op1("Compress", {x, rows}, {Attr::of("axis", int64_t{0})})}), "by_row");
  b.output(b.op1("Neg", {b.op1("Compress", {x, elements})}), "flat");
  const auto model = written(b, dir);
  runtime::Session session(*model);
  auto bools = [](const std::string& name, const std::vector<bool>& v) {
    runtime::Tensor t(name, DType::boolean, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.ref().span<bool>()[i] = v[i];
    return t;
  };
  struct Case {
    std::vector<bool> rows, elements;
    std::vector<int64_t> by_row_dims;
    std::vector<float> by_row, flat;
  };
  for (const Case& c :
       {Case{
            {false, true, true}, {true, false, true, true}, {2, 2}, {-3, -4, -5, -6}, {-1, -3, -4}},
        Case{{false, false, false}, {false, false, false, false}, {0, 2}, {}, {}},
        Case{{true, true, true},
             {true, true, true, true},
             {3, 2},
             {-1, -2, -3, -4, -5, -6},
             {-1, -2, -3, -4}}}) {
    std::vector<runtime::Tensor> in;
    in.push_back(vector_tensor("x", {3, 2}, {1, 2, 3, 4, 5, 6}));
    in.push_back(bools("rows", c.rows));
    in.push_back(bools("elements", c.elements));
    const std::vector<runtime::Tensor> out = session.run(in);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].dims(), c.by_row_dims);
    EXPECT_EQ(values(out[0]), c.by_row);
    EXPECT_EQ(out[1].dims(), (std::vector<int64_t>{static_cast<int64_t>(c.flat.size())}));
    EXPECT_EQ(values(out[1]), c.flat) << "the condition is shorter than the 6 elements";
    EXPECT_EQ(shape_difference(model, session), "");
  }
}

// Unique's count of distinct values sizes its values, first indices and counts; what reads them
// gets that many.
TEST(DataDependentRun, UniqueReturnsAsManyAsTheDataHasDistinctValues) {
  footprint::testing::TempDir dir;
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(6)});
  const std::vector<Var> u = b.op("Unique", {x}, {Attr::of("sorted", int64_t{0})}, 4);
  b.output(b.op1("Neg", {u[0]}), "values");
  b.output(u[1], "first");
  b.output(u[2], "inverse");
  b.output(u[3], "counts");
  const auto model = written(b, dir);
  runtime::Session session(*model);
  auto ints_of = [](const runtime::Tensor& t) {
    const auto s = t.ref().span<const int64_t>();
    return std::vector<int64_t>(s.begin(), s.end());
  };
  std::vector<runtime::Tensor> in;
  in.push_back(vector_tensor("x", {6}, {2, 1, 2, 3, 1, 2}));
  std::vector<runtime::Tensor> out = session.run(in);
  EXPECT_EQ(values(out[0]), (std::vector<float>{-2, -1, -3})) << "in order of first occurrence";
  EXPECT_EQ(ints_of(out[1]), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(ints_of(out[2]), (std::vector<int64_t>{0, 1, 0, 2, 1, 0}));
  EXPECT_EQ(ints_of(out[3]), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(shape_difference(model, session), "");
  in[0] = vector_tensor("x", {6}, {5, 5, 5, 5, 5, 5});
  out = session.run(in);
  EXPECT_EQ(values(out[0]), (std::vector<float>{-5}));
  EXPECT_EQ(ints_of(out[3]), (std::vector<int64_t>{6}));
  EXPECT_EQ(shape_difference(model, session), "");
}

// A convolution's primitive is built for its extents: it runs at its bound when only the batch
// varies, and is refused (naming the node) when its width depends on the data.
TEST(DataDependentRun, AKernelPreparedForItsExtentsIsRefusedWhereMoreThanRowsVary) {
  footprint::testing::TempDir dir;
  GraphBuilder b(runtime::op_registry());
  const Var x =
      b.input("x", DType::float32, {Dim::known(1), Dim::known(1), Dim::known(4), Dim::known(4)});
  const Var end = b.input("end", DType::int64, {Dim::known(1)});
  const Var narrow = b.op1("Slice", {x, b.constant(ints({0})), end, b.constant(ints({3}))});
  const Var w = b.constant(floats({1, 1, 1, 1}, {2}));
  b.output(b.conv(narrow, w, Var(), {1, 1}, {0, 0, 0, 0}), "y");
  const auto model = written(b, dir);
  runtime::Session session(*model);
  std::vector<runtime::Tensor> in;
  in.push_back(vector_tensor("x", {1, 1, 4, 4}, std::vector<float>(16, 1)));
  in.emplace_back("end", DType::int64, std::vector<int64_t>{1});
  in.back().ref().span<int64_t>()[0] = 2;
  try {
    (void)session.run(in);
    ADD_FAILURE() << "a convolution over a data-dependent width ran";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("(Conv): its kernel is prepared for fixed extents"), std::string::npos)
        << what;
  }
}

}  // namespace
