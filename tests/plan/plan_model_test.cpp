// `footprint plan MODEL.onnx`: the model's activations and workspace planned in one arena, never
// below the timeline's lower bound, and every plan valid.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_runner.hpp"
#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/plan/planner.hpp"
#include "footprint/plan/validate.hpp"
#include "graph/shared_inputs.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

nlohmann::json plan_json(const std::string& args) {
  const CliRun r = run("plan --json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(PlanModel, ExampleModelFollowsTheContract) {
  testing::TempDir dir;
  const auto out = dir.path() / "plan.csv";
  const auto j = plan_json("--algo exact -o " + out.string() + " " + FOOTPRINT_EXAMPLE_MODEL);
  for (const char* key : {"algo", "arena_bytes", "lower_bound_bytes", "buffers", "solve_ms",
                          "optimal", "model", "order"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["order"], "stored");
  EXPECT_GT(j["buffers"].get<int>(), 0);
  // The planner's bound is the timeline's (64-byte buffers), and a small model reaches it.
  EXPECT_EQ(j["lower_bound_bytes"], j["timeline_lower_bound_arena_bytes"]);
  EXPECT_EQ(j["arena_bytes"], j["lower_bound_bytes"]);
  EXPECT_EQ(j["optimal"], true);
  // Every offset is 64-aligned.
  const auto bytes = testing::read_file(out);
  std::istringstream lines(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "id,lower,upper,size,offset");
  int rows = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(std::stoll(line.substr(line.rfind(',') + 1)) % 64, 0) << line;
    ++rows;
  }
  EXPECT_EQ(rows, j["buffers"].get<int>());
}

TEST(PlanModel, MemoryOrderIsReported) {
  const auto j = plan_json(std::string("--order memory --dim N=4 ") + FOOTPRINT_EXAMPLE_MODEL);
  EXPECT_EQ(j["order"], "memory");
  ASSERT_TRUE(j.contains("stored_lower_bound_bytes"));
  EXPECT_LE(j["timeline_lower_bound_bytes"].get<uint64_t>(),
            j["stored_lower_bound_bytes"].get<uint64_t>());
}

// Workspace is planned as a one-step buffer beside the activations.
TEST(PlanModel, BuffersCarryRoundedSizesAndHalfOpenLifetimes) {
  analysis::MemoryProgram p;
  p.tensors = {{"x", 10, analysis::Category::inputs, -1, false},
               {"a", 100, analysis::Category::activations, -1, false},
               {"y", 4, analysis::Category::outputs, -1, false}};
  p.steps = {{"s0", "Op", {0}, {1}, 0, false, {}}, {"s1", "Op", {1}, {2}, 70, false, {}}};
  const analysis::Timeline t = analysis::simulate(p);
  const auto b = analysis::arena_buffers(t, p);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].id, "a");
  EXPECT_EQ(b[0].lower, 0);
  EXPECT_EQ(b[0].upper, 2);
  EXPECT_EQ(b[0].size, 128);
  EXPECT_EQ(b[0].alignment, 64);
  EXPECT_EQ(b[1].id, "workspace:s1");
  EXPECT_EQ(b[1].lower, 1);
  EXPECT_EQ(b[1].upper, 2);
  EXPECT_EQ(b[1].size, 128);
  const plan::Plan plan = plan::plan_buffers(b, "exact");
  EXPECT_EQ(plan.arena_bytes, static_cast<int64_t>(t.lower_bound_arena_bytes));
  EXPECT_EQ(plan.arena_bytes, 256);
}

// Every shared model: the planned arena is valid and never below the timeline's lower bound.
TEST(PlanModel, SharedModelsPlanAtOrAboveTheLowerBound) {
  FOOTPRINT_REQUIRE_SHARED();
  for (const auto& path : testing::shared_models()) {
    SCOPED_TRACE(path.string());
    const onnx::Model model = onnx::load_file(path);
    graph::Graph g = graph::Graph::from_onnx(model, graph::OpRegistry::builtin());
    testing::bind_shared_inputs(g, path);
    graph::infer_shapes(g);
    const analysis::GraphProgram gp = analysis::build_program(g);
    const analysis::Timeline t = analysis::simulate(gp.program);
    const auto buffers = analysis::arena_buffers(t, gp.program);
    const plan::Plan p = plan::plan_buffers(buffers, "best-fit");
    EXPECT_FALSE(plan::find_violation(buffers, p.offsets));
    EXPECT_GE(p.arena_bytes, static_cast<int64_t>(t.lower_bound_arena_bytes));
    EXPECT_EQ(p.lower_bound_bytes, static_cast<int64_t>(t.lower_bound_arena_bytes));
  }
}

TEST(PlanModel, OneSharedModelThroughTheCommand) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto path = testing::shared_dir() / "models/light/squeezenet/model.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  const auto j = plan_json("--algo auto " + path.string());
  EXPECT_GE(j["arena_bytes"].get<int64_t>(), j["timeline_lower_bound_arena_bytes"].get<int64_t>());
  EXPECT_EQ(j["model"], path.string());
}

}  // namespace
}  // namespace footprint
