#pragma once
// The op registry: the one place that knows what each operator means.
//
// Analysis, planning, the runtime and folding all ask the registry rather than matching op names
// themselves. Each op family (src/graph/ops/<family>.cpp) adds its rows: arity, view and
// in-place semantics, and type/shape inference (graph/shape_inference.hpp runs it); workspace
// sizes and kernels are hooks that the runtime layer fills (runtime/op_kernels.hpp gives the
// registry with them).
//
//   const OpSchema* s = OpRegistry::builtin().find("", "Reshape");
//   if (s && s->output_view_of == 0) ...;  // output 0 aliases input 0: allocates nothing
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "footprint/graph/epilogue.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::graph {

// Node `n` (whose op is this row's) as an epilogue of the node producing its input 0, or nullopt
// when its attributes or operands make it something else (a Clip with bounds computed at run
// time).
using EpilogueFn = std::optional<Epilogue> (*)(const Graph& g, const Node& n);

// How a row's kernel takes float32 carriers of 16-bit activations (graph/carry_float32.hpp): the
// runtime layer's promise, declared beside the kernel. In every case the float32 kernel on
// carried values computes what the 16-bit kernel computes on the 16-bit ones, save the rounding
// of the outputs the runtime does after it (and intermediate roundings the kernel makes into
// Node::rounds_to itself).
enum class Float32Carriers : uint8_t {
  none,         // never: its 16-bit activations stay 16-bit
  per_tensor,   // each 16-bit activation input and output carried or not, alone (the kernel
                // converts the ones that are not: through_float32.hpp)
  activations,  // all of its 16-bit activations carried, or none; its 16-bit constants stay
  whole,        // all of its 16-bit tensors carried, or none: no 16-bit constant input at all
};

struct OpSchema {
  static constexpr int kVariadic = std::numeric_limits<int>::max();

  std::string_view domain;  // "" is the default ONNX domain
  std::string_view op_type;
  int min_inputs = 0;
  int max_inputs = kVariadic;
  int min_outputs = 1;
  int max_outputs = 1;
  // Output 0 is a view of this input (Reshape, Identity, ...): it allocates nothing.
  int output_view_of = -1;
  // May write its output into input 0's buffer when that buffer is otherwise dead.
  bool in_place = false;
  // The dtypes the kernel runs, of the value kernel_dtype_of names: a promise the runtime makes
  // beside the kernel (as in_place), which analysis checks each node against (a model whose
  // float16 Conv `run` would refuse is said so by `analyze`, naming the node) and passes ask
  // before moving a node to another row. Empty where there is no kernel (the graph layer's
  // inference-only registry).
  DTypeSet kernel_dtypes;
  // Which value's dtype kernel_dtypes constrains: input i (i >= 0), or output -1 - i.
  int kernel_dtype_of = 0;
  // Output 0 is a tensor stored in this attribute of the node (Constant's `value`): it is read
  // where it lies in the model (Graph::constant_tensor), never computed.
  std::string_view stored_value_attribute;
  // This input holds output 0's extents as int64 entries (Reshape's `shape`, where 0 copies an
  // extent and -1 infers one): graph::rebatch may rewrite a leading entry that is the batch.
  int output_shape_input = -1;
  // Output 0 is input 0 widened to a float by its scale (DequantizeLinear): `fold` keeps such a
  // node, whose folded output would store a weight 4x (int8) or 8x (int4) its bytes, and which
  // fusion (fuse_qdq) reads into a quantized kernel as stored.
  bool dequantizes = false;
  // Holds subgraphs in attributes (If, Loop, Scan).
  bool has_subgraphs = false;
  // Same inputs, same outputs. Random ops are not: their outputs are never compile-time
  // constants, whatever their inputs.
  bool deterministic = true;
  // Output types and shapes (and small known values) from the inputs'; nullptr: not yet known.
  InferFn infer = nullptr;
  // Scratch bytes the op's kernel needs for one step, given its inputs' and outputs' concrete
  // extents; nullptr: none. Filled where a kernel with a scratchpad is registered.
  WorkspaceFn workspace = nullptr;
  // What the state PrepareFn builds keeps on the heap (packed weights); nullptr: nothing. Filled
  // beside the kernel, so that analysis predicts the packed bytes `run` measures.
  PackedFn packed = nullptr;
  // Bit i: where the state packs (PackedFn gives bytes) and input i is a constant, the kernel
  // reads only its packed copy, so preparing releases the original after its last reader is
  // prepared (graph::replaced_by_packing); analysis predicts the prepare peak from the same bits.
  uint32_t packed_inputs = 0;
  // Runs the op; nullptr: the runtime cannot execute it. Views (output_view_of) need none.
  KernelFn kernel = nullptr;
  // Builds per-node state when the model is prepared; nullptr: none.
  PrepareFn prepare = nullptr;
  // For ops with subgraphs: which of them can run; nullptr: every one.
  SubgraphRunsFn subgraph_runs = nullptr;
  // The kernel computes each slice along axis 0 of output 0 from the same slice of input 0 alone
  // (a convolution's images, a product's rows): where only that axis of those two depends on
  // values, the runtime runs the step at the bound it planned and prepared for, with the slices
  // past the run's extent zeroed, rather than preparing again. The runtime layer's promise,
  // declared beside the kernel.
  bool rows_at_bound = false;
  // The kernel sets the extents of the outputs it decides from the data
  // (KernelContext::set_output_extents): the runtime then runs it where inference knows only a
  // bound (NonZero's count, a Slice whose ends are computed). The runtime layer's promise.
  bool reports_extents = false;
  // A unary float op that graph::fuse may fold into the node before it; nullptr: never.
  EpilogueFn as_epilogue = nullptr;
  // The dtypes of output 0 on which the kernel applies Node::epilogues itself (empty: never): the
  // runtime layer's promise, declared where it registers the kernel. graph::fuse folds an
  // activation into a node only where this row says its kernel applies it in that dtype.
  DTypeSet epilogue_dtypes;
  // Each output element is computed from the inputs' elements at the same index once they are
  // broadcast (Add, Relu, Clip, ...): the op computes the same on tensors whose axes are all
  // permuted alike, so graph::to_channels_last runs it on channels-last tensors unchanged.
  bool elementwise = false;
  // The row (domain "footprint") that does this op's work on channels-last tensors, reading this
  // node's attributes as this op's: NhwcConv for Conv. graph::to_channels_last moves the node
  // there; empty: never. The runtime layer's choice, made where its kernels make it pay.
  std::string_view channels_last;
  // With channels_last: the node moves even where its input is plain, its kernel gaining more
  // than the layout changes around it cost (a convolution); else only where its input is
  // channels-last already (a pool).
  bool channels_last_alone = false;
  // With channels_last: how many leading inputs that row reads channels-last (1: the data, not a
  // convolution's weights; kVariadic: every one, as Concat's).
  int channels_last_inputs = 1;
  // With channels_last: the row reads channels-last every input of rank 4 instead (QLinearConcat's
  // tensors, not their scales and zero points).
  bool channels_last_rank4_inputs = false;
  // With channels_last: the inputs (a bit each) that must be constants, where given, for the node
  // to move (QLinearConv's w and its zero points: its channels-last kernel runs only on weights
  // packed once).
  uint32_t channels_last_constant_inputs = 0;
  // With channels_last: whether this node's attributes let that row's kernel run it; for an
  // elementwise op, whether they let its own kernel run on channels-last tensors (a blocked
  // DequantizeLinear's do not); nullptr: always.
  bool (*channels_last_runs)(const Node& n) = nullptr;
  // Whether graph::carry_float32 may store this node's 16-bit activations as float32 carriers.
  Float32Carriers float32_carriers = Float32Carriers::none;
};

// Whether subgraph `index` of node `n` can run (OpSchema::subgraph_runs). A subgraph that cannot
// is neither type-checked against the node's shapes, analysed nor prepared: the exporter's
// `If(dim == 1) then Squeeze else Identity` holds a branch that is wrong for every other extent.
bool subgraph_runs(const Graph& g, const Node& n, size_t index);

// The dtype node `n` gives its kernel where its row's kernel does not run it
// (OpSchema::kernel_dtypes); nullopt when it does, when that value's dtype is not known, or when
// the row declares no kernel dtypes.
std::optional<DType> dtype_refused(const Graph& g, const Node& n);
// The same for a node of `row` that would read `inputs` and write `outputs`: what a rewrite asks
// before it makes one (fusion, folding, layout), so that it never makes a node `run` refuses
// where the nodes it replaces would have run or been refused by name.
std::optional<DType> dtype_refused(const Graph& g, const OpSchema& row,
                                   std::span<const ValueId> inputs,
                                   std::span<const ValueId> outputs);

class OpRegistry {
 public:
  // Every op footprint knows. Built once and never changed afterwards.
  static const OpRegistry& builtin();

  const OpSchema* find(std::string_view domain, std::string_view op_type) const;
  // Whether any row has a kernel: the runtime's registry (runtime::op_registry()) says what `run`
  // runs; builtin() has inference alone and says nothing about it.
  bool runs_kernels() const;
  std::span<const OpSchema> all() const { return schemas_; }

  void add(const OpSchema& schema);
  // For the layer that owns kernels, while building its own copy of the registry: the row for
  // (domain, op_type), which must exist.
  OpSchema& row(std::string_view domain, std::string_view op_type);

 private:
  std::vector<OpSchema> schemas_;
};

}  // namespace footprint::graph
