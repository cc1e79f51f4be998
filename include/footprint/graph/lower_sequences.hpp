#pragma once
// Sequences and optionals as the tensors they hold. ONNX's sequence ops (SequenceConstruct,
// SequenceInsert, SequenceAt, SplitToSequence, ConcatFromSequence, ...) and optional ops
// (Optional, OptionalHasElement, OptionalGetElement) pass lists of tensors between nodes. Where
// every length and position is known before running (constants, or the bound extents a
// SplitToSequence splits), a sequence is a list of tensor values and nothing more: the ops that
// only rearrange the list leave no node, SequenceAt and OptionalGetElement become an Identity
// (a view of the element), and the ops that compute become rows of domain "footprint" over the
// elements (graph/ops/sequences.cpp). Every layer above then sees tensors only, and counts
// them exactly: an element is one buffer whichever sequences hold it, where onnxruntime copies
// a tensor into each sequence it is inserted in.
//
//   graph::bind_input_extents(g, dims, defaulted);
//   const graph::SequenceReport r = graph::lower_sequences(g);  // before infer_shapes
//
// A sequence or optional the main graph takes or returns travels as its tensors: element i of
// sequence `s` is the tensor named element_name("s", i), "s[i]", and an optional is its one tensor
// named as itself, or nothing. A run's binder gives such an input the tensors it was handed
// (hold_sequence_inputs); a sequence output comes back as its elements, an empty optional as no
// tensor.
//
// What is not lowered is an error naming the node: a sequence or optional input given no
// tensors to size it (analysis without a run's inputs), one a subgraph reads or a Loop carries,
// SequenceMap, a position known only when running, or a SplitToSequence whose parts depend on
// an extent not bound.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "footprint/graph/graph.hpp"

namespace footprint::graph {

struct SequenceReport {
  size_t nodes = 0;   // sequence and optional nodes lowered (in every graph)
  size_t values = 0;  // sequence and optional values replaced by their tensors
};

// Whether n is one of the sequence or optional ops lower_sequences replaces (or Identity of a
// sequence, which it also replaces, is not asked here: Identity is a tensor op too). Callers that
// list a graph's ops before preparing it (the conformance suite, `info`) count these as run.
bool is_sequence_op(const Node& n);

// What a value is declared where it is not a tensor: "sequence", "map", "optional" or "sparse
// tensor"; empty for a tensor or an undeclared value.
std::string_view non_tensor_kind(const Value& v);

// "s[i]": how element i of sequence `s` is named where it travels as a tensor.
std::string element_name(std::string_view sequence, size_t i);

// For a binder: each input of g declared a sequence or an optional takes the tensors `given`
// names (element_name(s, 0), element_name(s, 1), ... for a sequence, in turn while given; an
// optional's own name, or its sequence's elements), through Graph::hold_input. An optional given
// none is empty where `absent_optional_is_empty` (a run's inputs, where an optional may be
// omitted); any other input given none is left as declared, which lowering then refuses naming
// it (analysis must not guess a length, nor a run take a forgotten sequence for an empty one).
void hold_sequence_inputs(Graph& g, const std::function<bool(const std::string&)>& given,
                          bool absent_optional_is_empty);

// Lowers g and its subgraphs. Runs shape inference first when a SplitToSequence's parts or a
// position come from computed values. Throws footprint::Error naming the node at fault.
SequenceReport lower_sequences(Graph& g);

}  // namespace footprint::graph
