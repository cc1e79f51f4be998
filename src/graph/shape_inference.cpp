#include "footprint/graph/shape_inference.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/topo_order.hpp"

namespace footprint::graph {
namespace {

// The more specific of a declared and an inferred dim; nullopt when both are concrete and differ.
std::optional<Dim> merge_dim(const Dim& declared, const Dim& inferred) {
  const auto d = declared.value();
  const auto i = inferred.value();
  if (d && i) return *d == *i ? std::optional<Dim>(inferred) : std::nullopt;
  if (d) return declared;
  if (i) return inferred;
  return inferred.is_unknown() ? declared : inferred;
}

// An error that already says where it happened (file, node offset, graph): it passes through
// the enclosing If / Loop nodes unchanged.
class LocatedError : public Error {
 public:
  using Error::Error;
};

// "<file>: offset N: graph 'g': " for messages about node `id` of g.
std::string location(const Graph& g, NodeId id) {
  std::string where;
  if (g.model() != nullptr) {
    where = g.model()->source().name() + ": ";
    if (id >= 0) where += "offset " + std::to_string(g.node(id).source_offset) + ": ";
  }
  return where + "graph " + in_quotes(g.name()) + ": ";
}

struct Declared {
  DType dtype = DType::undefined;
  Shape shape;
};

class Pass;

// Gives the If / Loop / Scan hooks their subgraphs, inferred by the same pass.
class NodeSubgraphs final : public SubgraphInferrer {
 public:
  NodeSubgraphs(Pass& pass, Graph& g, NodeId node) : pass_(pass), g_(g), node_(node) {}
  SubgraphResult infer(std::string_view attribute,
                       const std::vector<TensorType>& inputs) const override;

 private:
  Pass& pass_;
  Graph& g_;
  NodeId node_;
};

class Pass {
 public:
  Pass(const ShapeInferenceOptions& options, ShapeInferenceReport& report)
      : options_(options), report_(report) {}

  // Infers every node of `g`; `formal` gives its inputs' types (subgraphs; empty for the main
  // graph, whose inputs keep what the model declares).
  void run(Graph& g, const std::vector<TensorType>& formal) {
    restore_declared(g);
    for (size_t i = 0; i < formal.size() && i < g.inputs().size(); ++i) {
      Value& v = g.mutable_value(g.inputs()[i]);
      write(g, -1, v, formal[i], std::nullopt, false);
    }
    seed(g);
    for (NodeId id : topo_order(g)) infer_node(g, id);
  }

 private:
  // Values start from what the model declares, so a graph inferred again (a Loop body with
  // widened carried types) does not mistake its previous results for declarations.
  void restore_declared(Graph& g) {
    auto [it, fresh] = declared_.try_emplace(&g);
    std::vector<Declared>& saved = it->second;
    for (ValueId id = 0; id < static_cast<ValueId>(g.values().size()); ++id) {
      Value& v = g.mutable_value(id);
      if (fresh) {
        saved.push_back({v.dtype, v.shape});
      } else {
        v.dtype = saved[id].dtype;
        v.shape = saved[id].shape;
      }
      // A graph input keeps the value a binder gave it (runtime::Session, for an extent that
      // depends on it); every other value's is inferred again.
      if (v.kind != ValueKind::input) v.known.reset();
      v.constant = false;
    }
  }

  // Initializers are constants (small ones known); captured values mirror the enclosing graph.
  static void seed(Graph& g) {
    for (ValueId id = 0; id < static_cast<ValueId>(g.values().size()); ++id) {
      Value& v = g.mutable_value(id);
      if (v.kind == ValueKind::initializer && v.initializer != nullptr) {
        v.constant = true;
        v.known = known_value_of(*v.initializer);
      } else if (v.kind == ValueKind::outer && g.parent() != nullptr) {
        const Value& src = g.parent()->value(v.outer_value);
        v.dtype = src.dtype;
        v.shape = src.shape;
        v.known = src.known;
        v.constant = src.constant;
      }
    }
  }

  void warn(const Graph& g, NodeId id, std::string message) {
    const Node& n = g.node(id);
    report_.warnings.push_back("graph " + in_quotes(g.name()) + ": node " + n.label(id) + ": " +
                               message);
    report_.node_warnings.push_back({g.name(), id, n.qualified_op(), std::move(message)});
  }

  void note_uninferred(const Graph& g, NodeId id) {
    const std::string name = g.node(id).qualified_op();
    auto& ops = report_.ops_without_inference;
    const auto at = std::lower_bound(ops.begin(), ops.end(), name);
    if (at == ops.end() || *at != name) ops.insert(at, name);
    warn(g, id, "no shape inference for " + name + ": outputs keep their declared types");
  }

  void infer_node(Graph& g, NodeId id) {
    const Node& n = g.node(id);
    if (n.schema == nullptr || n.schema->infer == nullptr) {
      note_uninferred(g, id);
      return;
    }
    std::vector<TensorType> types(n.inputs.size());
    InferContext ctx{n, g.opset(n.domain), {}, {}, nullptr, id};
    bool all_constant = n.schema->deterministic;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const ValueId in = n.inputs[i];
      if (in == kNoValue) {
        ctx.inputs.push_back(nullptr);
        ctx.input_values.push_back(nullptr);
        continue;
      }
      const Value& v = g.value(in);
      types[i] = {v.dtype, v.shape};
      ctx.inputs.push_back(&types[i]);
      ctx.input_values.push_back(v.known ? &*v.known : nullptr);
      all_constant = all_constant && v.constant;
    }
    for (ValueId in : n.implicit_inputs) all_constant = all_constant && g.value(in).constant;
    const NodeSubgraphs subgraphs(*this, g, id);
    if (!n.subgraphs.empty()) ctx.subgraphs = &subgraphs;

    InferResult r;
    r.outputs.resize(n.outputs.size());
    r.values.resize(n.outputs.size());
    try {
      n.schema->infer(ctx, r);
    } catch (const LocatedError&) {
      throw;  // from a subgraph, already located
    } catch (const Error& e) {
      // The hook's message starts with the node's label, which the warning gives already; an
      // extent that overflowed comes from the Dim arithmetic and names no node yet.
      std::string message = e.what();
      const std::string label = "node " + n.label(id) + ": ";
      if (message.starts_with(label)) message.erase(0, label.size());
      if (!options_.errors_as_warnings) throw LocatedError(location(g, id) + label + message);
      warn(g, id, message);
      return;
    }
    ++report_.nodes_inferred;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k] == kNoValue) continue;
      const std::optional<KnownValue>& known = r.values[k];
      const bool constant =
          !r.random && (r.constant || all_constant || (known && known->is_concrete()));
      write(g, id, g.mutable_value(n.outputs[k]), r.outputs[k], known, constant);
    }
  }

  // Merges an inferred type into a value's declared one. A contradiction is an error, but
  // inside an If branch: exporters declare a branch's values for the inputs they traced, and
  // onnxruntime runs such models, so there the declaration is evidence, not law; inference wins
  // and a warning names both.
  void write(const Graph& g, NodeId id, Value& v, const TensorType& inferred,
             const std::optional<KnownValue>& known, bool constant) {
    bool overruled = false;
    auto contradiction = [&](const std::string& what) {
      std::string where = location(g, id);
      if (id >= 0) where += "node " + g.node(id).label(id) + ": ";
      const std::string message = "value " + in_quotes(v.name) + " " + what;
      if (!branches_.contains(&g)) throw LocatedError(where + message);
      if (!overruled) {
        report_.warnings.push_back(where + message + "; inference's type is used (an If branch)");
      }
      overruled = true;
    };
    if (inferred.dtype != DType::undefined) {
      if (v.dtype != DType::undefined && v.dtype != inferred.dtype) {
        contradiction("is declared " + std::string(dtype_name(v.dtype)) + " but inferred " +
                      std::string(dtype_name(inferred.dtype)));
      }
      v.dtype = inferred.dtype;
    }
    if (inferred.shape.ranked) {
      if (!v.shape.ranked) {
        v.shape = inferred.shape;
      } else if (v.shape.rank() != inferred.shape.rank()) {
        contradiction("is declared " + v.shape.to_string() + " but inferred " +
                      inferred.shape.to_string());
        v.shape = inferred.shape;
      } else {
        Shape merged = v.shape;
        for (size_t i = 0; i < v.shape.rank() && !overruled; ++i) {
          const auto d = merge_dim(v.shape.dims[i], inferred.shape.dims[i]);
          if (!d) {
            contradiction("is declared " + v.shape.to_string() + " but inferred " +
                          inferred.shape.to_string());
          } else {
            merged.dims[i] = *d;
          }
        }
        v.shape = overruled ? inferred.shape : merged;
      }
    }
    v.constant = constant;
    v.known.reset();
    if (known && known->numel() <= KnownValue::kMaxElements && v.shape == Shape::of(known->dims)) {
      v.known = known;
    }
  }

  friend class NodeSubgraphs;

  const ShapeInferenceOptions& options_;
  ShapeInferenceReport& report_;
  std::unordered_map<const Graph*, std::vector<Declared>> declared_;
  std::unordered_set<const Graph*> branches_;  // the If branches among the graphs inferred
};

SubgraphResult NodeSubgraphs::infer(std::string_view attribute,
                                    const std::vector<TensorType>& inputs) const {
  const Node& n = g_.node(node_);
  size_t index = n.subgraphs.size();
  for (size_t i = 0; i < n.subgraphs.size(); ++i) {
    if (n.subgraphs[i].attribute == attribute) {
      index = i;
      break;
    }
  }
  if (index == n.subgraphs.size()) {
    throw Error("graph " + in_quotes(g_.name()) + ": node " + n.label(node_) + " has no " +
                in_quotes(attribute) + " subgraph");
  }
  Graph& sub = g_.mutable_subgraph(node_, index);
  if (n.domain.empty() && n.op_type == "If") pass_.branches_.insert(&sub);
  pass_.run(sub, inputs);
  SubgraphResult out;
  for (ValueId id : sub.outputs()) {
    const Value& v = sub.value(id);
    out.outputs.push_back({v.dtype, v.shape});
    out.values.push_back(v.known);
  }
  return out;
}

}  // namespace

ShapeInferenceReport infer_shapes(Graph& g, const ShapeInferenceOptions& options) {
  ShapeInferenceReport report;
  // Inference hooks know the operator sets up to kNewestOpset (each op's changes through opset
  // 23 are followed, or the op is refused by name); a newer import is read as that, which the
  // user must hear about (an op may have changed meaning since).
  const int64_t opset = g.opset("");
  if (opset > kNewestOpset) {
    report.warnings.push_back("the model imports ai.onnx opset " + std::to_string(opset) +
                              "; footprint knows opsets up to " + std::to_string(kNewestOpset) +
                              " and reads its ops as opset " + std::to_string(kNewestOpset));
  }
  Pass(options, report).run(g, {});
  return report;
}

}  // namespace footprint::graph
