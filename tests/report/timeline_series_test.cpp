// The timeline as chart series: categories add up to each step's total exactly, outputs
// accumulate from their producers, and downsampling keeps every series' peak.
#include "footprint/report/timeline_series.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/trace_format.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"

namespace footprint::report {
namespace {

using analysis::Category;

const std::string kTraces = std::string(FOOTPRINT_SOURCE_DIR) + "/examples/traces/";

// A step reading `inputs` and writing `outputs`, nothing else set.
analysis::ProgramStep step(std::string name, std::string op, std::vector<int> inputs,
                           std::vector<int> outputs) {
  analysis::ProgramStep s;
  s.name = std::move(name);
  s.op = std::move(op);
  s.inputs = std::move(inputs);
  s.outputs = std::move(outputs);
  return s;
}

void expect_sums_match(const analysis::Timeline& t, const std::vector<CategoryBytes>& c) {
  ASSERT_EQ(c.size(), t.steps.size());
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c[i].total(), t.steps[i].total_bytes) << "step " << i;
    EXPECT_EQ(c[i].activations + c[i].workspace, t.steps[i].live_bytes) << "step " << i;
    EXPECT_EQ(c[i].weights, t.weights_bytes);
  }
}

TEST(TimelineSeries, SeedListSplitsInputsAndOutputs) {
  // Donated arguments (16 B each) are freed one per step; the gradients accumulate as outputs.
  const analysis::Trace trace = analysis::read_trace_file(kTraces + "seed_mul_list.json");
  const analysis::Timeline t = analysis::simulate(trace.program);
  const std::vector<CategoryBytes> c = bytes_by_category(t, trace.program);
  expect_sums_match(t, c);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].inputs, 80u);
  EXPECT_EQ(c[0].activations, 16u) << "t3";
  EXPECT_EQ(c[0].outputs, 0u);
  EXPECT_EQ(c[1].inputs, 64u) << "z freed after step 0";
  EXPECT_EQ(c[1].outputs, 16u) << "grad_z";
  EXPECT_EQ(c[3].outputs, 48u) << "all three gradients";
}

TEST(TimelineSeries, SeedTupleKeepsTheCallersInputs) {
  const analysis::Trace trace = analysis::read_trace_file(kTraces + "seed_mul_tuple.json");
  const analysis::Timeline t = analysis::simulate(trace.program);
  const std::vector<CategoryBytes> c = bytes_by_category(t, trace.program);
  expect_sums_match(t, c);
  for (const CategoryBytes& s : c) EXPECT_EQ(s.inputs, 80u);
}

TEST(TimelineSeries, ExampleModelAddsUp) {
  const onnx::Model model = onnx::load_file(FOOTPRINT_EXAMPLE_MODEL);
  graph::Graph g = graph::Graph::from_onnx(model, graph::OpRegistry::builtin());
  graph::infer_shapes(g);
  analysis::GraphProgramOptions options;
  options.dims["N"] = 4;
  const analysis::GraphProgram p = analysis::build_program(g, options);
  const analysis::Timeline t = analysis::simulate(p.program);
  const std::vector<CategoryBytes> c = bytes_by_category(t, p.program);
  expect_sums_match(t, c);
  EXPECT_GT(c.front().weights, 0u);
  EXPECT_EQ(c.back().outputs, t.outputs_bytes);
  EXPECT_EQ(c.front().inputs, t.inputs_bytes) << "caller-held input";
}

TEST(TimelineSeries, AnOutputViewingAnActivationCountsFromItsProducer) {
  analysis::MemoryProgram p;
  p.tensors = {{"x", 100, Category::inputs},
               {"a", 64, Category::activations},
               {"b", 32, Category::activations},
               {"y", 0, Category::outputs, /*view_of=*/1}};
  p.steps = {step("a = f(x)", "f", {0}, {1}), step("b = g(a)", "g", {1}, {2}),
             step("y = a.view", "view", {1}, {3})};
  const analysis::Timeline t = analysis::simulate(p);
  const std::vector<CategoryBytes> c = bytes_by_category(t, p);
  expect_sums_match(t, c);
  EXPECT_EQ(c[0].outputs, 64u) << "a's buffer is y's storage from the step that writes it";
  EXPECT_EQ(c[0].inputs, 100u);
  EXPECT_EQ(c[1].activations, 32u);
}

TEST(TimelineSeries, SmallSeriesAreDrawnWhole) {
  const std::vector<uint64_t> v = {5, 1, 7};
  EXPECT_EQ(downsample({v}, 3), (std::vector<size_t>{0, 1, 2}));
  EXPECT_TRUE(downsample({std::vector<uint64_t>{}}, 10).empty());
}

TEST(TimelineSeries, DownsamplingKeepsEveryPeakAndEveryRun) {
  const size_t n = 100000, buckets = 2000;
  std::vector<uint64_t> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = (i * 7919) % 1000;  // noisy
    b[i] = i % 5000;           // sawtooth, peaks elsewhere
  }
  a[31337] = 5000;  // the one peak of a
  b[77777] = 9000;  // and of b
  const std::vector<size_t> d = downsample({a, b}, buckets);
  EXPECT_LE(d.size(), 2 * buckets + 2);
  EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
  EXPECT_EQ(std::adjacent_find(d.begin(), d.end()), d.end()) << "no duplicates";
  EXPECT_EQ(d.front(), 0u);
  EXPECT_EQ(d.back(), n - 1);
  EXPECT_TRUE(std::binary_search(d.begin(), d.end(), size_t{31337}));
  EXPECT_TRUE(std::binary_search(d.begin(), d.end(), size_t{77777}));
  // No gap wider than two runs: every run has a point.
  for (size_t i = 1; i < d.size(); ++i) EXPECT_LT(d[i] - d[i - 1], 2 * n / buckets) << i;
}

}  // namespace
}  // namespace footprint::report
