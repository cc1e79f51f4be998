#pragma once
// Constant folding of a model: every node whose inputs are all constants (initializers, Constant,
// results of other folded nodes) is evaluated with the registry's kernels and replaced by an
// initializer holding its result; the rest of the graph is written unchanged.
//
//   const graph::Model model = graph::load_model("vgg19.onnx");
//   auto r = graph::fold_model(model.onnx(), runtime::op_registry(), "vgg19.folded.onnx",
//                              {.external_data = true});
//   r.folded_nodes; r.weight_bytes;
//
// Memory: nodes are evaluated in topological order on the heap, and each intermediate constant is
// released right after its last folded consumer, so folding holds the kept results plus what one
// node has in flight. With external_data each kept result is appended to the data file (at a
// 64-byte aligned offset, so a reader can map it in place) as soon as it is computed and released
// after its last folded use, so the whole fold holds little more than the largest node's inputs
// and outputs. Without it the kept results stay in memory until the model is written, and the
// writer streams them from there (never gathered into one buffer).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/model.hpp"

namespace footprint::graph {

struct FoldOptions {
  // A constant with more bytes than this stays computed at run time (its node is kept).
  uint64_t max_fold_bytes = std::numeric_limits<uint64_t>::max();
  // Write initializers of at least external_min_bytes into OUT.data next to the model.
  bool external_data = false;
  uint64_t external_min_bytes = 1024;
  int threads = 1;
};

// Why nodes were not folded: how many, and the first such node ("'Mul_3' (Mul)").
struct KeptReason {
  std::string reason;  // "read values known only when running", "no kernel", ...
  size_t nodes = 0;
  std::string first;
};

struct FoldReport {
  size_t folded_nodes = 0;
  size_t kept_nodes = 0;
  // Every kept node under one reason, in the order the reasons first occur.
  std::vector<KeptReason> kept;
  size_t folded_initializers = 0;        // new initializers, one per kept folded value
  uint64_t folded_bytes = 0;             // their bytes
  uint64_t weight_bytes = 0;             // every initializer of the output
  uint64_t largest_in_flight_bytes = 0;  // folded values held at once, at most
  std::filesystem::path data_file;       // empty without external data
};

// Folds `model` and writes the result to `out` (atomically; with external data also
// `out` + ".data"). `registry` must have kernels (runtime::op_registry()). Throws footprint::Error
// naming the node that cannot be evaluated or the file that cannot be written.
FoldReport fold_model(const onnx::Model& model, const OpRegistry& registry,
                      const std::filesystem::path& out, const FoldOptions& options = {});

}  // namespace footprint::graph
