#pragma once
// Graph IR -> ONNX messages, ready for onnx::write_model_file.
//
//   auto exported = graph::export_onnx(g);
//   onnx::write_model_file(exported.proto(), "out.onnx");
//
// Payloads are not copied: initializers and attributes keep viewing the model the graph came
// from (which must outlive the export).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "footprint/core/bump_arena.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/onnx/proto.hpp"

namespace footprint::graph {

struct ExportOptions {
  // Used when the graph was not read from a model; otherwise the model's own values are kept.
  int64_t ir_version = 8;
  std::vector<std::pair<std::string, int64_t>> opsets = {{"", 17}};
  std::string producer_name = "footprint";
};

class ExportedModel {
 public:
  explicit ExportedModel(std::pmr::memory_resource* memory) : arena_(memory, 4096) {}
  const onnx::ModelProto& proto() const { return *proto_; }
  BumpArena& arena() { return arena_; }
  void set_proto(const onnx::ModelProto* p) { proto_ = p; }

 private:
  BumpArena arena_;
  const onnx::ModelProto* proto_ = nullptr;
};

// A tensor TypeProto in `arena`: symbolic dims become dim_param (their expression's text), unknown
// ones stay unset. The builder's export writes its values' types with it too.
const onnx::TypeProto* tensor_type_proto(BumpArena& arena, DType dtype, const Shape& shape);

ExportedModel export_onnx(const Graph& g, const ExportOptions& options = {},
                          std::pmr::memory_resource* memory = nullptr);

}  // namespace footprint::graph
