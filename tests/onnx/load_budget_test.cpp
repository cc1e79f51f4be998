// Loading costs memory in proportion to the model's structure, never to its weights: a small
// model fits a heap twice its size, and a model with >= 500 MB of weights loads with a heap of a
// few hundred bytes per node.
#include <gtest/gtest.h>

#include <cstdio>

#include "footprint/core/counting_resource.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/tensor_file.hpp"
#include "footprint/onnx/writer.hpp"
#include "test_support.hpp"
#include "tiny_cnn.hpp"

namespace footprint {
namespace {

TEST(LoadBudget, SmallModelFitsInTwiceItsSize) {
  const auto bytes = examples::make_tiny_cnn();
  ASSERT_GT(bytes.size(), 3000u);
  ASSERT_LT(bytes.size(), 5000u);
  CountingResource budget(2 * bytes.size());
  auto m = onnx::load(onnx::ModelSource::borrow(bytes, "tiny_cnn"), {.memory = &budget});
  EXPECT_EQ(m.graph().nodes.size(), 6u);
  EXPECT_EQ(budget.refused(), 0u);
  std::printf("tiny_cnn: %zu bytes, load peak %llu bytes (%.2fx) in %llu allocations\n",
              bytes.size(), static_cast<unsigned long long>(budget.peak_bytes()),
              static_cast<double>(budget.peak_bytes()) / static_cast<double>(bytes.size()),
              static_cast<unsigned long long>(budget.allocations()));
}

TEST(LoadBudget, SmallModelRefusedBelowItsNeedFailsCleanly) {
  const auto bytes = examples::make_tiny_cnn();
  CountingResource budget(bytes.size() / 4);
  EXPECT_THROW(onnx::load(onnx::ModelSource::borrow(bytes), {.memory = &budget}), std::bad_alloc);
  EXPECT_EQ(budget.current_bytes(), 0u) << "everything taken before the refusal is returned";
}

// A chain of MatMul+Relu over `layers` 1024x1024 float weights (4 MiB each), all viewing one
// buffer, written with the streaming writer.
std::filesystem::path write_big_model(const std::filesystem::path& dir, int layers) {
  BumpArena arena;
  std::vector<float> weight(1024 * 1024);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<float>(i % 251) / 251.0f;
  const auto payload = std::as_bytes(std::span<const float>(weight));
  const std::array<int64_t, 2> dims = {1024, 1024};
  auto inits = arena.make_array<onnx::TensorProto>(layers);
  auto nodes = arena.make_array<onnx::NodeProto>(2 * layers);
  auto names = [&](std::string_view a) {
    auto s = arena.make_array<std::string_view>(1);
    s[0] = arena.copy(a);
    return onnx::Array<std::string_view>{s.data(), 1};
  };
  std::string prev = "x";
  for (int i = 0; i < layers; ++i) {
    const std::string w = "w" + std::to_string(i);
    inits[i] = onnx::make_tensor_view(arena, w, DType::float32, dims, payload);
    auto ins = arena.make_array<std::string_view>(2);
    ins[0] = arena.copy(prev);
    ins[1] = inits[i].name;
    nodes[2 * i].op_type = "MatMul";
    nodes[2 * i].inputs = {ins.data(), 2};
    nodes[2 * i].outputs = names("mm" + std::to_string(i));
    nodes[2 * i + 1].op_type = "Relu";
    nodes[2 * i + 1].inputs = names("mm" + std::to_string(i));
    prev = "act" + std::to_string(i);
    nodes[2 * i + 1].outputs = names(prev);
  }
  onnx::GraphProto g;
  g.name = "big";
  g.nodes = {nodes.data(), static_cast<uint32_t>(nodes.size())};
  g.initializers = {inits.data(), static_cast<uint32_t>(inits.size())};
  auto io = arena.make_array<onnx::ValueInfoProto>(2);
  io[0].name = "x";
  io[1].name = arena.copy(prev);
  g.inputs = {io.data(), 1};
  g.outputs = {io.data() + 1, 1};
  auto opset = arena.make_array<onnx::OperatorSetId>(1);
  opset[0].version = 13;
  onnx::ModelProto m;
  m.ir_version = 8;
  m.opset_import = {opset.data(), 1};
  m.graph = &g;
  const auto path = dir / "big.onnx";
  onnx::write_model_file(m, path);
  return path;
}

TEST(LoadBudget, HalfAGigabyteOfWeightsLoadsWithAStructuralHeap) {
  testing::TempDir dir;
  constexpr int kLayers = 128;  // 128 x 4 MiB = 512 MiB of initializers
  const auto path = write_big_model(dir.path(), kLayers);
  const uint64_t file_bytes = std::filesystem::file_size(path);
  ASSERT_GE(file_bytes, 500'000'000u);
  const size_t nodes = 2 * kLayers;
  // Allowed: 5% of the file plus the stated 2.5 KiB per node (docs/BENCHMARKS.md: a node costs
  // about 1.2 KB at the margin, parse tree and graph IR together; small models also carry a
  // fixed ~10 KB of containers that the per-node figure absorbs).
  const double allowed = 0.05 * static_cast<double>(file_bytes) + 2560.0 * nodes;

  {
    CountingResource from_path;
    auto m = onnx::load_file(path, {.memory = &from_path});
    EXPECT_EQ(m.graph().initializers.size(), static_cast<size_t>(kLayers));
    EXPECT_LT(static_cast<double>(from_path.peak_bytes()), allowed);
    EXPECT_LT(from_path.peak_bytes(), 1024u * nodes) << "the parse tree alone";
    std::printf("from path: parse tree peak %llu bytes = %.1f bytes/node, %.5f%% of the file\n",
                static_cast<unsigned long long>(from_path.peak_bytes()),
                static_cast<double>(from_path.peak_bytes()) / nodes,
                100.0 * static_cast<double>(from_path.peak_bytes()) / file_bytes);
  }
  if (heap::available()) {
    // The whole process heap while loading from the path and building the graph IR.
    const auto before = heap::snapshot();
    heap::reset_peak();
    {
      auto m = onnx::load_file(path);
      auto g = graph::Graph::from_onnx(m, graph::OpRegistry::builtin());
      EXPECT_EQ(g.nodes().size(), nodes);
    }
    const uint64_t peak = heap::snapshot().peak_bytes - before.current_bytes;
    EXPECT_LT(static_cast<double>(peak), allowed);
    std::printf("from path, with graph IR: process heap peak %llu bytes = %.1f bytes/node\n",
                static_cast<unsigned long long>(peak), static_cast<double>(peak) / nodes);
  }
  {
    const auto bytes = testing::read_file(path);  // the caller's bytes, e.g. already in memory
    CountingResource borrowed;
    auto m = onnx::load(onnx::ModelSource::borrow(bytes, "big"), {.memory = &borrowed});
    EXPECT_LT(static_cast<double>(borrowed.peak_bytes()), allowed);
    for (const auto& t : m.graph().initializers) {
      ASSERT_GE(t.raw_data.data(), bytes.data());
      ASSERT_LE(t.raw_data.data() + t.raw_data.size(), bytes.data() + bytes.size())
          << "payloads are views of the borrowed bytes";
    }
    std::printf("borrowed: parse tree peak %llu bytes\n",
                static_cast<unsigned long long>(borrowed.peak_bytes()));
  }
}

}  // namespace
}  // namespace footprint
