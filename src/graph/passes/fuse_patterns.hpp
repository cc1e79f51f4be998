#pragma once
// The op-level half of graph::fuse: ops an exporter wrote as the elementwise steps that define
// them, rewritten into the one registry row that computes them in a pass (fuse.hpp lists them).
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

// Nodes that one new node replaces: it reads `inputs`, writes `output` (the last replaced
// node's) and stands where that node stood.
struct Rewrite {
  std::vector<NodeId> nodes;  // replaced, in stored order
  std::string_view domain;
  std::string_view op;
  std::vector<ValueId> inputs;
  ValueId output = kNoValue;
  std::vector<onnx::AttributeProto> attributes;
  // Shape nodes that read a hidden tensor of the shape of shape_a's product by shape_b (the
  // scores, whose size an exporter took): each is rewritten to compute it from their shapes.
  std::vector<NodeId> shape_readers = {};
  ValueId shape_a = kNoValue, shape_b = kNoValue;
  // Non-empty: the new node's string attribute `program` (footprint::Elementwise's), which the
  // graph keeps.
  std::string program = {};
};

// Whether `v` holds real numbers (a floating dtype of any width): the patterns are real
// arithmetic (an integer Div truncates, an integer mean rounds), whatever the width. Which widths
// the row a rewrite makes runs is that row's to say (makes_runnable).
bool is_real(const Graph& g, ValueId v);
// The one node reading `v` when v is a real tensor computed here that nothing else sees (not a
// graph output); -1 otherwise. A node reading it twice (d * d) is one reader.
NodeId sole_reader(const Graph& g, ValueId v);

// The rewrite of the pattern whose last node is `id`, if any.
using Finder = std::optional<Rewrite> (*)(const Graph&, NodeId);

// Whether the rewrite's row exists and its kernel runs the dtype the rewrite would give it
// (OpSchema::kernel, kernel_dtypes; a registry without kernels constrains nothing): a float16
// LayerNorm pattern stays as the nodes it is made of where footprint's LayerNormalization runs
// float32 alone, so `run` refuses (or runs) the nodes the model has, by their names.
bool makes_runnable(const Graph& g, const Rewrite& r);

// Runs each finder over the main graph's nodes in order; a rewrite that would take a node an
// earlier one took is dropped. Applies them, appends one line per rewrite to `lines` ("Gelu
// '/mlp/Gelu' from 5 nodes: Div '/mlp/Div' ... Mul '/mlp/Mul_1'") and returns the nodes removed.
size_t rewrite(Graph& g, std::span<const Finder> finders, std::vector<std::string>& lines);

// Rewrites every pattern of the main graph (LayerNorm, GELU, attention, ...).
size_t fuse_patterns(Graph& g, std::vector<std::string>& lines);

// A squeeze-and-excitation block ending at node `id` (the Mul of x by its gate), after the
// epilogues are folded, as one footprint::SqueezeExcite (fuse_squeeze_excite.cpp).
std::optional<Rewrite> squeeze_excite(const Graph& g, NodeId id);

// A run of elementwise ops ending at node `id` (its output read by no further such op of its
// shape) as one footprint::Elementwise (fuse_elementwise.cpp).
std::optional<Rewrite> elementwise_chain(const Graph& g, NodeId id);

}  // namespace footprint::graph
