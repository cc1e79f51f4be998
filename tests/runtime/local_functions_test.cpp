// Model-local functions (FunctionProto) are inlined where they are called: their bodies' nodes
// stand in the graph, the body's values under a prefix of their own, attributes that refer to
// the call's (ref_attr_name) given by the call or defaulted by the function, nested calls
// inlined in turn; a function that calls itself or holds a subgraph is refused naming it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "graph/infer_builder.hpp"

using namespace footprint;
using footprint::testing::attr_float;
using footprint::testing::attr_graph;
using footprint::testing::node;
using footprint::testing::node_with;
using footprint::testing::Wire;

namespace {

// An attribute of a function body that takes the call's attribute `ref` (a float).
Wire ref_float(std::string_view name, std::string_view ref) {
  return Wire().str(1, name).int_field(20, 1).str(21, ref);
}

Wire opset(std::string_view domain, int64_t version) {
  return Wire().str(1, domain).int_field(2, version);
}

// local::Double(a) -> b = a + a; local::LeakyTwice(a) -> b = Double(LeakyRelu(a, alpha = the
// call's alpha, default 0.1)).
Wire double_function() {
  Wire f;
  f.str(1, "Double").str(4, "a").str(5, "b").str(10, "local");
  f.msg(7, node("Add", {"a", "a"}, {"b"}, "sum"));
  f.msg(9, opset("", 18));
  return f;
}

Wire leaky_twice_function() {
  Wire f;
  f.str(1, "LeakyTwice").str(4, "a").str(5, "b").str(6, "alpha").str(10, "local");
  f.msg(7, node_with("LeakyRelu", {"a"}, {"t"}, {ref_float("alpha", "alpha")}, "leaky"));
  f.msg(7, node("Double", {"t"}, {"b"}, "twice").str(7, "local"));
  f.msg(11, attr_float("alpha", 0.1F));  // the default
  f.msg(9, opset("", 18)).msg(9, opset("local", 1));
  return f;
}

std::vector<std::byte> model_bytes(const Wire& graph, const std::vector<Wire>& functions) {
  Wire m;
  m.int_field(1, 10).msg(8, opset("", 18)).msg(8, opset("local", 1)).msg(7, graph);
  for (const Wire& f : functions) m.msg(25, f);
  return m.bytes();
}

// y = LeakyTwice(LeakyTwice(x, alpha = 0.5)) with the second call's alpha defaulted.
std::vector<std::byte> two_calls() {
  Wire g;
  g.str(2, "g").msg(11, footprint::testing::tensor_info("x", DType::float32, {2, 3}));
  g.msg(
      1,
      node_with("LeakyTwice", {"x"}, {"h"}, {attr_float("alpha", 0.5F)}, "first").str(7, "local"));
  g.msg(1, node("LeakyTwice", {"h"}, {"y"}, "second").str(7, "local"));
  g.msg(12, footprint::testing::output("y"));
  return model_bytes(g, {double_function(), leaky_twice_function()});
}

}  // namespace

TEST(LocalFunctions, CallsAreInlinedAttributesResolvedAndTheModelRunsAsItsBodies) {
  const graph::Model model = graph::load_model(onnx::ModelSource::adopt(two_calls(), "f.onnx"));
  runtime::Session session(model);
  std::vector<runtime::Tensor> in;
  in.emplace_back("x", DType::float32, std::vector<int64_t>{2, 3});
  const float xs[6] = {-2, -1, 0, 1, 2, 3};
  std::copy(xs, xs + 6, in[0].ref().span<float>().begin());
  const auto out = session.run(in);
  ASSERT_EQ(out.size(), 1u);
  // First call: LeakyRelu at 0.5, doubled: -2 -1 0 2 4 6; second at the default 0.1, doubled.
  const auto y = out[0].ref().span<const float>();
  const std::vector<float> want{-0.4F, -0.2F, 0, 4, 8, 12};
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(y[i], want[i]) << i;
  EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);

  const graph::Graph g = model.graph(runtime::op_registry());
  EXPECT_EQ(g.inlined_function_calls(), 4u) << "two LeakyTwice calls, each calling Double";
  std::vector<std::string> names;
  for (const graph::Node& n : g.nodes()) names.push_back(n.name + ":" + n.op_type);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "LeakyTwice#0/leaky:LeakyRelu", "LeakyTwice#0/Double#1/sum:Add",
                       "LeakyTwice#2/leaky:LeakyRelu", "LeakyTwice#2/Double#3/sum:Add"}));
}

TEST(LocalFunctions, AFunctionThatCallsItselfOrHoldsASubgraphIsRefusedByName) {
  Wire rec;
  rec.str(1, "Rec").str(4, "a").str(5, "b").str(10, "local");
  rec.msg(7, node("Rec", {"a"}, {"b"}, "again").str(7, "local"));
  Wire g;
  g.str(2, "g").msg(11, footprint::testing::tensor_info("x", DType::float32, {2}));
  g.msg(1, node("Rec", {"x"}, {"y"}, "call").str(7, "local"));
  g.msg(12, footprint::testing::output("y"));
  try {
    const graph::Model m = graph::load_model(onnx::ModelSource::adopt(model_bytes(g, {rec}), "r"));
    (void)m.graph(runtime::op_registry());
    ADD_FAILURE() << "a recursive function loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("function 'local::Rec' calls itself"), std::string::npos)
        << e.what();
  }

  Wire branch;
  branch.str(2, "then")
      .msg(1, node("Identity", {"a"}, {"t"}))
      .msg(12, footprint::testing::output("t"));
  Wire holds;
  holds.str(1, "Holds").str(4, "a").str(4, "c").str(5, "b").str(10, "local");
  holds.msg(7, node_with("If", {"c"}, {"b"},
                         {attr_graph("then_branch", branch), attr_graph("else_branch", branch)},
                         "branch"));
  Wire g2;
  g2.str(2, "g").msg(11, footprint::testing::tensor_info("x", DType::float32, {2}));
  g2.msg(11, footprint::testing::tensor_info("c", DType::boolean, {}));
  g2.msg(1, node("Holds", {"x", "c"}, {"y"}, "call").str(7, "local"));
  g2.msg(12, footprint::testing::output("y"));
  try {
    const graph::Model m =
        graph::load_model(onnx::ModelSource::adopt(model_bytes(g2, {holds}), "h"));
    (void)m.graph(runtime::op_registry());
    ADD_FAILURE() << "a function holding a subgraph loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds a subgraph"), std::string::npos) << e.what();
  }
}
