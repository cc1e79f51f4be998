#include "graph_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "footprint/analysis/memory_order.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/node_runner.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/plan/planner.hpp"
#include "footprint/runtime/op_kernels.hpp"

namespace footprint::runtime {
namespace {

using analysis::Category;

// The analysis sized every tensor with checked arithmetic first, so an overflow here is a bug;
// it still throws rather than hand a kernel a buffer smaller than its extents.
size_t bytes_of(DType t, const std::vector<int64_t>& dims) {
  if (t == DType::string) return 0;
  const auto n = checked_numel(dims.data(), dims.size());
  const auto bytes = n ? dtype_storage_bytes(t, *n) : std::nullopt;
  if (!bytes)
    throw SizeOverflow("the bytes of a " + std::string(dtype_name(t)) + " tensor overflow");
  return *bytes;
}

// A known value's elements as `dtype` into `out` (`bytes` long); false for a dtype it does not
// hold or a size that differs.
bool write_known(const graph::KnownValue& known, DType dtype, std::byte* out, size_t bytes) {
  const size_t n = known.numel();
  auto fill = [&]<class T>(T /*tag*/) {
    if (bytes != n * sizeof(T)) return false;
    for (size_t i = 0; i < n; ++i) {
      T x{};
      if (!known.ints.empty()) {  // exact, past 2^53 too
        const auto v = known.ints[i].value();
        if (!v) return false;
        x = static_cast<T>(*v);
      } else {
        x = static_cast<T>(known.reals[i]);
      }
      std::memcpy(out + i * sizeof(T), &x, sizeof(T));
    }
    return true;
  };
  switch (dtype) {
    case DType::int64:
      return fill(int64_t{});
    case DType::int32:
      return fill(int32_t{});
    case DType::boolean:
      return fill(bool{});
    case DType::float32:
      return fill(float{});
    case DType::float64:
      return fill(double{});
    default:
      return false;
  }
}

}  // namespace

GraphRunner::GraphRunner(const graph::Graph& g, const DimBindings& dims,
                         const SessionOptions& options, const GraphRunner* parent)
    : g_(g), dims_bindings_(dims), options_(options), parent_(parent) {
  if (parent_ == nullptr) run_bindings_ = dims_bindings_;
  bindings_ = parent_ != nullptr ? parent_->bindings_ : &run_bindings_;
  bind_extents();
  own_origins();
  make_children();
  build_plan();
  place_values();
  evaluate_constants();
  prepare_kernels();
}

GraphRunner::~GraphRunner() = default;

void GraphRunner::fail(const std::string& what) const {
  throw Error("graph " + in_quotes(g_.name()) + ": " + what);
}

int64_t GraphRunner::opset_of(const graph::Node& n) const {
  return g_.opset(n.domain);
}

void GraphRunner::bind_extents() {
  const size_t n = g_.values().size();
  dims_.assign(n, {});
  dims_known_.assign(n, false);
  dynamic_.assign(n, 0);
  run_dims_.assign(n, {});
  for (size_t v = 0; v < n; ++v) {
    const graph::Value& value = g_.value(static_cast<graph::ValueId>(v));
    if (!value.shape.ranked) continue;
    bool known = true;
    bool dynamic = false;
    std::vector<int64_t> extents;
    extents.reserve(value.shape.rank());
    for (const Dim& d : value.shape.dims) {
      // A data-dependent extent is planned, prepared and allocated at its bound, as analysis
      // counts it; each run then gives it what the data made of it.
      std::optional<int64_t> e;
      if (d.is_data_dependent()) {
        const auto r = d.range(dims_bindings_);
        if (r) e = r->second;
        dynamic = true;
      } else {
        e = d.evaluate(dims_bindings_);
      }
      if (!e || *e < 0) {
        known = false;
        break;
      }
      extents.push_back(*e);
    }
    if (!known) continue;
    if (dynamic) run_dims_[v] = extents;
    dims_[v] = std::move(extents);
    dims_known_[v] = true;
    dynamic_[v] = dynamic ? 1 : 0;
  }
}

void GraphRunner::own_origins() {
  // What comes from outside (a branch's outer values) is bound by the graph that decides it.
  std::vector<std::string> outside;
  for (size_t v = 0; v < g_.values().size(); ++v) {
    const graph::Value& value = g_.value(static_cast<graph::ValueId>(v));
    if (value.kind != graph::ValueKind::input && value.kind != graph::ValueKind::outer) continue;
    for (const Dim& d : value.shape.dims) d.collect_bound_origins(outside);
  }
  for (const graph::Node& n : g_.nodes()) {
    for (graph::ValueId o : n.outputs) {
      if (o == graph::kNoValue) continue;
      for (const Dim& d : g_.value(o).shape.dims) {
        const auto origin = d.origin();
        if (!origin || std::find(outside.begin(), outside.end(), *origin) != outside.end())
          continue;
        // The run binds it under its origin's name, beside the named dims: one a model names
        // so too would be read for it.
        if (dims_bindings_.contains(*origin)) {
          fail("a dim is named " + in_quotes(std::string(*origin)) +
               ", as the data-dependent extent of that op");
        }
        int64_t* slot = &bindings_->emplace(std::string(*origin), -1).first->second;
        if (std::find(own_origins_.begin(), own_origins_.end(), slot) == own_origins_.end()) {
          own_origins_.push_back(slot);
          own_origin_names_.emplace_back(*origin);
        }
      }
    }
  }
}

void GraphRunner::make_children() {
  children_.resize(g_.nodes().size());
  for (size_t id = 0; id < g_.nodes().size(); ++id) {
    const graph::Node& n = g_.node(static_cast<graph::NodeId>(id));
    for (size_t i = 0; i < n.subgraphs.size(); ++i) {
      // A subgraph that cannot run (the untaken branch of a known condition) is never prepared.
      children_[id].push_back(
          graph::subgraph_runs(g_, n, i)
              ? std::make_unique<GraphRunner>(*n.subgraphs[i].graph, dims_bindings_, options_, this)
              : nullptr);
    }
  }
}

const GraphRunner* GraphRunner::find_runner(const graph::Graph& sub) const {
  for (const auto& runners : children_) {
    for (const auto& child : runners) {
      if (!child) continue;
      if (&child->graph() == &sub) return child.get();
      if (const GraphRunner* deeper = child->find_runner(sub)) return deeper;
    }
  }
  return nullptr;
}

const GraphRunner& GraphRunner::child_for(const graph::Graph& sub) const {
  const GraphRunner* r = find_runner(sub);
  if (r == nullptr) fail("subgraph " + in_quotes(sub.name()) + " has no runner");
  return *r;
}

void GraphRunner::build_plan() {
  analysis::GraphProgramOptions po;
  po.inputs = analysis::InputsPolicy::caller;
  po.dims = dims_bindings_;
  // A branch runs inside its node's step, in the arena its own runner planned.
  po.subgraph_arena = [this](const graph::Graph& sub, const analysis::GraphProgram&,
                             const analysis::Timeline&) { return child_for(sub).arena_bytes(); };
  if (options_.order == "memory" && parent_ == nullptr) {
    po.order = analysis::memory_order(g_, po).order;
  }
  program_ = analysis::build_program(g_, po);
  steps_.reserve(program_.step_nodes.size());
  for (graph::NodeId id : program_.step_nodes) {
    Step step;
    step.node = id;
    steps_.push_back(step);
  }
  timeline_ = analysis::simulate(program_.program);
  const std::vector<plan::Buffer> buffers = analysis::arena_buffers(timeline_, program_.program);
  plan_ = plan::plan_buffers(buffers, options_.planner);
  for (size_t i = 0; i < timeline_.buffers.size(); ++i) {
    const analysis::BufferLifetime& b = timeline_.buffers[i];
    if (b.category != Category::workspace) continue;
    steps_[static_cast<size_t>(b.first)].workspace_offset = plan_.offsets[i];
    steps_[static_cast<size_t>(b.first)].workspace_bytes = b.bytes;
  }
}

void GraphRunner::place_values() {
  placement_.assign(g_.values().size(), {});
  std::vector<int64_t> arena_offset(g_.values().size(), -1);
  for (size_t i = 0; i < timeline_.buffers.size(); ++i) {
    const analysis::BufferLifetime& b = timeline_.buffers[i];
    if (b.category == Category::activations) arena_offset[b.tensor] = plan_.offsets[i];
  }
  // Roots first (what owns a buffer), then every view or in-place alias takes its root's home.
  for (size_t v = 0; v < g_.values().size(); ++v) {
    if (timeline_.storage[v] == static_cast<int>(v)) placement_[v] = place_root(v, arena_offset);
  }
  for (size_t v = 0; v < g_.values().size(); ++v) {
    placement_[v] = placement_[static_cast<size_t>(timeline_.storage[v])];
  }
  for (size_t k = 0; k < g_.outputs().size(); ++k) {
    const graph::ValueId o = g_.outputs()[k];
    const Placement& p = placement_[o];
    if (p.home != Home::output || p.index != static_cast<int64_t>(k)) {
      output_copies_.emplace_back(k, o);
    }
  }
}

GraphRunner::Placement GraphRunner::place_root(size_t v, const std::vector<int64_t>& arena_offset) {
  const auto id = static_cast<graph::ValueId>(v);
  const graph::Value& value = g_.value(id);
  auto position = [id](const std::vector<graph::ValueId>& list) {
    return static_cast<int64_t>(std::find(list.begin(), list.end(), id) - list.begin());
  };
  switch (value.kind) {
    case graph::ValueKind::input:
      return {Home::input, position(g_.inputs())};
    case graph::ValueKind::outer:
      return {Home::outer, value.outer_value};
    case graph::ValueKind::initializer: {
      onnx::TensorBytes w =
          onnx::tensor_bytes(*value.initializer, onnx::element_alignment(value.dtype));
      // A copy (an exporter's raw_data at an odd offset, or typed fields) is all the kernels read:
      // the mapped original's pages go back to the OS as soon as it is made, so preparing never
      // holds a model's weights twice (PyTorch's exporter misaligns most of them).
      if (!w.is_view()) {
        prepare_heap_.add(w.size());
        if (g_.model() != nullptr) {
          released_mapped_bytes_ +=
              g_.model()->source().release_pages(onnx::tensor_view(*value.initializer));
        }
      }
      weights_.push_back(std::move(w));
      return {Home::weight, static_cast<int64_t>(weights_.size() - 1)};
    }
    case graph::ValueKind::intermediate:
      break;
  }
  switch (program_.program.tensors[v].category) {
    case Category::weights:
      return {Home::constant, id};  // its bytes are made when constants are evaluated
    case Category::activations: {
      if (arena_offset[v] >= 0) return {Home::arena, arena_offset[v]};
      // Viewed by a graph output, the buffer is that output (the timeline counts it so): the
      // producer writes straight into the output.
      const auto& outs = g_.outputs();
      for (size_t k = 0; k < outs.size(); ++k) {
        if (timeline_.storage[outs[k]] == id) return {Home::output, static_cast<int64_t>(k)};
      }
      return {};
    }
    case Category::outputs:
      return {Home::output, position(g_.outputs())};
    default:
      return {};
  }
}

std::unique_ptr<graph::NodeContext> GraphRunner::make_context(graph::NodeId id) {
  const graph::Node& n = g_.node(id);
  auto ctx = std::make_unique<graph::NodeContext>(n, id, opset_of(n), this);
  auto ref_of = [&](graph::ValueId v, const char* role, size_t i) {
    const graph::Value& value = g_.value(v);
    if (!dims_known_[v]) {
      throw Error("node " + n.label(id) + ": " + role + " " + std::to_string(i) + " " +
                  in_quotes(value.name) + " has extents unknown before running (" +
                  std::string(dtype_name(value.dtype)) + value.shape.to_string() +
                  "); footprint runs graphs whose shapes follow from the inputs' extents");
    }
    return graph::TensorRef{value.dtype, dims_[v], nullptr};
  };
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const graph::ValueId v = n.inputs[i];
    ctx->present_inputs.push_back(v != graph::kNoValue ? 1 : 0);
    ctx->inputs.push_back(v != graph::kNoValue ? ref_of(v, "input", i) : graph::TensorRef{});
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const graph::ValueId v = n.outputs[i];
    ctx->present_outputs.push_back(v != graph::kNoValue ? 1 : 0);
    ctx->outputs.push_back(v != graph::kNoValue ? ref_of(v, "output", i) : graph::TensorRef{});
  }
  return ctx;
}

void GraphRunner::point_context(graph::NodeContext& ctx) const {
  const graph::Node& n = ctx.node();
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] != graph::kNoValue) ctx.inputs[i].data = pointers_[n.inputs[i]];
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] != graph::kNoValue) ctx.outputs[i].data = pointers_[n.outputs[i]];
  }
}

// Every tensor a step touches has a home before it runs; a null one is a placement bug, caught
// here rather than as a crash inside a kernel.
void GraphRunner::check_pointers(size_t step, const graph::NodeContext& ctx) const {
  const graph::Node& n = ctx.node();
  // An input the kernel's state replaces (packed weights) may have been released.
  auto check = [&](const std::vector<graph::ValueId>& ids,
                   const std::vector<graph::TensorRef>& refs, bool inputs) {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == graph::kNoValue || refs[i].data != nullptr || refs[i].bytes() == 0) continue;
      if (inputs && replaced(step, i)) continue;
      throw Error("node " + n.label(ctx.node_id()) + ": " + in_quotes(g_.value(ids[i]).name) +
                  " has no memory (root " + in_quotes(g_.value(timeline_.storage[ids[i]]).name) +
                  ", category " +
                  std::string(analysis::category_name(
                      program_.program.tensors[timeline_.storage[ids[i]]].category)) +
                  ", " + std::to_string(program_.program.tensors[ids[i]].bytes) + " bytes)");
    }
  };
  check(n.inputs, ctx.inputs, true);
  check(n.outputs, ctx.outputs, false);
}

void GraphRunner::point_values(std::byte* arena, std::span<const graph::TensorRef> inputs,
                               std::span<const graph::TensorRef> outputs) {
  for (size_t v = 0; v < placement_.size(); ++v) {
    const Placement& p = placement_[v];
    const auto i = static_cast<size_t>(p.index);
    void* ptr = nullptr;
    switch (p.home) {
      case Home::input:
        ptr = i < inputs.size() ? inputs[i].data : nullptr;
        break;
      case Home::weight:
        ptr = const_cast<std::byte*>(weights_[i].bytes().data());
        break;
      case Home::constant:
        ptr = const_cast<std::byte*>(constant_data_[i]);
        break;
      case Home::arena:
        ptr = arena != nullptr ? arena + p.index : nullptr;
        break;
      case Home::output:
        ptr = i < outputs.size() ? outputs[i].data : nullptr;
        break;
      case Home::outer:
        // Unknown while the enclosing graph is still being prepared.
        ptr = parent_ != nullptr && i < parent_->pointers_.size() ? parent_->pointers_[i] : nullptr;
        break;
      case Home::none:
        break;
    }
    pointers_[v] = ptr;
  }
}

// Constants (weights computed from weights, shape arithmetic, Constant nodes) are computed once,
// here, on the heap; each intermediate is released right after its last constant consumer, so
// preparing peaks at the kept constants plus what one node has in flight.
void GraphRunner::evaluate_constants() {
  const size_t nv = g_.values().size();
  constants_.resize(nv);
  constant_data_.assign(nv, nullptr);
  pointers_.assign(nv, nullptr);
  std::vector<graph::NodeId> constant_nodes;
  std::vector<int> last_use(nv, -1);
  std::vector<char> is_step(g_.nodes().size(), 0);
  for (const Step& s : steps_) is_step[static_cast<size_t>(s.node)] = 1;
  for (graph::NodeId id : program_.order) {
    if (is_step[static_cast<size_t>(id)]) continue;
    for (auto v : g_.node(id).inputs) {
      if (v != graph::kNoValue)
        last_use[timeline_.storage[v]] = static_cast<int>(constant_nodes.size());
    }
    constant_nodes.push_back(id);
  }
  for (size_t k = 0; k < constant_nodes.size(); ++k) {
    evaluate_constant(constant_nodes[k]);
    for (auto v : g_.node(constant_nodes[k]).inputs) {
      if (v == graph::kNoValue) continue;
      const auto r = static_cast<size_t>(timeline_.storage[v]);
      // Read only while preparing (the weights a folded BatchNormalization's are computed from,
      // shape arithmetic), as analysis marks them.
      if (last_use[r] == static_cast<int>(k) && program_.program.tensors[r].prepare_only) {
        release_root(r);
      }
    }
  }
  for (size_t v = 0; v < nv; ++v) constant_bytes_ += constants_[v].size();
}

void GraphRunner::evaluate_constant(graph::NodeId id) {
  const graph::Node& n = g_.node(id);
  for (auto o : n.outputs) {
    if (o == graph::kNoValue || timeline_.storage[o] != o) continue;
    if (!dims_known_[o]) fail("constant " + in_quotes(g_.value(o).name) + " has unknown extents");
    if (const std::byte* in_model = constant_in_model(n); in_model != nullptr) {
      constant_data_[o] = in_model;
      continue;
    }
    constants_[o] =
        allocate(o, "constant " + in_quotes(g_.value(o).name) + " of node " + n.label(id));
    constant_data_[o] = constants_[o].data();
    prepare_heap_.add(constants_[o].size());
  }
  if (computed_from_run(n)) {
    // Inference knows the value although an input is computed when running (an extent of
    // Shape(x) that does not depend on x's data-dependent ones): its elements are the constant.
    for (auto o : n.outputs) {
      if (o == graph::kNoValue || timeline_.storage[o] != o) continue;
      const std::optional<graph::KnownValue>& known = g_.value(o).known;
      if (!known || !known->is_concrete() ||
          !write_known(*known, g_.value(o).dtype, constants_[o].data(), constants_[o].size())) {
        fail("constant " + in_quotes(g_.value(o).name) + " of node " + n.label(id) +
             " reads a value computed when running");
      }
    }
    return;
  }
  point_values(nullptr, {}, {});
  auto ctx = make_context(id);
  point_context(*ctx);
  const graph::OpSchema* schema = n.schema;
  if (constant_in_model(n) != nullptr) return;
  if (schema != nullptr && schema->output_view_of >= 0 &&
      ctx->outputs[0].data == ctx->inputs[static_cast<size_t>(schema->output_view_of)].data)
    return;
  if (schema == nullptr || schema->kernel == nullptr) {
    throw Error("node " + n.label(id) + ": no kernel to evaluate this constant with");
  }
  // The same evaluation the graph builder's value propagation and `footprint fold` use: a heap
  // workspace and the prepare hook's state for this one call.
  ctx->thread_count = options_.threads;
  graph::evaluate(*ctx);
}

bool GraphRunner::computed_from_run(const graph::Node& n) const {
  return std::any_of(n.inputs.begin(), n.inputs.end(), [&](graph::ValueId v) {
    return v != graph::kNoValue &&
           program_.program.tensors[timeline_.storage[v]].category != Category::weights;
  });
}

AlignedBuffer GraphRunner::allocate(graph::ValueId v, const std::string& what) const {
  const size_t bytes = bytes_of(g_.value(v).dtype, dims_[static_cast<size_t>(v)]);
  try {
    return AlignedBuffer(bytes);
  } catch (const std::bad_alloc&) {
    throw Error(what + ": out of memory allocating " + std::to_string(bytes) + " bytes");
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
}

// A Constant node whose tensor is stored raw and suitably aligned is read where it lies.
const std::byte* GraphRunner::constant_in_model(const graph::Node& n) const {
  if (n.outputs.empty() || n.outputs[0] == graph::kNoValue || !g_.is_stored_value(n.outputs[0]))
    return nullptr;
  const onnx::TensorProto* t = g_.constant_tensor(n.outputs[0]);
  if (t == nullptr) return nullptr;
  if (!onnx::readable_in_place(*t, onnx::element_alignment(onnx::tensor_dtype(*t)))) {
    return nullptr;
  }
  return onnx::tensor_view(*t).data();
}

void GraphRunner::prepare_kernels() {
  point_values(nullptr, {}, {});
  Readers readers = count_readers();
  for (const Step& s : steps_) {
    const graph::Node& n = g_.node(s.node);
    auto ctx = make_context(s.node);
    point_context(*ctx);
    const graph::OpSchema* schema = n.schema;
    if (schema == nullptr) {
      throw Error("node " + n.label(s.node) + ": the op " + in_quotes(n.op_type) +
                  " is unknown to footprint");
    }
    // A view whose output already is its input has nothing to write.
    const bool aliased =
        runtime::runs_as_view_copy(*schema) && n.outputs[0] != graph::kNoValue &&
        timeline_.storage[n.outputs[0]] ==
            timeline_.storage[n.inputs[static_cast<size_t>(schema->output_view_of)]];
    if (schema->kernel == nullptr) {
      throw Error("node " + n.label(s.node) + ": footprint has no kernel for " +
                  in_quotes(n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type));
    }
    dynamic_steps_.push_back(dynamic_kind(*ctx));
    std::unique_ptr<graph::KernelState> state = aliased ? nullptr : graph::prepare(*ctx);
    ctx->kernel_state = state.get();
    if (state != nullptr) {
      packed_bytes_ += state->owned_bytes();
      prepare_heap_.add(state->owned_bytes());
    }
    states_.push_back(std::move(state));
    contexts_.push_back(std::move(ctx));
    skip_.push_back(aliased ? 1 : 0);
    release_replaced(states_.size() - 1, readers);
  }
}

// Whether value v's extents depend on values only along axis 0 (or not at all).
bool GraphRunner::varies_only_in_rows(graph::ValueId v) const {
  if (v == graph::kNoValue || !dynamic_[v]) return true;
  const auto& dims = g_.value(v).shape.dims;
  for (size_t k = 1; k < dims.size(); ++k) {
    if (dims[k].is_data_dependent()) return false;
  }
  return !dims.empty();
}

GraphRunner::Dynamic GraphRunner::dynamic_kind(const graph::NodeContext& ctx) const {
  const graph::Node& n = ctx.node();
  const graph::ValueId* first_dynamic = nullptr;
  for (const auto* list : {&n.inputs, &n.outputs}) {
    for (const graph::ValueId& v : *list) {
      if (v != graph::kNoValue && dynamic_[v] && first_dynamic == nullptr) first_dynamic = &v;
    }
  }
  if (first_dynamic == nullptr) return Dynamic::none;
  const graph::OpSchema& row = *n.schema;
  if (row.prepare == nullptr) return Dynamic::at_run_extents;
  // A kernel prepared for its extents (a primitive built for them) runs at the bound it was
  // prepared for, where its row promises that rows are independent and only rows vary.
  bool rows_only = row.rows_at_bound && !n.inputs.empty() && !n.outputs.empty() &&
                   n.inputs[0] != graph::kNoValue && varies_only_in_rows(n.inputs[0]) &&
                   varies_only_in_rows(n.outputs[0]);
  for (size_t i = 1; rows_only && i < n.inputs.size(); ++i) {
    rows_only = n.inputs[i] == graph::kNoValue || !dynamic_[n.inputs[i]];
  }
  for (size_t i = 1; rows_only && i < n.outputs.size(); ++i) {
    rows_only = n.outputs[i] == graph::kNoValue || !dynamic_[n.outputs[i]];
  }
  if (rows_only) return Dynamic::at_bound;
  const graph::Value& value = g_.value(*first_dynamic);
  throw Error("node " + n.label(ctx.node_id()) +
              ": its kernel is prepared for fixed extents, and " + in_quotes(value.name) +
              " has extents that depend on values (" + std::string(dtype_name(value.dtype)) +
              value.shape.to_string() + "); footprint does not run this op on them yet");
}

bool GraphRunner::evaluate_run_extents(graph::ValueId v, std::vector<int64_t>& out) const {
  const std::vector<Dim>& dims = g_.value(v).shape.dims;
  const std::vector<int64_t>& bound = dims_[v];
  out.resize(dims.size());
  bool all = true;
  for (size_t k = 0; k < dims.size(); ++k) {
    const auto e = dims[k].evaluate(*bindings_);
    if (!e) {
      out[k] = bound[k];
      all = false;
    } else if (*e < 0 || *e > bound[k]) {
      fail("value " + in_quotes(g_.value(v).name) + " " + g_.value(v).shape.to_string() +
           ": axis " + std::to_string(k) + " came to " + std::to_string(*e) +
           ", outside its bound " + std::to_string(bound[k]));
    } else {
      out[k] = *e;
    }
  }
  return all;
}

void GraphRunner::enter_dynamic_step(size_t s) {
  graph::NodeContext& ctx = *contexts_[s];
  const graph::Node& n = ctx.node();
  if (dynamic_steps_[s] == Dynamic::at_bound) {
    // The kernel runs on the bound; the rows past this run's are zeros, not stale arena bytes.
    const graph::ValueId v = n.inputs[0];
    if (!dynamic_[v]) return;
    if (!evaluate_run_extents(v, run_dims_[v]))
      fail("value " + in_quotes(g_.value(v).name) + " has no extents yet in this run");
    const size_t used = bytes_of(g_.value(v).dtype, run_dims_[v]);
    const size_t planned = bytes_of(g_.value(v).dtype, dims_[v]);
    if (planned > used && pointers_[v] != nullptr)
      std::memset(static_cast<std::byte*>(pointers_[v]) + used, 0, planned - used);
    return;
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const graph::ValueId v = n.inputs[i];
    if (v == graph::kNoValue || !dynamic_[v]) continue;
    if (!evaluate_run_extents(v, run_dims_[v])) {
      throw Error("node " + n.label(ctx.node_id()) + ": input " + std::to_string(i) + " " +
                  in_quotes(g_.value(v).name) + " " + g_.value(v).shape.to_string() +
                  " has no extents yet in this run");
    }
    ctx.inputs[i].dims = run_dims_[v];
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const graph::ValueId v = n.outputs[i];
    if (v == graph::kNoValue || !dynamic_[v]) continue;
    evaluate_run_extents(v, run_dims_[v]);  // a dim the op decides is given its bound
    ctx.outputs[i].dims = run_dims_[v];
  }
  // A workspace sized for the bounds must hold what the kernel needs for these extents.
  if (n.schema->workspace != nullptr) {
    const uint64_t needed = graph::workspace_bytes(ctx);
    if (needed > steps_[s].workspace_bytes) {
      throw Error("node " + n.label(ctx.node_id()) + ": needs " + std::to_string(needed) +
                  " bytes of scratch for this run's extents, more than the " +
                  std::to_string(steps_[s].workspace_bytes) + " planned for their bounds");
    }
  }
}

void GraphRunner::leave_dynamic_step(size_t s) {
  graph::NodeContext& ctx = *contexts_[s];
  const graph::Node& n = ctx.node();
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const graph::ValueId v = n.outputs[i];
    if (v == graph::kNoValue || !dynamic_[v]) continue;
    const std::span<const int64_t> given = ctx.outputs[i].dims;
    const bool reported =
        i < ctx.reported_extents.size() && given.data() == ctx.reported_extents[i].data();
    const std::vector<Dim>& dims = g_.value(v).shape.dims;
    for (size_t k = 0; k < dims.size() && k < given.size(); ++k) {
      const auto origin = dims[k].origin();
      if (!origin) continue;
      const auto it = bindings_->find(*origin);
      if (it == bindings_->end() || it->second >= 0) continue;
      if (!n.schema->reports_extents) {
        throw Error("node " + n.label(ctx.node_id()) + ": output " + std::to_string(i) + " " +
                    in_quotes(g_.value(v).name) + " " + g_.value(v).shape.to_string() +
                    " has extents that depend on values, and its kernel does not report them; "
                    "footprint does not run this op on such extents yet");
      }
      it->second = given[k];
    }
    // Inference said how the extents follow from the ones reported so far: what the kernel
    // produced must be that (the runtime half of `run --check-shapes`).
    // (Not reported, `given` is run_dims_[v] itself, with the bound where the op decided.)
    std::vector<int64_t>& now = run_dims_[v];
    const bool evaluated = evaluate_run_extents(v, now);
    if (!evaluated || (reported && !std::equal(given.begin(), given.end(), now.begin()))) {
      throw Error("node " + n.label(ctx.node_id()) + ": output " + std::to_string(i) + " " +
                  in_quotes(g_.value(v).name) + " came out " + extents_text(given) +
                  ", where inference says " + g_.value(v).shape.to_string() + " = " +
                  extents_text(now));
    }
    // A step run at the bound keeps the extents it was prepared with.
    if (dynamic_steps_[s] != Dynamic::at_bound) ctx.outputs[i].dims = now;
  }
}

void GraphRunner::run_step(size_t s, std::span<std::byte> arena, int threads) {
  graph::NodeContext& ctx = *contexts_[s];
  point_context(ctx);
  ctx.scratch = arena.subspan(static_cast<size_t>(steps_[s].workspace_offset),
                              static_cast<size_t>(steps_[s].workspace_bytes));
  ctx.thread_count = threads;
  check_pointers(s, ctx);
  graph::run(ctx);
}

// A computed constant whose every reader holds its own packed copy (KernelState::replaces_input)
// is never read again: it is released as soon as its last reader is prepared, so packing
// replaces the weights rather than doubling them, even while preparing.
GraphRunner::Readers GraphRunner::count_readers() const {
  const size_t nv = g_.values().size();
  Readers r{std::vector<int>(nv, 0), std::vector<char>(nv, 0)};
  for (auto v : g_.outputs()) r.kept[timeline_.storage[v]] = 1;
  for (const Step& s : steps_) {
    const graph::Node& n = g_.node(s.node);
    for (auto v : n.implicit_inputs) r.kept[timeline_.storage[v]] = 1;
    for (auto v : n.inputs) {
      if (v != graph::kNoValue) ++r.left[timeline_.storage[v]];
    }
  }
  return r;
}

bool GraphRunner::replaced(size_t s, size_t i) const {
  const graph::Node& n = g_.node(steps_[s].node);
  const uint64_t packed = !skip_[s] && states_[s] != nullptr ? states_[s]->owned_bytes() : 0;
  const bool constant = n.inputs[i] != graph::kNoValue &&
                        program_.program.tensors[n.inputs[i]].category == Category::weights;
  return graph::replaced_by_packing(n.schema, i, packed, constant);
}

void GraphRunner::release_replaced(size_t s, Readers& readers) {
  const graph::Node& n = g_.node(steps_[s].node);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] == graph::kNoValue) continue;
    const auto r = static_cast<size_t>(timeline_.storage[n.inputs[i]]);
    if (!replaced(s, i)) readers.kept[r] = 1;
    if (--readers.left[r] > 0 || readers.kept[r]) continue;
    const uint64_t held = constants_[r].size();
    if (release_root(r)) constant_bytes_ -= held;
  }
}

bool GraphRunner::release_root(size_t r) {
  if (constants_[r].size() > 0) {
    prepare_heap_.drop(constants_[r].size());
    released_constant_bytes_ += constants_[r].size();
    constants_[r] = AlignedBuffer();
    constant_data_[r] = nullptr;
    return true;
  }
  if (placement_[r].home != Home::weight) return false;
  // An initializer: a copy made for alignment is freed; one read in place from a mapped model
  // gives its pages back to the OS (read from the file again if anything touched them).
  onnx::TensorBytes& w = weights_[static_cast<size_t>(placement_[r].index)];
  if (!w.is_view()) {
    if (w.size() == 0) return false;
    prepare_heap_.drop(w.size());
    released_constant_bytes_ += w.size();
    w = onnx::TensorBytes();
    return true;
  }
  if (g_.model() != nullptr)
    released_mapped_bytes_ += g_.model()->source().release_pages(w.bytes());
  return false;
}

std::pair<uint64_t, uint64_t> GraphRunner::bounded_bytes() const {
  std::pair<uint64_t, uint64_t> out{0, 0};
  for (size_t v = 0; v < dynamic_.size(); ++v) {
    if (!dynamic_[v] || timeline_.storage[v] != static_cast<int>(v)) continue;
    const DType t = g_.value(static_cast<graph::ValueId>(v)).dtype;
    out.first += bytes_of(t, dims_[v]);
    out.second += bytes_of(t, run_dims_[v]);
  }
  return out;
}

uint64_t GraphRunner::mapped_weight_bytes() const {
  uint64_t total = 0;
  for (const onnx::TensorBytes& w : weights_) total += w.is_view() ? w.size() : 0;
  // Constant nodes read where they lie in the model (constant_in_model).
  for (size_t v = 0; v < constant_data_.size(); ++v) {
    if (constant_data_[v] != nullptr && constants_[v].size() == 0) {
      total += bytes_of(g_.value(static_cast<graph::ValueId>(v)).dtype, dims_[v]);
    }
  }
  return total;
}

void GraphRunner::run(std::span<std::byte> arena, std::span<const graph::TensorRef> inputs,
                      std::span<const graph::TensorRef> outputs, int threads,
                      std::span<uint64_t> step_heap, std::span<uint64_t> step_ns) {
  if (arena.size() < arena_bytes()) fail("the arena is smaller than the plan");
  for (int64_t* origin : own_origins_) *origin = -1;
  point_values(arena.data(), inputs, outputs);
  using Clock = std::chrono::steady_clock;
  for (size_t s = 0; s < steps_.size(); ++s) {
    const bool timed = s < step_ns.size();
    const auto start = timed ? Clock::now() : Clock::time_point{};
    const bool dynamic = dynamic_steps_[s] != Dynamic::none;
    if (dynamic) enter_dynamic_step(s);
    if (!skip_[s]) run_step(s, arena, threads);
    if (dynamic) leave_dynamic_step(s);
    if (timed) {
      step_ns[s] = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    }
    if (s < step_heap.size()) step_heap[s] = heap::snapshot().current_bytes;
  }
  for (const auto& [k, v] : output_copies_) {
    const size_t bytes = bytes_of(g_.value(v).dtype, run_extents(v));
    if (bytes > 0 && outputs[k].data != pointers_[v])
      std::memcpy(outputs[k].data, pointers_[v], bytes);
  }
}

void GraphRunner::run_subgraph(graph::NodeId node, std::string_view attribute,
                               std::span<const graph::TensorRef> inputs,
                               std::span<graph::TensorRef> outputs, std::span<std::byte> scratch,
                               int threads) {
  const auto& subs = g_.node(node).subgraphs;
  for (size_t i = 0; i < subs.size(); ++i) {
    if (subs[i].attribute != attribute) continue;
    if (!children_[static_cast<size_t>(node)][i])
      fail("subgraph " + in_quotes(attribute) + " cannot run: its condition was known");
    GraphRunner& child = *children_[static_cast<size_t>(node)][i];
    const auto& outs = child.graph().outputs();
    if (outputs.size() != outs.size()) fail("subgraph " + in_quotes(attribute) + ": output count");
    const auto& node_outs = g_.node(node).outputs;
    for (size_t k = 0; k < outs.size(); ++k) {
      // A branch's output is at most the node's; exactly it, unless either depends on values.
      const size_t planned = bytes_of(child.graph().value(outs[k]).dtype, child.dims_[outs[k]]);
      const bool node_varies =
          k < node_outs.size() && node_outs[k] != graph::kNoValue && dynamic_[node_outs[k]];
      const size_t room = node_varies ? bytes_of(g_.value(node_outs[k]).dtype, dims_[node_outs[k]])
                                      : outputs[k].bytes();
      const bool varies = child.dynamic_[outs[k]] || node_varies;
      if (planned > room || (!varies && planned != room)) {
        throw Error("node " + g_.node(node).label(node) + ": " + std::string(attribute) +
                    " output " + std::to_string(k) + " " +
                    child.graph().value(outs[k]).shape.to_string() + " is planned at " +
                    std::to_string(planned) + " bytes, the node's at " + std::to_string(room));
      }
    }
    child.run(scratch, inputs, {outputs.data(), outputs.size()}, threads);
    // What the branch produced, for the node to report.
    for (size_t k = 0; k < outs.size(); ++k) outputs[k].dims = child.run_extents(outs[k]);
    return;
  }
  fail("node " + g_.node(node).label(node) + " has no subgraph " + in_quotes(attribute));
}

}  // namespace footprint::runtime
