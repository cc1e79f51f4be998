#include "footprint/graph/prepare_graph.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "footprint/graph/rebatch.hpp"
#include "passes/fold_channel_affine.hpp"
#include "passes/fuse_epilogues.hpp"
#include "passes/fuse_patterns.hpp"
#include "passes/fuse_qdq.hpp"

namespace footprint::graph {
namespace {

// What turns a pass on: always, or options.fuse (graph::fuse runs the `fusion` ones alone).
enum class Stage { always, fusion, layout };

// What prepare_graph was asked for.
struct Request {
  const DimBindings& dims;
  const PrepareOptions& options;
};

struct Pass {
  std::string_view name;
  Stage stage;
  void (*run)(Graph&, const Request&, PrepareReport&);
};

void rebatch_pass(Graph& g, const Request& q, PrepareReport& r) {
  r.rebatched = rebatch_if_bound(g, q.dims);
}

void bind_inputs_pass(Graph& g, const Request& q, PrepareReport& r) {
  if (q.options.bind != nullptr) {
    q.options.bind->bind(g, q.dims, r.dims);
    r.concrete = true;
    return;
  }
  r.dims = q.dims;
  // A sequence or optional input takes the elements --shape (or --data-dir's files) gives.
  hold_sequence_inputs(
      g, [&](const std::string& name) { return q.options.shapes.contains(name); }, false);
  r.concrete = bind_input_extents(g, q.dims, r.defaulted, q.options.shapes);
  if (q.options.values == nullptr) return;
  for (const ValueId id : g.inputs()) {
    const auto it = q.options.values->find(g.value(id).name);
    if (it != q.options.values->end()) g.mutable_value(id).known = it->second;
  }
}

// Before inference: the lowered graph holds tensors only, and a SplitToSequence's length may
// depend on the extents just bound.
void lower_sequences_pass(Graph& g, const Request& /*q*/, PrepareReport& r) {
  r.sequences = lower_sequences(g);
}

void infer_shapes_pass(Graph& g, const Request& /*q*/, PrepareReport& r) {
  r.inference = infer_shapes(g);
}

void fuse_qdq_pass(Graph& g, const Request& /*q*/, PrepareReport& r) {
  r.fused.nodes_removed += fuse_qdq(g, r.fused.patterns);
}

void fold_channel_affines_pass(Graph& g, const Request& /*q*/, PrepareReport& r) {
  r.fused.nodes_removed += fold_channel_affines(g, r.fused.patterns);
}

void fuse_patterns_pass(Graph& g, const Request& /*q*/, PrepareReport& r) {
  r.fused.nodes_removed += fuse_patterns(g, r.fused.patterns);
}

void fuse_epilogues_pass(Graph& g, const Request& /*q*/, PrepareReport& r) {
  r.fused.nodes_removed += fuse_epilogues(g, r.fused.fused);
}

// After the epilogues: the block's convolutions carry their activations by then.
void squeeze_excite_pass(Graph& g, const Request& /*q*/, PrepareReport& r) {
  const Finder blocks[] = {squeeze_excite};
  r.fused.nodes_removed += rewrite(g, blocks, r.fused.patterns);
}

// Last of the fusions: an activation a host took, or a block, is not among the runs.
void fuse_elementwise_pass(Graph& g, const Request& /*q*/, PrepareReport& r) {
  const Finder runs[] = {elementwise_chain};
  r.fused.nodes_removed += rewrite(g, runs, r.fused.patterns);
}

void channels_last_pass(Graph& g, const Request& /*q*/, PrepareReport& r) {
  r.channels_last = to_channels_last(g);
}

// After the layout, whose changes between float32 kernels then carry float32 too; nothing infers
// types after it (inference would give the 16-bit types back).
void carry_float32_pass(Graph& g, const Request& q, PrepareReport& r) {
  if (q.options.carry_float32) r.carried = carry_float32(g);
}

// The order is the pipeline: each pass relies on what the ones before it left (inference on the
// bound extents, the epilogues on folded affines and patterns, the layout on the fused nodes).
constexpr Pass kPasses[] = {
    {"rebatch", Stage::always, rebatch_pass},
    {"bind_inputs", Stage::always, bind_inputs_pass},
    {"lower_sequences", Stage::always, lower_sequences_pass},
    {"infer_shapes", Stage::always, infer_shapes_pass},
    {"fuse_qdq", Stage::fusion, fuse_qdq_pass},
    {"fold_channel_affines", Stage::fusion, fold_channel_affines_pass},
    {"fuse_patterns", Stage::fusion, fuse_patterns_pass},
    {"fuse_epilogues", Stage::fusion, fuse_epilogues_pass},
    {"squeeze_excite", Stage::fusion, squeeze_excite_pass},
    {"fuse_elementwise", Stage::fusion, fuse_elementwise_pass},
    {"channels_last", Stage::layout, channels_last_pass},
    {"carry_float32", Stage::layout, carry_float32_pass},
};

}  // namespace

PrepareReport prepare_graph(Graph& g, const DimBindings& dims, const PrepareOptions& options) {
  const bool known = options.through.empty() ||
                     std::any_of(std::begin(kPasses), std::end(kPasses),
                                 [&](const Pass& p) { return p.name == options.through; });
  if (!known) throw std::logic_error("prepare_graph: no pass " + std::string(options.through));
  PrepareReport report;
  for (const Pass& p : kPasses) {
    if (p.stage == Stage::always || options.fuse) p.run(g, {dims, options}, report);
    if (p.name == options.through) break;
  }
  return report;
}

std::vector<std::string_view> prepare_passes() {
  std::vector<std::string_view> out;
  for (const Pass& p : kPasses) out.push_back(p.name);
  return out;
}

FuseReport fuse(Graph& g) {
  const DimBindings no_dims;
  const PrepareOptions none;
  PrepareReport report;
  for (const Pass& p : kPasses) {
    if (p.stage == Stage::fusion) p.run(g, {no_dims, none}, report);
  }
  return std::move(report.fused);
}

}  // namespace footprint::graph
