// Models become memory programs through the op registry: views, constants, dims, subgraphs.
#include "footprint/analysis/graph_program.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "footprint/analysis/dim_sweep.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/core/error.hpp"
#include "graph/built_graph.hpp"

namespace footprint::analysis {
namespace {

using testing::Wire;

// A float value_info whose dims are integers or names.
Wire value_info(std::string_view name, std::vector<std::string> dims) {
  Wire shape;
  for (const auto& d : dims) {
    if (!d.empty() && d[0] >= '0' && d[0] <= '9') {
      shape.msg(1, Wire().int_field(1, std::stoll(d)));
    } else {
      shape.msg(1, Wire().str(2, d));
    }
  }
  Wire tensor_type;
  tensor_type.int_field(1, 1).msg(2, shape);
  Wire vi;
  vi.str(1, name).msg(2, Wire().msg(1, tensor_type));
  return vi;
}

using Model = testing::BuiltGraph;
Model build(const Wire& g) {
  return testing::build_graph(g);
}

// x[N,8] -> Relu -> a -> Flatten (a view) -> f -> Neg -> y, every value declared.
Wire chain() {
  Wire g;
  g.msg(11, value_info("x", {"N", "8"}));
  g.msg(1, testing::node("Relu", {"x"}, {"a"}, "relu"));
  g.msg(1, testing::node("Flatten", {"a"}, {"f"}, "flatten"));
  g.msg(1, testing::node("Neg", {"f"}, {"y"}, "neg"));
  g.msg(13, value_info("a", {"N", "8"}));
  g.msg(13, value_info("f", {"N", "8"}));
  g.msg(12, value_info("y", {"N", "8"}));
  return g;
}

TEST(GraphProgram, SizesFollowTheDimBindings) {
  Model m = build(chain());
  GraphProgramOptions options;
  options.dims["N"] = 4;
  const GraphProgram p = build_program(m.graph, options);
  EXPECT_TRUE(p.unbound_dims.empty());
  ASSERT_EQ(p.program.steps.size(), 3u);
  const Timeline t = simulate(p.program);
  EXPECT_EQ(t.inputs_bytes, 128u);
  EXPECT_EQ(t.outputs_bytes, 128u);
  EXPECT_EQ(t.steps[1].alloc_bytes, 0u) << "Flatten is a view in the registry";
  EXPECT_EQ(t.lower_bound_bytes, 128u) << "a (through f) is the only activation";
  EXPECT_EQ(t.total_peak_bytes, 128u * 3);
}

TEST(GraphProgram, UnboundDimsDefaultToOneAndAreReported) {
  Model m = build(chain());
  const GraphProgram p = build_program(m.graph);
  EXPECT_EQ(p.unbound_dims, (std::vector<std::string>{"N"}));
  EXPECT_EQ(simulate(p.program).inputs_bytes, 32u);
}

TEST(GraphProgram, DonatedInputsAreFreed) {
  Model m = build(chain());
  GraphProgramOptions options;
  options.inputs = InputsPolicy::donated;
  options.dims["N"] = 1;
  const Timeline t = simulate(build_program(m.graph, options).program);
  EXPECT_EQ(t.steps[0].free_bytes, 32u) << "x dies after Relu";
  EXPECT_EQ(t.after_bytes, 32u) << "only y";
}

TEST(GraphProgram, SweepFindsTheLinearLaw) {
  Model m = build(chain());
  const DimSweep s = sweep_dim(m.graph, {}, "N", {1, 2, 8, 32});
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_TRUE(s.total_peak.linear);
  EXPECT_DOUBLE_EQ(s.total_peak.slope, 96.0) << "x, a and y: 3 x 8 floats per unit of N";
  EXPECT_DOUBLE_EQ(s.total_peak.intercept, 0.0);
  EXPECT_EQ(s.points[3].total_peak_bytes, 96u * 32);
}

// Timelines whose step k has total bytes totals[k](x) at each x.
std::vector<Timeline> timelines_of(const std::vector<int64_t>& xs,
                                   const std::vector<std::function<uint64_t(int64_t)>>& totals) {
  std::vector<Timeline> out;
  for (const int64_t x : xs) {
    Timeline t;
    for (size_t k = 0; k < totals.size(); ++k) {
      StepMemory m;
      m.node = "s" + std::to_string(k);
      m.total_bytes = totals[k](x);
      t.steps.push_back(m);
    }
    out.push_back(std::move(t));
  }
  return out;
}

TEST(GraphProgram, PeakLawIsPiecewiseAndExact) {
  const std::vector<int64_t> xs = {1, 2, 4, 8, 16, 32};
  // A linear step that peaks while x is small, a quadratic one (attention's scores) after.
  const auto law = peak_law(xs, timelines_of(xs, {[](int64_t x) { return 100 + 10 * x; },
                                                  [](int64_t x) { return 5 * x * x; }}));
  ASSERT_TRUE(law.exact) << law.why_not;
  ASSERT_EQ(law.pieces.size(), 2u);
  EXPECT_EQ(law.pieces[0].step, "s0");
  EXPECT_EQ(law.pieces[0].from, 1);
  EXPECT_EQ(law.pieces[0].to, 4);
  EXPECT_EQ(law.pieces[0].to_string("x"), "100 + 10*x");
  EXPECT_EQ(law.pieces[1].step, "s1");
  EXPECT_EQ(law.pieces[1].from, 8);
  EXPECT_EQ(law.pieces[1].to, 32);
  EXPECT_EQ(law.pieces[1].to_string("x"), "5*x^2");
  EXPECT_EQ(law.dominant.step, "s1");

  // Rational coefficients: x(x+1)/2 bytes, exact as fractions.
  const auto half = peak_law(xs, timelines_of(xs, {[](int64_t x) { return x * (x + 1) / 2; }}));
  ASSERT_TRUE(half.exact) << half.why_not;
  EXPECT_EQ(half.pieces[0].to_string("x"), "1/2*x + 1/2*x^2");
  EXPECT_EQ(half.pieces[0].coefficients[1], (Fraction{1, 2}));

  // The step that peaks at the last values is not always the one that grows fastest.
  const auto later = peak_law(xs, timelines_of(xs, {[](int64_t x) { return 1000000 + x; },
                                                    [](int64_t x) { return x * x * x; }}));
  ASSERT_TRUE(later.exact);
  EXPECT_EQ(later.pieces.size(), 1u);
  EXPECT_EQ(later.dominant.step, "s1") << "x^3 passes 10^6 + x beyond the swept values";
}

TEST(GraphProgram, PeakLawSaysWhyThereIsNone) {
  const std::vector<int64_t> xs = {1, 2, 3, 4, 5, 6, 7};
  // A strided window's extent, floor(x / 3): no polynomial through seven points.
  const auto floor = peak_law(
      xs, timelines_of(xs, {[](int64_t x) { return 10 + x; }, [](int64_t x) { return x / 3; }}));
  EXPECT_FALSE(floor.exact);
  EXPECT_NE(floor.why_not.find("step 's1' fits no polynomial of degree <= 3 through the 7"),
            std::string::npos)
      << floor.why_not;
  // A quadratic needs five points (three, and two to spare): four are not enough.
  const std::vector<int64_t> four = {1, 2, 3, 4};
  EXPECT_FALSE(peak_law(four, timelines_of(four, {[](int64_t x) { return x * x; }})).exact);
  EXPECT_TRUE(peak_law(four, timelines_of(four, {[](int64_t x) { return 3 * x; }})).exact);
  // A kernel that packs past a threshold: its workspace jumps, the rest of the step is linear.
  const std::vector<int64_t> seven = {8, 16, 32, 64, 128, 256, 512};
  auto packed = timelines_of(seven, {[](int64_t x) { return 1000 + 4 * x; }});
  for (size_t k = 0; k < seven.size(); ++k) {
    auto& step = packed[k].steps[0];
    step.workspace_bytes = seven[k] < 512 ? 640 : 17152;
    step.total_bytes += step.workspace_bytes;
  }
  const auto jump = peak_law(seven, packed);
  EXPECT_FALSE(jump.exact);
  EXPECT_NE(jump.why_not.find("the workspace of step 's0' is no polynomial in the dim (640 B at 8"),
            std::string::npos)
      << jump.why_not;
  // Timelines whose steps differ (another order at another value) have no common law.
  auto differ = timelines_of(four, {[](int64_t x) { return x; }});
  differ[2].steps[0].node = "other";
  EXPECT_EQ(peak_law(four, differ).why_not, "the steps differ between the swept values");
}

TEST(GraphProgram, SweepGivesThePeakLaw) {
  Model m = build(chain());
  const DimSweep s = sweep_dim(m.graph, {}, "N", {1, 2, 8, 32});
  ASSERT_TRUE(s.total_peak_law.exact) << s.total_peak_law.why_not;
  ASSERT_EQ(s.total_peak_law.pieces.size(), 1u);
  EXPECT_EQ(s.total_peak_law.pieces[0].to_string("N"), "96*N");
  EXPECT_FALSE(sweep_dim(m.graph, {}, "N", {8, 2, 1, 32}).total_peak_law.exact)
      << "values out of order";
}

TEST(GraphProgram, FitLineRejectsCurves) {
  EXPECT_FALSE(fit_line({1, 2, 3}, {1, 4, 9}).linear);
  EXPECT_TRUE(fit_line({1, 2, 3}, {5, 7, 9}).linear);
  EXPECT_FALSE(fit_line({1}, {5}).linear);
}

TEST(GraphProgram, ConstantNodesAreWeightsNotSteps) {
  Wire value;
  value.int_field(1, 2).int_field(2, 1).str(8, "c");
  const std::vector<float> two = {1, 2};
  value.bytes_field(9, std::as_bytes(std::span<const float>(two)));
  Wire attr;
  attr.str(1, "value").msg(5, value).int_field(20, 4);
  Wire constant = testing::node("Constant", {}, {"c"}, "const");
  constant.msg(5, attr);
  Wire g;
  g.msg(11, value_info("x", {"2"}));
  g.msg(1, constant);
  g.msg(1, testing::node("Add", {"x", "c"}, {"y"}, "add"));
  g.msg(13, value_info("c", {"2"}));
  g.msg(12, value_info("y", {"2"}));
  Model m = build(g);
  const GraphProgram p = build_program(m.graph);
  EXPECT_EQ(p.constant_nodes, 1u);
  ASSERT_EQ(p.program.steps.size(), 1u);
  EXPECT_EQ(simulate(p.program).weights_bytes, 8u);
}

TEST(GraphProgram, IfBranchesAreAnalysedAndTheLargerCounts) {
  auto branch = [](const char* name, int hidden) {
    Wire b;
    b.str(2, name);
    b.msg(1, testing::node("Relu", {"x"}, {std::string(name) + "_h"}, "h"));
    b.msg(1, testing::node("Neg", {std::string(name) + "_h"}, {std::string(name) + "_o"}, "o"));
    b.msg(13, value_info(std::string(name) + "_h", {std::to_string(hidden)}));
    b.msg(12, value_info(std::string(name) + "_o", {std::to_string(hidden)}));
    return b;
  };
  Wire if_node = testing::node("If", {"cond"}, {"y"}, "branch");
  if_node.msg(5, Wire().str(1, "then_branch").msg(6, branch("then", 100)).int_field(20, 5));
  if_node.msg(5, Wire().str(1, "else_branch").msg(6, branch("else", 10)).int_field(20, 5));
  Wire g;
  g.msg(11, value_info("x", {"100"}));
  Wire cond_type;
  cond_type.int_field(1, 9).msg(2, Wire());
  g.msg(11, Wire().str(1, "cond").msg(2, Wire().msg(1, cond_type)));
  g.msg(1, if_node);
  g.msg(12, value_info("y", {"100"}));
  Model m = build(g);
  const GraphProgram p = build_program(m.graph);
  ASSERT_EQ(p.subgraphs.size(), 2u);
  EXPECT_EQ(p.subgraphs[0].attribute, "then_branch");
  EXPECT_EQ(p.subgraphs[0].lower_bound_bytes, 400u);
  EXPECT_EQ(p.subgraphs[1].lower_bound_bytes, 40u);
  const Timeline t = simulate(p.program);
  EXPECT_EQ(t.steps[0].workspace_bytes, 400u) << "the larger branch is the If step's scratch";
}

// A tensor whose extents depend on values is counted at its bound, and says what bounds it.
TEST(GraphProgram, DataDependentSizesAreCountedAtTheirBounds) {
  Wire g;
  g.msg(11, value_info("x", {"N", "8"}));
  g.msg(1, testing::node("NonZero", {"x"}, {"nz"}, "find"));
  g.msg(1, testing::node("Neg", {"nz"}, {"y"}, "neg"));
  g.msg(12, Wire().str(1, "y"));
  Model m = testing::build_graph(g, true);
  GraphProgramOptions options;
  options.dims["N"] = 4;
  const GraphProgram p = build_program(m.graph, options);
  const auto nz = *m.graph.find("nz");
  EXPECT_EQ(p.program.tensors[nz].bytes, 2u * 32u * 8u) << "2 x at most 4*8 int64 indices";
  EXPECT_EQ(p.program.tensors[nz].bound_by, "'find' (NonZero)");
  EXPECT_EQ(p.program.tensors[*m.graph.find("x")].bound_by, "") << "exact sizes carry no bound";
  ASSERT_EQ(p.bounded.size(), 2u);
  EXPECT_EQ(p.bounded[0].tensor, "nz");
  EXPECT_EQ(p.bounded[1].tensor, "y");
  const Timeline t = simulate(p.program);
  EXPECT_EQ(t.outputs_bytes, 512u);
}

std::string program_error(const Wire& g) {
  Model m = testing::build_graph(g, true);
  try {
    build_program(m.graph);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// No figure is computed from a size taken as 0: the first unknown size fails, naming the tensor,
// the node whose values it depends on, and that nothing bounds it.
TEST(GraphProgram, AnUnknownSizeIsAnErrorNamingItsProducer) {
  Wire g;
  g.msg(11, value_info("x", {"6"}));
  Wire shape_type;
  shape_type.int_field(1, 7).msg(2, Wire().msg(1, Wire().int_field(1, 2)));
  g.msg(11, Wire().str(1, "s").msg(2, Wire().msg(1, shape_type)));
  g.msg(1, testing::node("Reshape", {"x", "s"}, {"r"}, "reshape"));
  g.msg(1, testing::node("Neg", {"r"}, {"y"}, "neg"));
  g.msg(12, Wire().str(1, "y"));
  const std::string e = program_error(g);
  EXPECT_NE(e.find("size of 'r' (float[?,?]) is unknown"), std::string::npos) << e;
  EXPECT_NE(e.find("node 'reshape' (Reshape)"), std::string::npos) << e;
  EXPECT_NE(e.find("declares no bound"), std::string::npos) << e;
}

TEST(GraphProgram, AnInputDimWithoutANameAsksForItsShape) {
  Wire g;
  Wire tensor_type;
  tensor_type.int_field(1, 1).msg(2, Wire().msg(1, Wire().int_field(1, 1)).msg(1, Wire()));
  g.msg(11, Wire().str(1, "audio").msg(2, Wire().msg(1, tensor_type)));
  g.msg(1, testing::node("Neg", {"audio"}, {"y"}, "neg"));
  g.msg(12, Wire().str(1, "y"));
  const std::string e = program_error(g);
  EXPECT_NE(e.find("size of 'audio' (float[1,?]) is unknown"), std::string::npos) << e;
  EXPECT_NE(e.find("--shape audio="), std::string::npos) << e;
}

}  // namespace
}  // namespace footprint::analysis
