#pragma once
// A node's context as the runner builds it: its tensors at their planned extents, then pointed
// at the values' addresses (Placement::point) before it is prepared, evaluated or run.
#include <memory>
#include <span>

#include "bounded_extents.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/node_runner.hpp"

namespace footprint::runtime::runner {

// Node `id`'s context, no tensor pointed yet; throws naming the node when a tensor's extents are
// not known before running. `subgraphs` runs the node's branches.
std::unique_ptr<graph::NodeContext> make_context(const graph::Graph& g, graph::NodeId id,
                                                 const BoundedExtents& extents,
                                                 graph::SubgraphRunner* subgraphs);

// Points every present tensor of `ctx` at its value's address (`pointers`, per value).
void point_context(graph::NodeContext& ctx, std::span<void* const> pointers);

}  // namespace footprint::runtime::runner
