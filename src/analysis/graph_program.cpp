#include "footprint/analysis/graph_program.hpp"

#include <algorithm>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/topo_order.hpp"

namespace footprint::analysis {
namespace {

class ProgramBuilder {
 public:
  ProgramBuilder(const graph::Graph& g, const GraphProgramOptions& options, GraphProgram& out)
      : g_(g), options_(options), out_(out) {}

  void build() {
    out_.program.inputs = options_.inputs;
    out_.order = options_.order.empty() ? graph::topo_order(g_) : options_.order;
    if (!graph::is_topological(g_, out_.order)) {
      throw Error("graph " + in_quotes(g_.name()) + ": the requested order is not topological");
    }
    bind_dims();
    add_tensors();
    add_steps();
  }

 private:
  void bind_dims() {
    std::vector<std::string> symbols;
    for (const graph::Value& v : g_.values()) {
      for (const Dim& d : v.shape.dims) d.collect_symbols(symbols);
    }
    dims_ = options_.dims;
    for (const std::string& s : symbols) {
      if (dims_.count(s)) continue;
      dims_[s] = 1;
      out_.unbound_dims.push_back(s);
    }
  }

  // nullopt when the rank or an extent is unknown; SizeOverflow when the product does not fit.
  std::optional<uint64_t> element_count(const Shape& shape) const {
    if (!shape.ranked) return std::nullopt;
    uint64_t n = 1;
    for (const Dim& d : shape.dims) {
      const auto e = d.evaluate(dims_);
      if (!e) return std::nullopt;
      if (*e < 0) throw Error("extent " + d.to_string() + " is " + std::to_string(*e));
      n = mul_or_throw(n, static_cast<uint64_t>(*e), "element count");
    }
    return n;
  }

  // numel x element size under the dim bindings. An unknown extent is a warning (the tensor is
  // named, the figure is a lower bound); one that does not fit 64 bits is an error naming the
  // tensor and its extents, never a wrapped or zero size.
  uint64_t bytes_of(const graph::Value& v) {
    if (v.dtype == DType::string) return 0;
    const std::string what = "size of " + in_quotes(v.name) + " (" +
                             std::string(dtype_name(v.dtype)) + v.shape.to_string() + ")";
    std::optional<uint64_t> numel;
    try {
      numel = element_count(v.shape);
    } catch (const SizeOverflow& e) {
      throw SizeOverflow(what + ": " + e.what());
    } catch (const Error& e) {
      throw Error(what + ": " + e.what());
    }
    if (!numel) {
      out_.warnings.push_back(what + " is unknown; counted as 0 bytes");
      return 0;
    }
    const auto bytes = dtype_storage_bytes(v.dtype, *numel);
    if (!bytes) {
      throw SizeOverflow(what + ": " + std::to_string(*numel) + " elements of " +
                         std::to_string(dtype_bits(v.dtype)) +
                         " bits: the byte size overflows uint64");
    }
    return *bytes;
  }

  Category category_of(const graph::Value& v) const {
    switch (v.kind) {
      case graph::ValueKind::initializer:
        return Category::weights;
      case graph::ValueKind::input:
      case graph::ValueKind::outer:
        return Category::inputs;
      case graph::ValueKind::intermediate:
        break;
    }
    if (is_constant(v)) return Category::weights;
    return v.is_graph_output ? Category::outputs : Category::activations;
  }

  // Compile-time values: inferred constants, and the outputs of Constant nodes. A known value
  // is not enough: Shape of a dynamic tensor is known as [N,3] but computed at run time.
  bool is_constant(const graph::Value& v) const {
    if (v.constant) return true;
    if (v.producer < 0) return false;
    const graph::Node& n = g_.node(v.producer);
    return n.op_type == "Constant" && n.domain.empty();
  }

  void add_tensors() {
    auto& tensors = out_.program.tensors;
    tensors.reserve(g_.values().size());
    for (const graph::Value& v : g_.values()) {
      ProgramTensor t;
      t.name = v.name;
      t.category = category_of(v);
      t.bytes = bytes_of(v);
      // Values read from an enclosing graph are kept alive by that graph.
      t.held = v.kind == graph::ValueKind::outer;
      tensors.push_back(std::move(t));
    }
    for (const graph::Node& n : g_.nodes()) {
      const graph::OpSchema* s = n.schema;
      if (s == nullptr || s->output_view_of < 0 || n.outputs.empty()) continue;
      if (static_cast<size_t>(s->output_view_of) >= n.inputs.size()) continue;
      const graph::ValueId in = n.inputs[s->output_view_of];
      const graph::ValueId out = n.outputs[0];
      if (in == graph::kNoValue || out == graph::kNoValue) continue;
      tensors[out].view_of = in;
      // A view of a weight is a weight; its bytes are the viewed tensor's.
      if (tensors[in].category == Category::weights) tensors[out].category = Category::weights;
    }
  }

  void add_steps() {
    for (graph::NodeId id : out_.order) {
      const graph::Node& n = g_.node(id);
      if (all_outputs_constant(n)) {
        ++out_.constant_nodes;
        continue;
      }
      ProgramStep s;
      s.name = n.name.empty() ? "#" + std::to_string(id) + " " + n.op_type : n.name;
      s.op = n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type;
      for (graph::ValueId v : n.inputs) {
        if (v != graph::kNoValue) s.inputs.push_back(v);
      }
      for (graph::ValueId v : n.implicit_inputs) s.inputs.push_back(v);
      for (graph::ValueId v : n.outputs) {
        if (v != graph::kNoValue) s.outputs.push_back(v);
      }
      s.in_place = n.schema != nullptr && n.schema->in_place;
      s.workspace = std::max(kernel_workspace(n), subgraph_workspace(n, s.name));
      out_.program.steps.push_back(std::move(s));
    }
  }

  bool all_outputs_constant(const graph::Node& n) const {
    if (n.outputs.empty()) return false;
    return std::all_of(n.outputs.begin(), n.outputs.end(), [&](graph::ValueId v) {
      return v == graph::kNoValue || out_.program.tensors[v].category == Category::weights;
    });
  }

  // The kernel's scratch from the registry, with the step's extents under the dim bindings.
  uint64_t kernel_workspace(const graph::Node& n) const {
    if (n.schema == nullptr || n.schema->workspace == nullptr) return 0;
    auto concrete = [&](const std::vector<graph::ValueId>& ids) {
      std::vector<graph::ConcreteTensor> out;
      for (graph::ValueId id : ids) {
        graph::ConcreteTensor t;
        if (id != graph::kNoValue) {
          const graph::Value& v = g_.value(id);
          t.dtype = v.dtype;
          for (const Dim& d : v.shape.dims) t.dims.push_back(d.evaluate(dims_).value_or(0));
        }
        out.push_back(std::move(t));
      }
      return out;
    };
    return n.schema->workspace(n, concrete(n.inputs), concrete(n.outputs));
  }

  // Each branch or body runs inside the node's step: its own arena need is the step's scratch,
  // the largest over branches since only one runs.
  uint64_t subgraph_workspace(const graph::Node& n, const std::string& step_name) {
    uint64_t worst = 0;
    for (size_t i = 0; i < n.subgraphs.size(); ++i) {
      if (!graph::subgraph_runs(g_, n, i)) continue;
      const graph::Subgraph& sub = n.subgraphs[i];
      GraphProgramOptions child_options;
      child_options.inputs = InputsPolicy::caller;
      child_options.dims = dims_;
      GraphProgram child = build_program(*sub.graph, child_options);
      const Timeline t = simulate(child.program);
      out_.subgraphs.push_back({step_name, sub.attribute, t.lower_bound_bytes, t.total_peak_bytes});
      for (auto& w : child.warnings)
        out_.warnings.push_back(
            std::string(step_name).append("/").append(sub.attribute).append(": ").append(w));
      worst = std::max(worst, t.lower_bound_bytes);
    }
    return worst;
  }

  const graph::Graph& g_;
  const GraphProgramOptions& options_;
  GraphProgram& out_;
  DimBindings dims_;
};

}  // namespace

GraphProgram build_program(const graph::Graph& g, const GraphProgramOptions& options) {
  GraphProgram out;
  ProgramBuilder(g, options, out).build();
  return out;
}

}  // namespace footprint::analysis
