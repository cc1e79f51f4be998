// Reads a model with footprint's reader and writes it back with footprint's writer, so other
// tools (onnxruntime-node in bench/ort_writer_check.sh) can be asked whether they accept it.
//
//   rewrite_model IN.onnx OUT.onnx
#include <cstdio>
#include <exception>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/graph_export.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/writer.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: rewrite_model IN.onnx OUT.onnx\n");
    return 2;
  }
  try {
    const auto model = footprint::graph::load_model(argv[1]);
    // Through the graph IR and back, as every later tool (fold, builder export) will write.
    const auto g = model.graph(footprint::graph::OpRegistry::builtin());
    const auto exported = footprint::graph::export_onnx(g);
    footprint::onnx::write_model_file(exported.proto(), argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rewrite_model: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
