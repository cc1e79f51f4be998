#pragma once
// The graph IR: values in SSA form, nodes that read and write them, subgraphs owned by the nodes
// whose attributes hold them.
//
// A Graph built from a model keeps views of that model (initializer payloads, attributes), so
// the onnx::Model must outlive it. Node order is the stored order; topo_order() gives an
// executable one.
//
//   graph::Model model = graph::load_model("net.onnx");  // model.hpp: the one opener
//   auto g = model.graph(runtime::op_registry());
//   for (NodeId n : graph::topo_order(g)) ...
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "footprint/core/dtype.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/graph/epilogue.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/proto.hpp"

namespace footprint::graph {

struct OpSchema;
class OpRegistry;
class Graph;

// The opset a node is read at when the model imports none for its domain (or the graph was built
// without a model): the newest the op registry's hooks know. A newer import is passed through
// as stored; hooks compare against the versions they know, so it reads as this one.
inline constexpr int64_t kNewestOpset = 23;

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;

enum class ValueKind : uint8_t {
  input,         // a graph input the caller provides
  initializer,   // a weight stored in the model
  intermediate,  // produced by a node of this graph
  outer,         // a value of an enclosing graph, read by this subgraph
};

struct Value {
  std::string name;
  ValueKind kind = ValueKind::intermediate;
  DType dtype = DType::undefined;
  Shape shape;
  // The declared type when it is not a plain tensor (sequence, map, optional), else nullptr.
  const onnx::TypeProto* declared_type = nullptr;
  bool has_declared_type = false;
  NodeId producer = -1;
  std::vector<NodeId> consumers;
  bool is_graph_output = false;
  const onnx::TensorProto* initializer = nullptr;
  // For kind == outer: the value in the enclosing graph.
  ValueId outer_value = kNoValue;
  // Filled by shape inference: contents known before running (small shape tensors), and whether
  // the value is a compile-time constant (weights computed from weights, e.g. ConstantOfShape).
  std::optional<KnownValue> known;
  bool constant = false;
};

struct Subgraph {
  std::string attribute;  // "then_branch", "body", ...
  std::unique_ptr<Graph> graph;
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<ValueId> inputs;  // kNoValue marks an omitted optional input
  std::vector<ValueId> outputs;
  // Values of this graph that the node's subgraphs read (ordering dependencies beyond inputs).
  std::vector<ValueId> implicit_inputs;
  onnx::Array<onnx::AttributeProto> attributes;
  std::vector<Subgraph> subgraphs;
  const OpSchema* schema = nullptr;  // nullptr: an op the registry does not know
  uint64_t source_offset = 0;
  // Ops folded into output 0 by graph::fuse, applied in order after the node's own work.
  std::vector<Epilogue> epilogues;
  // Set by graph::carry_float32 where some of the node's 16-bit activations are float32 carriers:
  // the 16-bit type they hold, which the node computes as (a kernel that rounds intermediate
  // results does so into it); undefined otherwise.
  DType rounds_to = DType::undefined;
  // Bit i: output i is a carrier the runtime rounds into rounds_to after the kernel.
  uint32_t rounded_outputs = 0;

  const onnx::AttributeProto* attribute(std::string_view attr_name) const;
  // "'name' (Op)" or "#index (Op)" for error messages.
  std::string label(NodeId id) const;
  // The op as messages and reports name it: "Conv", or "com.microsoft::QLinearAdd" outside the
  // default domain.
  std::string qualified_op() const;
};

// A graph input given as the tensors it holds (a sequence's elements, an optional's tensor or
// nothing), for graph::lower_sequences: Graph::hold_input put `elements` among the inputs in its
// place (an optional holding a tensor is that tensor, `value` itself).
struct HeldInput {
  ValueId value = kNoValue;
  std::vector<ValueId> elements;
  bool optional = false;
  bool has_element = true;
  bool holds_sequence = false;  // an optional holding a sequence
};

class Graph {
 public:
  // The model's main graph, its nodes bound to `registry`'s rows. The registry is required:
  // OpRegistry::builtin() has inference only, the runtime's (runtime::op_registry()) adds the
  // workspace and kernels behind every figure the CLI prints, and no caller gets the first by
  // default when it meant the second. Throws footprint::Error naming the node or value at fault.
  static Graph from_onnx(const onnx::Model& model, const OpRegistry& registry);

  Graph();
  // Moving re-points the subgraphs' parent links at the new location.
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  const std::string& name() const { return name_; }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Value& value(ValueId id) const { return values_[id]; }
  // For passes that annotate values (shape inference); structure stays as built.
  Value& mutable_value(ValueId id) { return values_[id]; }
  Graph& mutable_subgraph(NodeId node, size_t index) {
    return *nodes_[node].subgraphs[index].graph;
  }
  const Node& node(NodeId id) const { return nodes_[id]; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const std::vector<ValueId>& initializers() const { return initializers_; }
  const Graph* parent() const { return parent_; }
  // The model this graph (or its outermost ancestor) was read from; nullptr if built in memory.
  const onnx::Model* model() const { return model_; }
  // The opset version the nodes of `domain` are read at ("" and "ai.onnx" are the default
  // domain): the model's import, or kNewestOpset when it imports none for the domain or the
  // graph has no model. The one answer every layer asks (inference, folding, fusion, kernels).
  int64_t opset(std::string_view domain) const;
  const onnx::GraphProto* proto() const { return proto_; }

  std::optional<ValueId> find(std::string_view value_name) const;
  // The tensor a value is stored as in the model: an initializer's, or the one a node keeps in
  // an attribute (OpSchema::stored_value_attribute: Constant's `value`); nullptr otherwise.
  const onnx::TensorProto* constant_tensor(ValueId id) const;
  // Whether `id` is output 0 of a node that stores its value (a Constant node).
  bool is_stored_value(ValueId id) const;
  // Subgraphs at every depth, counted once each.
  size_t subgraph_count() const;

  // For passes that rewrite a constant (graph::rebatch): the model's bytes are read-only views,
  // so the graph owns the new payload. `id` (an initializer, or the output of a Constant node
  // holding a `value` tensor) reads `raw` from then on, with its dtype and dims unchanged; every
  // reader of Value::initializer or of the node's attributes sees it. Throws footprint::Error
  // for another kind of value or a payload of another size.
  void replace_constant(ValueId id, std::vector<std::byte> raw);

  // For graph::fuse: node `host` takes over the work of `absorbed` (nodes that read host's output
  // 0, and each other's outputs, and nothing else computed), appending `epilogue` to its own, and
  // writes what the last of them wrote in place of its output 0. The absorbed nodes, and the
  // values only they and host made, leave the graph: the ids of later nodes and values shift
  // down. Throws footprint::Error when the absorbed nodes are not such a chain.
  void fuse_into(NodeId host, std::span<const NodeId> absorbed, Epilogue epilogue);

  // For graph::carry_float32: node `id` computes as `rounds_to` on float32 carriers, and the
  // runtime rounds the outputs whose bits `rounded_outputs` sets (added to those set before).
  void set_rounding(NodeId id, DType rounds_to, uint32_t rounded_outputs) {
    nodes_[id].rounds_to = rounds_to;
    nodes_[id].rounded_outputs |= rounded_outputs;
  }

  // For graph::to_channels_last: a new value made by a node of this graph, named `base` or, when
  // taken, `base` with a number appended; its type is left for shape inference.
  ValueId add_intermediate(std::string_view base);
  // For graph::to_channels_last: the nodes moved out, in order; the graph has none until
  // replace_nodes gives it new ones.
  std::vector<Node> take_nodes() { return std::exchange(nodes_, {}); }
  // For graph::to_channels_last: `nodes` replace the nodes, in the order they run (the old ones
  // moved and rewired, and new ones reading and writing values of this graph). Producers and
  // consumers are derived again, and intermediates no node writes or reads, nor the graph
  // returns, leave the graph (later value ids shift down). Throws footprint::Error when a value
  // is written twice or read before it is written.
  void replace_nodes(std::vector<Node> nodes);
  // For graph::fuse: the attributes of a node a rewrite makes (a LayerNormalization standing for
  // the ops an exporter wrote), kept as long as the graph. Their names and string values must
  // outlive it (literals).
  onnx::Array<onnx::AttributeProto> own_attributes(std::vector<onnx::AttributeProto> attributes);
  // For graph::fuse: text a made node's string attribute holds (a footprint::Elementwise's
  // program), kept as long as the graph.
  std::string_view own_text(std::string text);
  // For the binders of graph::prepare_graph: input `value` (declared a sequence or an optional)
  // is given as the tensors `element_names` (a sequence's, or an optional's one; none for an
  // empty optional). Each becomes an input of the element's declared type in its place (an
  // optional's tensor is `value` itself, made a tensor input); held_inputs() records them.
  void hold_input(ValueId value, const std::vector<std::string>& element_names);
  const std::vector<HeldInput>& held_inputs() const { return held_inputs_; }
  // For graph::lower_sequences, once it has read them.
  void clear_held_inputs() { held_inputs_.clear(); }
  // For graph::lower_sequences: output `output` is returned as `values` instead (a sequence's
  // elements; none for an empty optional).
  void replace_output(ValueId output, const std::vector<ValueId>& values);
  // The registry the nodes' rows come from (from_onnx's).
  const OpRegistry* registry() const { return registry_; }
  // How many calls of model-local functions (FunctionProto) the graph inlined: their bodies'
  // nodes stand where each call was, their values named "<function>#<call>/<name>".
  size_t inlined_function_calls() const { return function_calls_; }

 private:
  struct OwnedConstant;
  // A node as the graph runs it: one of the graph's own, or of a model-local function's body
  // where a node calls it, with the body's value names renamed (its formal inputs and outputs to
  // the call's, the rest under a prefix of its own) and the attributes that refer to the call's
  // resolved.
  struct Renames {
    std::unordered_map<std::string, std::string> formal;
    std::string prefix;
  };
  struct NodeSpec {
    const onnx::NodeProto* proto = nullptr;
    std::shared_ptr<const Renames> renames;  // nullptr: names as written
    std::string name;
    onnx::Array<onnx::AttributeProto> attributes;
    // The value's name in the graph: `written` itself, or its renamed form held in `buffer`.
    std::string_view rename(std::string_view written, std::string& buffer) const;
  };
  static constexpr size_t kMaxFunctionDepth = 64;
  const onnx::FunctionProto* local_function(const onnx::NodeProto& np) const;
  std::vector<NodeSpec> expand_functions(const onnx::GraphProto& proto);
  void expand_call(const NodeSpec& call, std::vector<const onnx::FunctionProto*>& calling,
                   std::vector<NodeSpec>& out);
  onnx::Array<onnx::AttributeProto> call_attributes(const onnx::NodeProto& np,
                                                    const onnx::FunctionProto& f,
                                                    const NodeSpec& caller);
  void build(const onnx::GraphProto& proto);
  ValueId add_value(std::string_view name, ValueKind kind);
  // This graph's value for `name`, capturing it from an enclosing graph when needed.
  std::optional<ValueId> lookup_or_capture(std::string_view name);
  static constexpr uint64_t kUnknownOffset = UINT64_MAX;
  // Throws footprint::Error "<file>: offset N: graph 'g': <what>".
  [[noreturn]] void fail(uint64_t offset, const std::string& what) const;
  ValueId resolve_input(std::string_view name, std::string_view reader, uint64_t offset);
  void read_subgraphs(NodeId id);
  void relink_children();
  // Drops the marked nodes and values, renumbering every reference to those that stay.
  void erase(const std::vector<bool>& dead_nodes, const std::vector<bool>& dead_values);

  std::string name_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<ValueId> initializers_;
  std::unordered_map<std::string, ValueId> by_name_;
  Graph* parent_ = nullptr;
  const onnx::Model* model_ = nullptr;
  const OpRegistry* registry_ = nullptr;
  const onnx::GraphProto* proto_ = nullptr;
  // Payloads written by replace_constant; boxed so the views of them stay put when moved.
  std::vector<std::unique_ptr<OwnedConstant>> owned_constants_;
  size_t function_calls_ = 0;
  std::vector<HeldInput> held_inputs_;
};

}  // namespace footprint::graph
