#include "footprint/analysis/graph_program.hpp"

#include <algorithm>
#include <optional>

#include "footprint/analysis/model_summary.hpp"
#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/lower_sequences.hpp"
#include "footprint/graph/node_runner.hpp"
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
    own_outputs();
    add_steps();
    mark_prepare_only();
    add_returned_copies();
    warn_refused_nodes();
  }

 private:
  // Why `run` will refuse node `n`: an op footprint does not know or has no kernel for (the
  // figures stand where the model declares the outputs' types), or a dtype the kernel does not
  // run (OpSchema::kernel_dtypes); empty when it will not, as far as the registry tells.
  std::string refusal(const graph::Node& n, bool kernels) const {
    if (n.schema == nullptr)
      return "the op " + in_quotes(n.qualified_op()) + " is unknown to footprint";
    if (kernels && n.schema->kernel == nullptr) {
      return "footprint has no kernel for " + in_quotes(n.qualified_op());
    }
    const std::optional<DType> t = graph::dtype_refused(g_, n);
    if (!t) return {};
    const int of = n.schema->kernel_dtype_of;
    return "footprint's kernel runs " + n.schema->kernel_dtypes.to_string() + ", not " +
           std::string(dtype_name(*t)) + " (its " +
           (of >= 0 ? "input " + std::to_string(of) : "output " + std::to_string(-1 - of)) + ")";
  }

  // The nodes `run` will refuse, said now: one line per op and reason, naming the first node (a
  // float16 ResNet has 53 such convolutions).
  void warn_refused_nodes() {
    // The graph layer's own registry has inference only and says nothing about what `run` does.
    const bool kernels = g_.registry() != nullptr && g_.registry()->runs_kernels();
    struct Refused {
      graph::NodeId first;
      std::string why;
      size_t count;
    };
    std::vector<Refused> refused;
    for (graph::NodeId id : out_.order) {
      const graph::Node& n = g_.node(id);
      std::string why = refusal(n, kernels);
      if (why.empty()) continue;
      auto same = std::find_if(refused.begin(), refused.end(), [&](const Refused& r) {
        const graph::Node& f = g_.node(r.first);
        return r.why == why && f.op_type == n.op_type && f.domain == n.domain;
      });
      if (same != refused.end()) {
        ++same->count;
      } else {
        refused.push_back({id, std::move(why), 1});
      }
    }
    for (const Refused& r : refused) {
      const graph::Node& n = g_.node(r.first);
      std::string w = "node " + n.label(r.first);
      if (r.count > 1) w += " and " + std::to_string(r.count - 1) + " more " + n.op_type + " nodes";
      out_.warnings.push_back(w + ": " + r.why + ": `run` will refuse this model");
    }
  }

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

  // The element count, or its upper bound when an extent depends on the data (`bounded`);
  // nullopt when the rank or an extent is unknown; SizeOverflow when the product does not fit.
  std::optional<uint64_t> element_count(const Shape& shape, bool& bounded) const {
    if (!shape.ranked) return std::nullopt;
    uint64_t n = 1;
    for (const Dim& d : shape.dims) {
      const auto r = d.range(dims_);
      if (!r) return std::nullopt;
      if (r->second < 0 || (r->first < 0 && !d.is_data_dependent()))
        throw Error("extent " + d.to_string() + " is negative");
      bounded = bounded || r->first != r->second;
      n = mul_or_throw(n, static_cast<uint64_t>(r->second), "element count");
    }
    return n;
  }

  // numel x element size under the dim bindings, or the bound of a data-dependent size (the
  // tensor's bound_by says what bounds it). An unknown size is remembered and fails the build;
  // one that does not fit 64 bits is an error naming the tensor and its extents, never a
  // wrapped or zero size.
  uint64_t bytes_of(const graph::Value& v, graph::ValueId id, ProgramTensor& t) {
    if (v.dtype == DType::string) return 0;
    const std::string what = "size of " + in_quotes(v.name) + " (" +
                             std::string(dtype_name(v.dtype)) + v.shape.to_string() + ")";
    std::optional<uint64_t> numel;
    bool bounded = false;
    try {
      numel = element_count(v.shape, bounded);
    } catch (const SizeOverflow& e) {
      throw SizeOverflow(what + ": " + e.what());
    } catch (const Error& e) {
      throw Error(what + ": " + e.what());
    }
    // An element type nothing gave (an unknown op's output the model declares no type for, or a
    // Reshape of it) is an unknown size, as an unknown extent is: never 0 bits per element. The
    // op's own output comes first in the graph's values, and fail_unknown names its op.
    if (!numel || v.dtype == DType::undefined) {
      if (first_unknown_ == graph::kNoValue) first_unknown_ = id;
      return 0;
    }
    const auto bytes = dtype_storage_bytes(v.dtype, *numel);
    if (!bytes) {
      throw SizeOverflow(what + ": " + std::to_string(*numel) + " elements of " +
                         std::to_string(dtype_bits(v.dtype)) +
                         " bits: the byte size overflows uint64");
    }
    if (bounded) {
      std::vector<std::string> origins;
      for (const Dim& d : v.shape.dims) d.collect_bound_origins(origins);
      for (const std::string& o : origins) {
        if (!t.bound_by.empty()) t.bound_by += ", ";
        t.bound_by += o;
      }
      out_.bounded.push_back({v.name, t.bound_by});
    }
    return *bytes;
  }

  // Why the first tensor of unknown size cannot be sized, and what would fix it.
  [[noreturn]] void fail_unknown(graph::ValueId id) const {
    const graph::Value& v = g_.value(id);
    if (v.declared_type != nullptr) {
      const std::string_view kind = graph::non_tensor_kind(v);
      const bool held = kind == "sequence" || kind == "optional";
      throw Error("graph " + in_quotes(g_.name()) + ": " + in_quotes(v.name) + " is declared " +
                  type_text(v) +
                  (held ? ": footprint sizes a sequence or an optional by the tensors it holds; "
                          "give them (--data-dir, or --shape '" +
                              graph::element_name(v.name, 0) + "=AxB' per element)"
                        : ": footprint sizes and runs tensors, and sequences and optionals of "
                          "them (maps and sparse tensors are not supported yet), so it prints no "
                          "figure for this model"));
    }
    std::string msg = "size of " + in_quotes(v.name) + " (" + std::string(dtype_name(v.dtype)) +
                      v.shape.to_string() + ") is unknown";
    size_t dim = 0;
    while (dim < v.shape.rank() && v.shape.dims[dim].range(dims_)) ++dim;
    const bool extents = v.shape.ranked && dim == v.shape.rank();
    const std::string which = v.dtype == DType::undefined && extents ? "element type"
                              : v.shape.ranked                       ? "dim " + std::to_string(dim)
                                                                     : "rank";
    if (v.kind == graph::ValueKind::input) {
      msg += ": the input's " + which + " has no name or value; give its extents with --shape " +
             v.name + "=AxBx...";
    } else if (v.producer >= 0 && g_.node(v.producer).schema == nullptr) {
      // The cause is the op, not its values: nothing infers what footprint does not know.
      const graph::Node& n = g_.node(v.producer);
      msg += ": it is an output of node " + n.label(v.producer) + ", whose op " +
             in_quotes(n.qualified_op()) +
             " is unknown to footprint, and the model declares no type for it";
    } else if (v.producer >= 0 && v.dtype == DType::undefined) {
      const graph::Node& n = g_.node(v.producer);
      msg += ": node " + n.label(v.producer) + " (" + n.qualified_op() +
             ") gives no element type for it, and the model declares none";
    } else if (v.producer >= 0) {
      const graph::Node& n = g_.node(v.producer);
      msg += ": its " + which + " comes from values of node " + n.label(v.producer) +
             " known only when running, and the op declares no bound for it";
    } else {
      msg += ": its " + which + " is not declared";
    }
    throw Error("graph " + in_quotes(g_.name()) + ": " + msg +
                "; footprint prints no figure computed from an unknown size");
  }

  Category category_of(graph::ValueId id) const {
    const graph::Value& v = g_.value(id);
    switch (v.kind) {
      case graph::ValueKind::initializer:
        return Category::weights;
      case graph::ValueKind::input:
      case graph::ValueKind::outer:
        return Category::inputs;
      case graph::ValueKind::intermediate:
        break;
    }
    if (is_constant(id)) return Category::weights;
    return v.is_graph_output ? Category::outputs : Category::activations;
  }

  // Compile-time values: inferred constants, and the outputs of Constant nodes. A known value
  // is not enough: Shape of a dynamic tensor is known as [N,3] but computed at run time.
  bool is_constant(graph::ValueId id) const {
    return g_.value(id).constant || g_.is_stored_value(id);
  }

  void add_tensors() {
    auto& tensors = out_.program.tensors;
    tensors.reserve(g_.values().size());
    for (const graph::Value& v : g_.values()) {
      ProgramTensor t;
      t.name = v.name;
      t.category = category_of(static_cast<graph::ValueId>(tensors.size()));
      t.bytes = bytes_of(v, static_cast<graph::ValueId>(tensors.size()), t);
      // Values read from an enclosing graph are kept alive by that graph.
      t.held = v.kind == graph::ValueKind::outer;
      tensors.push_back(std::move(t));
    }
    if (first_unknown_ != graph::kNoValue) fail_unknown(first_unknown_);
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

  // The runtime hands back every graph output in memory of its own. An output that views an
  // input, a weight or another output (Identity of an input, a sequence element passed through,
  // a Reshape of an output) is therefore not a view here: it is a buffer of its own, which the
  // step making it fills by a copy. An output no step makes (a constant, an input, an output
  // listed twice) is copied after the last step: a tensor of its own, the caller's from before
  // the run (top level only: a subgraph's outputs are its node's). So the output bytes counted
  // are the bytes a run returns.
  void own_outputs() {
    auto& tensors = out_.program.tensors;
    const std::vector<size_t> root = view_roots();
    const std::vector<graph::ValueId>& outputs = g_.outputs();
    std::vector<char> claimed(tensors.size(), 0);
    std::vector<char> own(outputs.size(), 0);
    // Outputs that are buffers of their own first, in order: a view of one is a copy.
    for (size_t k = 0; k < outputs.size(); ++k) {
      const auto v = static_cast<size_t>(outputs[k]);
      if (tensors[v].view_of >= 0 || tensors[v].category != Category::outputs || claimed[v])
        continue;
      claimed[v] = own[k] = 1;
    }
    std::vector<graph::ValueId> copies;
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (own[k]) continue;
      const auto v = static_cast<size_t>(outputs[k]);
      if (tensors[v].view_of < 0 || is_constant(outputs[k])) {
        copies.push_back(outputs[k]);
        continue;
      }
      const size_t r = root[v];
      if (tensors[r].category == Category::activations && !claimed[r]) {
        claimed[r] = 1;  // the output's buffer is the activation it views (the timeline's rule)
        continue;
      }
      tensors[v].view_of = -1;
      tensors[v].category = Category::outputs;
      claimed[v] = 1;
    }
    if (g_.parent() != nullptr) return;
    for (const graph::ValueId v : copies) {
      ProgramTensor copy;
      copy.name = tensors[v].name + " (returned)";
      copy.bytes = tensors[v].bytes;
      copy.bound_by = tensors[v].bound_by;
      copy.category = Category::outputs;
      copy.returned_copy = true;
      returned_copies_.push_back(std::move(copy));
    }
  }

  // The copies own_outputs found, after every value's tensor: tensors are indexed by value.
  void add_returned_copies() {
    for (ProgramTensor& t : returned_copies_) out_.program.tensors.push_back(std::move(t));
    returned_copies_.clear();
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
      s.op = n.qualified_op();
      for (graph::ValueId v : n.inputs) {
        if (v != graph::kNoValue) s.inputs.push_back(v);
      }
      for (graph::ValueId v : n.implicit_inputs) s.inputs.push_back(v);
      for (graph::ValueId v : n.outputs) {
        if (v != graph::kNoValue) s.outputs.push_back(v);
      }
      s.in_place = n.schema != nullptr && n.schema->in_place;
      // A subgraph's arena lies after the kernel's own scratch: a Loop keeps its carried values
      // there while its body runs.
      const uint64_t own = kernel_workspace(id);
      const uint64_t sub = subgraph_workspace(n, s.name);
      const uint64_t offset = sub > 0 ? (own + 63) / 64 * 64 : 0;
      s.workspace = sub > 0 ? offset + sub : own;
      out_.step_subgraph_offset.push_back(offset);
      out_.step_packed.push_back(kernel_packed(id));
      out_.packed_bytes += out_.step_packed.back();
      out_.program.steps.push_back(std::move(s));
      out_.step_nodes.push_back(id);
    }
  }

  // Weights no step reads, directly or through a view, and the graph does not return: only
  // constant nodes read them, and the runtime releases them once those have run.
  void mark_prepare_only() {
    auto& tensors = out_.program.tensors;
    const std::vector<size_t> root = view_roots();
    std::vector<char> read(tensors.size(), 0);
    for (const ProgramStep& s : out_.program.steps) {
      for (const int v : s.inputs) read[root[static_cast<size_t>(v)]] = 1;
    }
    for (const graph::ValueId v : g_.outputs()) read[root[static_cast<size_t>(v)]] = 1;
    for (size_t v = 0; v < tensors.size(); ++v) {
      ProgramTensor& t = tensors[v];
      t.prepare_only = t.category == Category::weights && t.view_of < 0 && read[v] == 0;
    }
  }

  // Per tensor, the tensor whose buffer it is (the end of its chain of views), each chain walked
  // once: walking it per read made a chain of n Reshapes cost n^2 (10^5 of them: 10 s).
  std::vector<size_t> view_roots() const {
    const auto& tensors = out_.program.tensors;
    constexpr size_t kUnknown = SIZE_MAX;
    std::vector<size_t> root(tensors.size(), kUnknown);
    std::vector<size_t> path;
    for (size_t start = 0; start < tensors.size(); ++start) {
      size_t t = start;
      // A graph's views follow its edges, which topo_order has found acyclic.
      while (root[t] == kUnknown && tensors[t].view_of >= 0) {
        path.push_back(t);
        t = static_cast<size_t>(tensors[t].view_of);
      }
      if (root[t] == kUnknown) root[t] = t;
      for (const size_t v : path) root[v] = root[t];
      path.clear();
    }
    return root;
  }

  bool all_outputs_constant(const graph::Node& n) const {
    if (n.outputs.empty()) return false;
    return std::all_of(n.outputs.begin(), n.outputs.end(), [&](graph::ValueId v) {
      return v == graph::kNoValue || out_.program.tensors[v].category == Category::weights;
    });
  }

  // The kernel's scratch, asked the way the runtime asks (graph::workspace_bytes), with the
  // step's extents under the dim bindings.
  uint64_t kernel_workspace(graph::NodeId id) const {
    return with_context(id,
                        [](const graph::NodeContext& ctx) { return graph::workspace_bytes(ctx); });
  }

  // What the kernel's prepared state keeps (graph::packed_bytes); weights are the constants.
  uint64_t kernel_packed(graph::NodeId id) const {
    const graph::Node& n = g_.node(id);
    if (n.schema == nullptr || n.schema->packed == nullptr) return 0;  // most steps
    std::vector<bool> constant;
    for (graph::ValueId v : n.inputs) {
      constant.push_back(v != graph::kNoValue &&
                         out_.program.tensors[v].category == Category::weights);
    }
    return with_context(
        id, [&](const graph::NodeContext& ctx) { return graph::packed_bytes(ctx, constant); });
  }

  // `ask(ctx)` with the node's context: its tensors' extents under the dim bindings.
  template <class Ask>
  uint64_t with_context(graph::NodeId id, Ask&& ask) const {
    const graph::Node& n = g_.node(id);
    std::vector<std::vector<int64_t>> extents;
    extents.reserve(n.inputs.size() + n.outputs.size());
    auto ref = [&](graph::ValueId v) -> std::optional<graph::TensorRef> {
      if (v == graph::kNoValue) return std::nullopt;
      std::vector<int64_t>& dims = extents.emplace_back();
      // A data-dependent extent at its bound: the scratch for the largest case.
      for (const Dim& d : g_.value(v).shape.dims) {
        const auto r = d.range(dims_);
        dims.push_back(r ? std::max<int64_t>(r->second, 0) : 0);
      }
      return graph::TensorRef{g_.value(v).dtype, dims, nullptr};
    };
    graph::NodeContext ctx(n, id, 0);
    for (graph::ValueId v : n.inputs) {
      const auto t = ref(v);
      ctx.add_input(t ? &*t : nullptr);
    }
    for (graph::ValueId v : n.outputs) {
      const auto t = ref(v);
      ctx.add_output(t ? &*t : nullptr);
    }
    return ask(ctx);
  }

  // Each branch or body runs inside the node's step, in an arena of its own planned inside the
  // step's scratch: the largest over branches, since only one runs.
  uint64_t subgraph_workspace(const graph::Node& n, const std::string& step_name) {
    uint64_t worst = 0;
    for (size_t i = 0; i < n.subgraphs.size(); ++i) {
      if (!graph::subgraph_runs(g_, n, i)) continue;
      const graph::Subgraph& sub = n.subgraphs[i];
      GraphProgramOptions child_options;
      child_options.inputs = InputsPolicy::caller;
      child_options.dims = dims_;
      child_options.subgraph_arena = options_.subgraph_arena;
      GraphProgram child = build_program(*sub.graph, child_options);
      const Timeline t = simulate(child.program);
      SubgraphMemory m{step_name, sub.attribute, t.lower_bound_bytes, t.total_peak_bytes};
      m.planned = static_cast<bool>(options_.subgraph_arena);
      m.arena_bytes =
          m.planned ? options_.subgraph_arena(*sub.graph, child, t) : m.lower_bound_bytes;
      out_.subgraphs.push_back(m);
      const std::string where = std::string(step_name).append("/").append(sub.attribute);
      if (!m.planned) {
        out_.warnings.push_back(where +
                                ": its arena is counted at its lower bound (no planner was "
                                "given for subgraphs); figures that include it are at least");
      }
      for (auto& w : child.warnings)
        out_.warnings.push_back(std::string(where).append(": ").append(w));
      for (auto& b : child.bounded) out_.bounded.push_back({where + ": " + b.tensor, b.bound_by});
      worst = std::max(worst, m.arena_bytes);
    }
    return worst;
  }

  const graph::Graph& g_;
  const GraphProgramOptions& options_;
  GraphProgram& out_;
  DimBindings dims_;
  graph::ValueId first_unknown_ = graph::kNoValue;
  std::vector<ProgramTensor> returned_copies_;  // own_outputs' copies, until added last
};

}  // namespace

GraphProgram build_program(const graph::Graph& g, const GraphProgramOptions& options) {
  GraphProgram out;
  ProgramBuilder(g, options, out).build();
  return out;
}

}  // namespace footprint::analysis
