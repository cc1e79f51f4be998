#pragma once
// Re-batching a model exported with a fixed batch: the leading extent its inputs share becomes a
// named dim, so `--dim batch=8` and `--sweep batch=1,8,32` apply to a model stored at batch 1.
//
//   auto g = graph::Graph::from_onnx(model);              // data_0 float[1,3,224,224]
//   const graph::Rebatch r = graph::rebatch(g, "batch");  // data_0 float[batch,3,224,224]
//   r.note();  // "re-batched: leading dim of 1 input and 1 Reshape made 'batch'"
//
// Besides the inputs, each Reshape whose shape is a constant (an initializer or a Constant's
// `value`) starting with the old batch gets that entry rewritten: 0 (copy the input's leading
// dim) where that dim is the batch and allowzero is 0, else -1 where the shape has no other -1
// and the input's size follows the batch. The graph owns the rewritten constants
// (Graph::replace_constant), so analysis, planning and the runtime all read them. Declared
// leading dims equal to the old batch (graph outputs, value_info) are dropped: they would pin
// the batch again.
//
// The result is checked: shapes are inferred with the batch symbolic and every graph output's
// leading dim must come out as the batch at two values of it; otherwise footprint::Error names
// the node that fixes it ("net.onnx: cannot re-batch: node 'fc' (Reshape) fixes the leading dim
// to 1"). The graph's inferred shapes are left as they were before the check.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "footprint/core/shape.hpp"
#include "footprint/graph/graph.hpp"

namespace footprint::graph {

// The name whose binding (--dim batch=8) re-batches a model that does not name it.
inline constexpr std::string_view kBatchDim = "batch";

struct Rebatch {
  std::string dim;
  int64_t from = 0;     // the leading extent the model was stored with
  size_t inputs = 0;    // inputs whose leading dim became `dim`
  size_t reshapes = 0;  // Reshape nodes whose shape constant was rewritten
  // "re-batched: leading dim of 1 input and 1 Reshape made 'batch'"
  std::string note() const;
};

// Whether binding `dim` on g takes re-batching: no input's shape names it, and every input of
// rank 1 or more is ranked with a known leading extent (a model with a symbolic batch is left
// alone).
bool needs_rebatch(const Graph& g, std::string_view dim);

// Makes the inputs' common leading extent the named dim `dim` (see above). Throws
// footprint::Error naming the model and the inputs or node at fault when the inputs' leading
// extents differ or the batch stays pinned.
Rebatch rebatch(Graph& g, std::string_view dim);

// What the commands share: re-batches g under kBatchDim when `dims` binds it and
// needs_rebatch(g, kBatchDim); nullopt when g is left as stored.
std::optional<Rebatch> rebatch_if_bound(Graph& g, const DimBindings& dims);

}  // namespace footprint::graph
