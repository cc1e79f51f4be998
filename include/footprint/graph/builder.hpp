#pragma once
// Building a graph in code, with type and shape inference on every call and value propagation:
// when every input of an op is a known value, the op holds no subgraph and its outputs stay under
// a size limit, it is evaluated at once with the registry's kernels.
//
//   graph::GraphBuilder b(runtime::op_registry());
//   graph::Var a = b.constant(graph::HostValue::zeros(DType::float64, {10000}));
//   for (int i = 0; i < 100; ++i) a = b.mul(a, a);   // each step computed now
//   a.value();                                        // the last one; the others are gone
//   b.output(a, "y");
//   b.write_onnx("chain.onnx");
//
// Who owns what (DESIGN.md: a builder must not keep every intermediate reachable from the graph):
// a propagated value belongs to the Var the call returns and to its copies; dropping the last
// one frees it. The builder's nodes and values keep only names, types and shapes. Constants
// passed to constant() are part of the graph (an export needs their bytes), so the builder
// shares them with their Var rather than copying.
//
// The builder must outlive its Vars (they read types through it) and any export it made (the
// exported protos view its attributes and constants).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/core/bump_arena.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/graph_export.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/model.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/model.hpp"

namespace footprint::graph {

class GraphBuilder;

// A handle to a value of the graph being built, holding its propagated value when there is one.
class Var {
 public:
  Var() = default;
  bool valid() const { return builder_ != nullptr; }
  ValueId id() const { return id_; }
  const std::string& name() const;
  DType dtype() const;
  const Shape& shape() const;
  // The value computed at build time, or nullptr (an input, an op too big or without a kernel).
  const HostValue* value() const { return value_.get(); }
  const SharedValue& shared_value() const { return value_; }

 private:
  friend class GraphBuilder;
  Var(const GraphBuilder* b, ValueId id, SharedValue v)
      : builder_(b), id_(id), value_(std::move(v)) {}
  const GraphBuilder* builder_ = nullptr;
  ValueId id_ = kNoValue;
  SharedValue value_;
};

// One attribute of an op call.
struct Attr {
  std::string name;
  onnx::AttributeProto::Type type = onnx::AttributeProto::Type::undefined;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  SharedValue tensor;
  const GraphBuilder* graph = nullptr;  // a subgraph (If branch, Loop body)

  static Attr of(std::string name, int64_t v);
  static Attr of(std::string name, float v);
  static Attr of(std::string name, std::string v);
  static Attr of(std::string name, std::vector<int64_t> v);
  static Attr of(std::string name, std::vector<float> v);
  static Attr of(std::string name, SharedValue v);
  static Attr of(std::string name, const GraphBuilder& subgraph);
};

struct BuilderOptions {
  int64_t opset = 18;
  // Outputs of one call larger than this (all outputs together) are not propagated.
  uint64_t max_value_bytes = uint64_t{64} << 20;
  bool propagate = true;
  int threads = 1;
  std::string graph_name = "main";
};

// What to_graph() gives: the model the graph views, and the graph with shapes inferred.
struct BuiltGraph {
  std::unique_ptr<Model> model;  // on the heap: the graph points into it
  Graph graph;
};

class GraphBuilder {
 public:
  // `registry` gives inference and, where it has them, the kernels propagation runs
  // (runtime::op_registry()); it must outlive the builder.
  explicit GraphBuilder(const OpRegistry& registry, BuilderOptions options = {});
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;
  ~GraphBuilder();

  // A graph input; dims may be symbolic (Dim::named("N")).
  Var input(std::string name, DType dtype, std::vector<Dim> dims);
  // A constant (an initializer of the export), shared with the Var, not copied.
  Var constant(SharedValue value, std::string name = {});
  // Any registered op by name. Inference runs now; a failure throws footprint::Error naming the
  // op. An invalid Var marks an omitted optional input.
  std::vector<Var> op(std::string_view op_type, const std::vector<Var>& inputs,
                      const std::vector<Attr>& attrs = {}, size_t outputs = 1,
                      std::string_view domain = {});
  Var op1(std::string_view op_type, const std::vector<Var>& inputs,
          const std::vector<Attr>& attrs = {}) {
    return op(op_type, inputs, attrs, 1)[0];
  }

  // Typed helpers for common ops.
  Var add(const Var& a, const Var& b) { return op1("Add", {a, b}); }
  Var sub(const Var& a, const Var& b) { return op1("Sub", {a, b}); }
  Var mul(const Var& a, const Var& b) { return op1("Mul", {a, b}); }
  Var div(const Var& a, const Var& b) { return op1("Div", {a, b}); }
  Var relu(const Var& x) { return op1("Relu", {x}); }
  Var clip(const Var& x, const Var& lo, const Var& hi) { return op1("Clip", {x, lo, hi}); }
  Var matmul(const Var& a, const Var& b) { return op1("MatMul", {a, b}); }
  Var reshape(const Var& x, const Var& shape) { return op1("Reshape", {x, shape}); }
  Var flatten(const Var& x, int64_t axis = 1) {
    return op1("Flatten", {x}, {Attr::of("axis", axis)});
  }
  Var global_average_pool(const Var& x) { return op1("GlobalAveragePool", {x}); }
  Var gemm(const Var& a, const Var& b, const Var& c, bool trans_b = false);
  Var conv(const Var& x, const Var& w, const Var& bias, std::vector<int64_t> strides,
           std::vector<int64_t> pads, int64_t group = 1);
  Var constant_of_shape(const Var& shape, SharedValue fill);

  // A builder for a subgraph of this graph (an If branch, a Loop body), owned by this builder.
  // Its ops may read this graph's Vars (captured by name, as ONNX subgraphs do); its input()s are
  // the subgraph's formal inputs and its output()s its results. Finish it before passing it to
  // the op that holds it: the op's inference reads its outputs' types then.
  GraphBuilder& subgraph();
  // If(cond) with the two branches' outputs.
  std::vector<Var> if_else(const Var& cond, const GraphBuilder& then_branch,
                           const GraphBuilder& else_branch);
  // Loop(max_trip, cond, carried...) running `body` (inputs: iteration, cond, carried...;
  // outputs: cond, carried..., scan outputs...).
  std::vector<Var> loop(const Var& max_trip, const Var& cond, const std::vector<Var>& carried,
                        const GraphBuilder& body);

  // Marks a graph output (renaming the value when `name` is given).
  void output(const Var& v, std::string name = {});

  size_t node_count() const;
  size_t value_count() const;

  // ONNX messages viewing this builder's constants and attributes (export only while it lives).
  ExportedModel export_onnx() const;
  void write_onnx(const std::filesystem::path& path) const;
  // An executable graph: the model serialised in memory, loaded and built against the registry,
  // shapes inferred.
  BuiltGraph to_graph() const;

 private:
  friend class Var;
  struct Impl;
  class SubgraphTypes;
  GraphBuilder(const GraphBuilder* parent, std::string prefix);
  // This graph as a GraphProto in `arena`, viewing the builder's attributes and constants.
  const onnx::GraphProto* export_graph(BumpArena& arena) const;
  // The value of this graph that `v` stands for, capturing an enclosing graph's value by name.
  ValueId local(const Var& v);
  const std::string& name_of(ValueId id) const;
  DType dtype_of(ValueId id) const;
  const Shape& shape_of(ValueId id) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace footprint::graph
