// Every graph output comes back in memory of its own, and the analysis counts it there: an output
// that views an input (Identity of an input, a sequence element passed through), a weight or
// another output is a copy the run allocates, so the predicted output bytes are the measured
// ones, whatever the output views.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

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

struct Case {
  std::string name;
  Wire graph;
  uint64_t returned_bytes;  // what the outputs hold, each counted once per output
};

// x: float[2,3] (24 B). Each case returns it, or what views it, in another way.
std::vector<Case> cases() {
  std::vector<Case> out;
  const auto x = [] {
    Wire g;
    g.str(2, "g").msg(11, tensor_info("x", DType::float32, {2, 3}));
    return g;
  };
  {
    Wire g = x();
    g.msg(1, node("Identity", {"x"}, {"y"}, "id")).msg(12, output("y"));
    out.push_back({"an Identity of an input", g, 24});
  }
  {
    Wire g = x();
    g.msg(1, node("Relu", {"x"}, {"a"}, "relu"));
    g.msg(12, output("x")).msg(12, output("a"));
    out.push_back({"an input returned as it is (and a Relu)", g, 48});
  }
  {
    Wire g = x();
    g.msg(5, int64_tensor("s", {1}, {6}));
    g.msg(1, node("Reshape", {"x", "s"}, {"y"}, "flat")).msg(12, output("y"));
    out.push_back({"a Reshape of an input", g, 24});
  }
  {
    Wire g = x();
    g.msg(5, int64_tensor("s", {1}, {6}));
    g.msg(1, node("Relu", {"x"}, {"a"}, "relu"));
    g.msg(1, node("Reshape", {"a", "s"}, {"b"}, "flat"));
    g.msg(12, output("a")).msg(12, output("b"));
    out.push_back({"an output and a view of it", g, 48});
  }
  {
    Wire g = x();
    g.msg(5, int64_tensor("s", {1}, {6}));
    g.msg(1, node("Relu", {"x"}, {"a"}, "relu"));
    g.msg(1, node("Reshape", {"a", "s"}, {"b"}, "flat"));
    g.msg(1, node("Identity", {"a"}, {"c"}, "id"));
    g.msg(12, output("b")).msg(12, output("c"));
    out.push_back({"two views of one activation", g, 48});
  }
  return out;
}

TEST(ReturnedOutputs, EveryOutputIsCountedWhereTheRunAllocatesIt) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const graph::Model model = graph::load_model(onnx::ModelSource::adopt(model_bytes(c.graph)));
    runtime::Session session(model);
    std::vector<runtime::Tensor> in;
    in.emplace_back("x", DType::float32, std::vector<int64_t>{2, 3});
    const float xs[6] = {-2, -1, 0, 1, 2, 3};
    std::memcpy(in[0].data(), xs, sizeof xs);
    const auto out = session.run(in);
    uint64_t returned = 0;
    for (const runtime::Tensor& t : out) {
      returned += t.bytes();
      // Each output holds x or its Relu, whatever its shape: the copy was made.
      const auto v = t.ref().span<const float>();
      ASSERT_EQ(v.size(), 6u);
      for (size_t i = 0; i < 6; ++i) {
        const bool relu = t.name() != "x" && c.name.find("of an input") == std::string::npos;
        const float want = relu ? std::max(xs[i], 0.F) : xs[i];
        EXPECT_EQ(v[i], want) << t.name() << " element " << i;
      }
    }
    EXPECT_EQ(returned, c.returned_bytes);
    EXPECT_EQ(session.last_run().output_bytes, c.returned_bytes);
    EXPECT_EQ(session.prepared().outputs_bytes, c.returned_bytes)
        << "the analysis counts what the run hands back";
    EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
  }
}

// A constant output (Shape of an input of fixed extents, folded when preparing) is no step's:
// the run copies it after its last step, into memory of its own, and the analysis counts that.
TEST(ReturnedOutputs, AConstantOutputIsCountedAsTheCopyTheRunReturns) {
  Wire g;
  g.str(2, "g").msg(11, tensor_info("x", DType::float32, {2, 3}));
  g.msg(1, node("Shape", {"x"}, {"s"}, "shape")).msg(1, node("Relu", {"x"}, {"y"}, "relu"));
  g.msg(12, output("s")).msg(12, output("y"));
  const graph::Model model = graph::load_model(onnx::ModelSource::adopt(model_bytes(g)));
  runtime::Session session(model);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{2, 3});
  std::memset(in[0].data(), 0, in[0].bytes());
  const auto out = session.run(in);
  ASSERT_EQ(out.size(), 2u);
  const auto shape = out[0].ref().span<const int64_t>();
  EXPECT_EQ(std::vector<int64_t>(shape.begin(), shape.end()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(session.last_run().output_bytes, 16u + 24u);
  EXPECT_EQ(session.prepared().outputs_bytes, 16u + 24u);
}

}  // namespace
