// The constants' bytes of the graph runner (runtime::runner::PreparedConstants): constant nodes
// evaluated once on the heap, what only preparing reads released after its last reader, and a
// constant every step reads through a packed copy released once those steps are prepared.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "planned_graph.hpp"
#include "runtime/runner/bounded_extents.hpp"
#include "runtime/runner/placement.hpp"
#include "runtime/runner/prepared_constants.hpp"

using namespace footprint;
using graph::GraphBuilder;
using graph::HostValue;
using graph::Var;
using runtime::runner::BoundedExtents;
using runtime::runner::Placement;
using runtime::runner::PreparedConstants;

namespace {

// y = x + concat(-w, -w): w float[4] (initializer) is read only by the constant Neg, whose
// result (float[4], 16 bytes) only the constant Concat reads; the Concat's (float[8], 32 bytes)
// is what the one step reads.
footprint::testing::PlannedGraph folded_weights() {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(8)});
  auto w = HostValue::make(DType::float32, {4});
  const float values[] = {1, 2, 3, 4};
  std::memcpy(w->span<float>().data(), values, sizeof(values));
  const Var negated = b.op1("Neg", {b.constant(w, "w")});
  const Var doubled = b.op1("Concat", {negated, negated}, {graph::Attr::of("axis", int64_t{0})});
  b.output(b.add(x, doubled), "y");
  return footprint::testing::plan_graph(b);
}

// The pieces a PreparedConstants reads, built as the runner builds them.
struct Prepared {
  explicit Prepared(const footprint::testing::PlannedGraph& p)
      : extents(p.graph(), {}, nullptr),
        placement(p.graph(), p.program, p.timeline, p.plan),
        pointers(p.graph().values().size(), nullptr),
        constants(p.graph(), p.program, p.timeline, extents, placement, placement.take_weights(),
                  nullptr, 1, pointers) {
    constants.evaluate_all(pointers);
  }
  BoundedExtents extents;
  Placement placement;
  std::vector<void*> pointers;
  PreparedConstants constants;
};

std::vector<float> floats_at(const std::byte* p, size_t n) {
  std::vector<float> out(n);
  if (p != nullptr) std::memcpy(out.data(), p, n * sizeof(float));
  return out;
}

}  // namespace

TEST(RunnerPreparedConstants, EvaluatesConstantsOnceAndReleasesWhatOnlyPreparingReads) {
  const auto p = folded_weights();
  const graph::Graph& g = p.graph();
  const graph::ValueId w = p.id("w");
  const graph::ValueId doubled = g.node(p.producer("y")).inputs[1];
  const graph::ValueId negated = g.node(p.producer(g.value(doubled).name)).inputs[0];
  ASSERT_TRUE(p.program.program.tensors[w].prepare_only);
  ASSERT_TRUE(p.program.program.tensors[negated].prepare_only);
  ASSERT_FALSE(p.program.program.tensors[doubled].prepare_only);
  // An initializer whose bytes are not aligned is copied (and the copy released in its turn).
  const bool w_copied =
      !onnx::readable_in_place(*g.value(w).initializer, onnx::element_alignment(DType::float32));

  const Prepared prepared(p);
  const PreparedConstants& c = prepared.constants;
  EXPECT_EQ(floats_at(c.constants()[doubled], 8),
            (std::vector<float>{-1, -2, -3, -4, -1, -2, -3, -4}));
  EXPECT_EQ(c.constants()[negated], nullptr) << "released after the Concat read it";
  EXPECT_EQ(c.constant_bytes(), 32u) << "the Concat's result alone is held";
  EXPECT_EQ(c.released_bytes(), 16u + (w_copied ? 16u : 0u));
  EXPECT_EQ(c.heap().now, 32u);
  // At most the Neg's and the Concat's results together: w (if copied) went after the Neg.
  EXPECT_EQ(c.heap().peak, 16u + 32u);
  EXPECT_EQ(c.mapped_weight_bytes(), w_copied ? 0u : 16u);
  // The owner's pointers are left at the constants, as the steps are prepared with them.
  EXPECT_EQ(prepared.pointers[doubled], c.constants()[doubled]);
}

TEST(RunnerPreparedConstants, ReleasesAConstantOnceEveryReaderReadsOnlyItsPackedCopy) {
  const auto p = folded_weights();
  const graph::Graph& g = p.graph();
  const graph::NodeId add = p.producer("y");
  const graph::ValueId doubled = g.node(add).inputs[1];
  ASSERT_EQ(p.program.step_nodes, std::vector<graph::NodeId>{add});

  {
    Prepared prepared(p);
    PreparedConstants& c = prepared.constants;
    EXPECT_EQ(c.readers().left(static_cast<size_t>(doubled)), 1);
    EXPECT_FALSE(c.readers().kept(static_cast<size_t>(doubled)));
    EXPECT_TRUE(c.readers().kept(static_cast<size_t>(p.id("y")))) << "a graph output is kept";
    // The Add reads the constant itself: kept.
    c.release_replaced(g.node(add), [](size_t) { return false; });
    EXPECT_TRUE(c.readers().kept(static_cast<size_t>(doubled)));
    EXPECT_NE(c.constants()[doubled], nullptr);
    EXPECT_EQ(c.constant_bytes(), 32u);
  }
  {
    Prepared prepared(p);
    PreparedConstants& c = prepared.constants;
    const uint64_t released = c.released_bytes();
    // Its one reader keeps a packed copy of input 1: the constant goes as soon as it is prepared.
    c.release_replaced(g.node(add), [](size_t i) { return i == 1; });
    EXPECT_EQ(c.readers().left(static_cast<size_t>(doubled)), 0);
    EXPECT_EQ(c.constants()[doubled], nullptr);
    EXPECT_EQ(c.constant_bytes(), 0u);
    EXPECT_EQ(c.released_bytes(), released + 32);
    EXPECT_EQ(c.heap().now, 0u);
  }
}
