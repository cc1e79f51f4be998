// Where an extent depends on an input's values (a Range to a limit given as an input, a window of
// a given size), onnxruntime computes it when running and footprint plans for the values given:
// the plan says so, holds for those values, and a run with others prepares again. A model whose
// extents do not depend on values is never planned for its values (a decode loop's token ids
// change every run).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/cli_runner.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/runtime/session.hpp"
#include "graph/infer_builder.hpp"

using namespace footprint;
using footprint::testing::int64_tensor;
using footprint::testing::model_bytes;
using footprint::testing::node;
using footprint::testing::output;
using footprint::testing::tensor_info;
using footprint::testing::Wire;

namespace {

runtime::Tensor scalar(const char* name, int64_t v) {
  runtime::Tensor t(name, DType::int64, std::vector<int64_t>{});
  std::memcpy(t.data(), &v, sizeof v);
  return t;
}

// y = -Range(0, n, 1): n an int64 scalar input.
Wire range_to_input() {
  Wire g;
  g.str(2, "g").msg(11, tensor_info("n", DType::int64, {}));
  g.msg(5, int64_tensor("zero", {}, {0})).msg(5, int64_tensor("one", {}, {1}));
  g.msg(1, node("Range", {"zero", "n", "one"}, {"r"}, "range"));
  g.msg(1, node("Neg", {"r"}, {"y"}, "neg"));
  g.msg(12, output("y"));
  return g;
}

TEST(ValuesBound, AnExtentFromAnInputsValueIsPlannedForTheValueGiven) {
  const graph::Model model =
      graph::load_model(onnx::ModelSource::adopt(model_bytes(range_to_input())));
  runtime::Session session(model);
  std::vector<runtime::Tensor> in;
  in.push_back(scalar("n", 5));
  auto out = session.run(in);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dims(), (std::vector<int64_t>{5}));
  EXPECT_EQ(out[0].ref().span<const int64_t>()[4], -4);
  EXPECT_EQ(session.prepared().bound_by_value, (std::vector<std::string>{"n"}));
  EXPECT_EQ(session.prepared().outputs_bytes, 40u);
  EXPECT_EQ(session.last_run().output_bytes, 40u);
  EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);

  in.clear();
  in.push_back(scalar("n", 3));
  out = session.run(in);  // another value: prepared again, for it
  ASSERT_EQ(out[0].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(out[0].ref().span<const int64_t>()[2], -2);
  EXPECT_EQ(session.prepared().outputs_bytes, 24u);
  EXPECT_EQ(session.last_run().output_bytes, 24u);
}

// `analyze --data-dir` computes its figures for the values the files give, as `run` plans.
TEST(ValuesBound, AnalyzeWithADataDirCountsWhatRunPlans) {
  footprint::testing::TempDir dir;
  const auto bytes = model_bytes(range_to_input());
  std::ofstream(dir.path() / "m.onnx", std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  runtime::write_tensor_file(dir.path() / "input_0.pb", scalar("n", 6));
  const std::string model = (dir.path() / "m.onnx").string();
  const CliRun a = run("analyze " + model + " --data-dir " + dir.path().string() + " --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["planned_for_values_of"], nlohmann::json::parse(R"(["n"])"));
  EXPECT_EQ(j["bytes"]["outputs"], 48);
  const CliRun r = run("run " + model + " --data-dir " + dir.path().string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto k = nlohmann::json::parse(r.out);
  EXPECT_EQ(k["planned_for_values_of"], j["planned_for_values_of"]);
  EXPECT_EQ(k["predicted"]["outputs_bytes"], 48);
  // Without the values there is no figure: an error naming the extent, never a guess.
  const CliRun none = run("analyze " + model);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("known only when running"), std::string::npos) << none.err;
}

TEST(ValuesBound, AModelWhoseExtentsDoNotDependOnValuesIsNotPlannedForThem) {
  Wire g;
  g.str(2, "g").msg(11, tensor_info("ids", DType::int64, {4}));
  g.msg(1, node("Neg", {"ids"}, {"y"}, "neg")).msg(12, output("y"));
  const graph::Model model = graph::load_model(onnx::ModelSource::adopt(model_bytes(g)));
  runtime::Session session(model);
  std::vector<runtime::Tensor> in;
  in.emplace_back("ids", DType::int64, std::vector<int64_t>{4});
  std::memset(in[0].data(), 0, in[0].bytes());
  (void)session.run(in);
  EXPECT_TRUE(session.prepared().bound_by_value.empty());
  EXPECT_EQ(session.prepared().steps, 1u) << "the Neg runs; nothing was folded for the values";
}

}  // namespace
