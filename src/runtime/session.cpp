#include "footprint/runtime/session.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/core/thread_count.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/lower_sequences.hpp"
#include "footprint/graph/prepare_graph.hpp"
#include "footprint/graph/rebatch.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "graph_runner.hpp"

namespace footprint::runtime {
namespace {

// PreparedStats::computes_in of a prepared graph.
DType computes_in(const graph::Graph& g) {
  DType narrowest = DType::float32;
  const auto see16 = [&](DType t) {
    if (t == DType::bfloat16 || (t == DType::float16 && narrowest != DType::bfloat16)) {
      narrowest = t;
    }
  };
  for (const graph::Node& n : g.nodes()) see16(n.rounds_to);
  for (const graph::Value& v : g.values()) {
    if (v.kind != graph::ValueKind::intermediate) continue;
    if (v.dtype == DType::int8 || v.dtype == DType::uint8 || v.dtype == DType::int4 ||
        v.dtype == DType::uint4) {
      return DType::int8;
    }
    see16(v.dtype);
  }
  return narrowest;
}

// The inputs in the graph's input order: by name, or unnamed ones in turn.
std::vector<const Tensor*> match_inputs(const graph::Graph& g, std::span<const Tensor> given) {
  std::vector<const Tensor*> out(g.inputs().size(), nullptr);
  std::vector<char> used(given.size(), 0);
  // The given tensors by name, each name's in the order given (a sequence brings thousands).
  std::unordered_map<std::string_view, std::vector<size_t>> by_name;
  std::vector<size_t> unnamed;
  for (size_t k = 0; k < given.size(); ++k) {
    if (given[k].name().empty()) {
      unnamed.push_back(k);
    } else {
      by_name[given[k].name()].push_back(k);
    }
  }
  std::unordered_map<std::string_view, size_t> taken;  // how many of a name's are used
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const auto it = by_name.find(g.value(g.inputs()[i]).name);
    if (it == by_name.end()) continue;
    size_t& next = taken[it->first];
    if (next == it->second.size()) continue;
    const size_t k = it->second[next++];
    out[i] = &given[k];
    used[k] = 1;
  }
  size_t next_unnamed = 0;
  for (size_t i = 0; i < out.size() && next_unnamed < unnamed.size(); ++i) {
    if (out[i] != nullptr) continue;
    const size_t k = unnamed[next_unnamed++];
    out[i] = &given[k];
    used[k] = 1;
  }
  for (size_t k = 0; k < given.size(); ++k) {
    if (!used[k])
      throw Error("input " + in_quotes(given[k].name()) + " is not an input of the model");
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == nullptr) {
      const graph::Value& v = g.value(g.inputs()[i]);
      if (graph::non_tensor_kind(v) == "sequence") {
        throw Error("input " + in_quotes(v.name) + " is declared a sequence and given no " +
                    "elements (tensors named " + in_quotes(graph::element_name(v.name, 0)) +
                    ", ...); an empty sequence cannot be given yet");
      }
      throw Error("input " + in_quotes(v.name) + " is missing");
    }
  }
  return out;
}

// Binds the declared shape's named dims to the given extents; a fixed dim must match.
void bind_input(const graph::Value& declared, const Tensor& t, DimBindings& dims) {
  const std::string where = "input " + in_quotes(declared.name);
  if (declared.dtype != DType::undefined && declared.dtype != t.dtype()) {
    throw Error(where + ": the model declares " + std::string(dtype_name(declared.dtype)) +
                ", the tensor is " + std::string(dtype_name(t.dtype())));
  }
  if (!declared.shape.ranked) return;
  if (declared.shape.rank() != t.dims().size()) {
    throw Error(where + ": the model declares rank " + std::to_string(declared.shape.rank()) + " " +
                declared.shape.to_string() + ", the tensor has rank " +
                std::to_string(t.dims().size()));
  }
  for (size_t i = 0; i < t.dims().size(); ++i) {
    const Dim& d = declared.shape.dims[i];
    const int64_t given = t.dims()[i];
    if (auto v = d.value()) {
      if (*v != given) {
        throw Error(where + ": dim " + std::to_string(i) + " is " + std::to_string(*v) +
                    " in the model, " + std::to_string(given) + " in the tensor");
      }
      continue;
    }
    std::vector<std::string> symbols;
    d.collect_symbols(symbols);
    if (symbols.size() != 1 || d.to_string() != symbols[0]) continue;
    auto [it, inserted] = dims.emplace(symbols[0], given);
    if (!inserted && it->second != given) {
      throw Error(where + ": dim " + in_quotes(symbols[0]) + " is " + std::to_string(it->second) +
                  " elsewhere, " + std::to_string(given) + " here");
    }
  }
}

// prepare_graph's bind step for a run: the inputs matched to the tensors it was handed, checked
// against their declarations and given their extents, which `extents` records; with
// `bind_values`, the small integer and bool ones also their values (`by_value`).
class TensorBinder final : public graph::InputBinder {
 public:
  TensorBinder(std::span<const Tensor> inputs, std::vector<std::vector<int64_t>>& extents,
               bool bind_values)
      : inputs_(inputs), extents_(extents), bind_values_(bind_values) {}

  void bind(graph::Graph& g, const DimBindings& dims, DimBindings& bound) override {
    // A sequence or optional input arrives as its tensors (graph::element_name).
    std::unordered_set<std::string_view> given;
    for (const Tensor& t : inputs_) given.insert(t.name());
    graph::hold_sequence_inputs(
        g, [&](const std::string& name) { return given.contains(name); }, true);
    matched = match_inputs(g, inputs_);
    bound = dims;
    extents_.clear();
    for (size_t i = 0; i < matched.size(); ++i) {
      const graph::ValueId id = g.inputs()[i];
      bind_input(g.value(id), *matched[i], bound);
      g.mutable_value(id).shape = Shape::of(matched[i]->dims());
      extents_.push_back(matched[i]->dims());
      if (!bind_values_) continue;
      // A small integer or bool tensor, as inference holds values (floats never size a tensor).
      const Tensor& t = *matched[i];
      if (auto k = graph::known_value_of(t.dtype(), t.dims(), {t.data(), t.bytes()},
                                         graph::KnownValue::kMaxElements, 0)) {
        g.mutable_value(id).known = std::move(k);
        by_value.push_back(i);
      }
    }
  }

  std::vector<const Tensor*> matched;  // in the graph's input order
  std::vector<size_t> by_value;        // the inputs whose values inference was given

 private:
  std::span<const Tensor> inputs_;
  std::vector<std::vector<int64_t>>& extents_;
  bool bind_values_;
};

}  // namespace

Session::Session(const graph::Model& model, SessionOptions options)
    : model_(&model), options_(std::move(options)) {
  checked_thread_count(options_.threads, "Session: threads");
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

namespace {

// The planned arena, or an error naming its size and the largest tensor planned in it.
AlignedBuffer allocate_arena(const GraphRunner& runner) {
  const uint64_t bytes = runner.arena_bytes();
  auto what = [&] {
    const analysis::BufferLifetime* largest = nullptr;
    for (const analysis::BufferLifetime& b : runner.timeline().buffers) {
      if (largest == nullptr || b.bytes > largest->bytes) largest = &b;
    }
    std::string out = "the planned arena of " + std::to_string(bytes) + " bytes";
    if (largest != nullptr) {
      out += " (largest: " +
             (largest->tensor >= 0
                  ? in_quotes(runner.program().program.tensors[largest->tensor].name)
                  : std::string("the workspace of step ") + std::to_string(largest->first)) +
             ", " + std::to_string(largest->bytes) + " bytes)";
    }
    return out;
  };
  try {
    return AlignedBuffer(bytes);
  } catch (const std::bad_alloc&) {
    throw Error(what() + ": out of memory");
  } catch (const Error& e) {
    throw Error(what() + ": " + e.what());
  }
}

}  // namespace

std::vector<Session::InputInfo> Session::inputs() const {
  graph::Graph g = model_->graph(op_registry());
  graph::PrepareOptions first;
  first.through = "rebatch";
  graph::prepare_graph(g, options_.dims, first);
  std::vector<InputInfo> out;
  for (auto id : g.inputs()) {
    const graph::Value& v = g.value(id);
    out.push_back({v.name, v.dtype, v.shape, std::string(graph::non_tensor_kind(v))});
  }
  return out;
}

std::vector<Session::OutputInfo> Session::outputs() const {
  const graph::Graph g = model_->graph(op_registry());
  std::vector<OutputInfo> out;
  for (auto id : g.outputs()) {
    const graph::Value& v = g.value(id);
    out.push_back({v.name, std::string(graph::non_tensor_kind(v))});
  }
  return out;
}

void Session::prepare(std::span<const Tensor> inputs) {
  try {
    prepare_with(inputs, false);
  } catch (const Error& first) {
    // An extent that depends on an input's values (a window's size, a Range's limit) is unknown
    // before running; onnxruntime computes it when running, footprint plans for the values given.
    // Only then: a plan made for values would prepare again whenever they change (token ids).
    if (!graph::depends_on_values(first)) throw;
    try {
      prepare_with(inputs, true);
    } catch (const Error&) {
      throw first;
    }
    if (prepared_values_.empty()) throw first;
  }
}

void Session::prepare_with(std::span<const Tensor> inputs, bool bind_values) {
  const heap::Stats before = heap::snapshot();
  heap::reset_peak();
  runner_.reset();
  arena_ = AlignedBuffer();
  // oneDNN fixes a primitive's thread count (and so its scratchpad) when it is built.
  set_intra_op_threads(options_.threads);
  graph_ = std::make_unique<graph::Graph>(model_->graph(op_registry()));
  // The passes analysis runs too (graph::prepare_graph), the inputs bound to the tensors.
  TensorBinder binder(inputs, prepared_extents_, bind_values);
  graph::PrepareReport graph_report = graph::prepare_graph(
      *graph_, options_.dims,
      {.bind = &binder, .fuse = options_.fuse, .carry_float32 = options_.carry_float32});
  // A run reports no inference warnings: freed here, they do not count in preparing's heap peak.
  graph_report.inference = {};
  const DimBindings& dims = graph_report.dims;
  runner_ = std::make_unique<GraphRunner>(*graph_, dims, options_, nullptr);

  const analysis::Timeline& t = runner_->timeline();
  prepared_ = {};
  prepared_.dims = dims;
  prepared_.planned_arena_bytes = runner_->arena_bytes();
  prepared_.lower_bound_bytes = t.lower_bound_arena_bytes;
  prepared_.activations_peak_bytes = t.activations_peak_bytes;
  prepared_.workspace_peak_bytes = t.workspace_peak_bytes;
  prepared_.outputs_bytes = t.outputs_bytes;
  prepared_.weights_bytes = t.weights_bytes;
  prepared_.constant_bytes = runner_->constant_bytes();
  prepared_.mapped_weights_bytes = runner_->mapped_weight_bytes();
  prepared_.packed_weights_bytes = runner_->packed_bytes();
  prepared_.prepare_buffers_peak_bytes = runner_->prepare_heap().peak;
  prepared_.prepare_buffers_kept_bytes = runner_->prepare_heap().now;
  prepared_.released_constant_bytes = runner_->released_constant_bytes();
  prepared_.released_mapped_bytes = runner_->released_mapped_bytes();
  prepared_.total_peak_bytes = t.total_peak_bytes;
  prepared_.planner = runner_->plan().algorithm;
  if (graph_report.rebatched) prepared_.rebatched = graph_report.rebatched->note();
  prepared_.steps = runner_->step_count();
  prepared_.fused = std::move(graph_report.fused.fused);
  prepared_.patterns = std::move(graph_report.fused.patterns);
  prepared_.channels_last_nodes = graph_report.channels_last.nodes;
  prepared_.layout_changes = graph_report.channels_last.layout_changes;
  prepared_.carried = graph_report.carried;
  prepared_.computes_in = computes_in(*graph_);
  prepared_.constant_nodes = runner_->program().constant_nodes;
  if (heap::available())
    prepared_.prepare_peak_heap_bytes = heap::snapshot().peak_bytes - before.current_bytes;
  for (graph::ValueId v = 0; v < static_cast<graph::ValueId>(graph_->values().size()); ++v)
    prepared_.bounded_values += runner_->bounded(v) ? 1 : 0;
  prepared_.bounded_bytes = runner_->bounded_bytes().first;
  prepared_.bounded_by = runner_->bound_origins();
  prepared_values_.clear();
  for (const size_t i : binder.by_value) {
    const Tensor& given = *binder.matched[i];
    prepared_.bound_by_value.push_back(graph_->value(graph_->inputs()[i]).name);
    prepared_values_.emplace_back(
        i, std::vector<std::byte>(given.data(), given.data() + given.bytes()));
  }
  input_refs_.assign(binder.matched.size(), {});
  output_refs_.assign(graph_->outputs().size(), {});
  last_run_ = {};
  if (heap::available()) last_run_.step_heap_bytes.assign(runner_->step_count(), 0);
  if (options_.profile) last_run_.step_ns.assign(runner_->step_count(), 0);
}

namespace {

// One field of every step the runner runs; empty before preparing.
std::vector<std::string> step_field(const GraphRunner* runner,
                                    std::string analysis::ProgramStep::*field) {
  std::vector<std::string> out;
  if (runner == nullptr) return out;
  for (const analysis::ProgramStep& s : runner->program().program.steps) out.push_back(s.*field);
  return out;
}

}  // namespace

std::vector<Session::ValueExtents> Session::prepared_values() const {
  std::vector<ValueExtents> out;
  if (runner_ == nullptr) return out;
  const graph::Graph& g = runner_->graph();
  for (graph::ValueId id = 0; id < static_cast<graph::ValueId>(g.values().size()); ++id) {
    out.push_back({g.value(id).name, g.value(id).dtype, runner_->extents(id),
                   runner_->program().program.tensors[id].bytes, runner_->bounded(id),
                   runner_->run_extents(id)});
  }
  return out;
}

std::vector<std::string> Session::step_names() const {
  return step_field(runner_.get(), &analysis::ProgramStep::name);
}

std::vector<std::string> Session::step_ops() const {
  return step_field(runner_.get(), &analysis::ProgramStep::op);
}

std::vector<Tensor> Session::run(std::span<const Tensor> inputs) {
  std::vector<Tensor> outputs;
  run(inputs, outputs);
  return outputs;
}

void Session::run(std::span<const Tensor> inputs, std::vector<Tensor>& outputs) {
  bool same = runner_ != nullptr && inputs.size() == prepared_extents_.size();
  if (same) {
    // Other names than the prepared graph's inputs (a sequence of another length, an optional
    // given now and not before) prepare again, as other extents do.
    try {
      const std::vector<const Tensor*> matched = match_inputs(*graph_, inputs);
      for (size_t i = 0; i < matched.size() && same; ++i)
        same = matched[i]->dims() == prepared_extents_[i];
      // A plan made for an input's values holds for those values only.
      for (const auto& [i, bytes] : prepared_values_) {
        same = same && matched[i]->bytes() == bytes.size() &&
               std::memcmp(matched[i]->data(), bytes.data(), bytes.size()) == 0;
      }
    } catch (const Error&) {
      same = false;
    }
  }
  if (!same) prepare(inputs);
  const std::vector<const Tensor*> matched = match_inputs(*graph_, inputs);
  for (size_t i = 0; i < matched.size(); ++i) input_refs_[i] = matched[i]->ref();

  const auto start = std::chrono::steady_clock::now();
  const heap::Stats before = heap::snapshot();
  heap::reset_peak();
  set_intra_op_threads(options_.threads);
  // The arena is obtained by the first run and kept for the next ones (each would otherwise
  // pay its page faults again); prepare() and the destructor release it.
  if (arena_.size() != runner_->arena_bytes()) arena_ = allocate_arena(*runner_);
  const size_t count = graph_->outputs().size();
  last_run_.reused_output_bytes = 0;
  std::vector<Tensor> handed_back = std::move(outputs);
  outputs.clear();
  outputs.reserve(count);
  for (size_t k = 0; k < count; ++k) {
    const graph::ValueId v = graph_->outputs()[k];
    const graph::Value& value = graph_->value(v);
    if (k < handed_back.size() && handed_back[k].name() == value.name &&
        handed_back[k].dtype() == value.dtype && handed_back[k].dims() == runner_->extents(v)) {
      outputs.push_back(std::move(handed_back[k]));
      last_run_.reused_output_bytes += outputs.back().bytes();
    } else {
      outputs.emplace_back(value.name, value.dtype, runner_->extents(v));
    }
    output_refs_[k] = outputs.back().ref();
  }
  handed_back.clear();
  runner_->run({arena_.data(), arena_.size()}, input_refs_, output_refs_, options_.threads,
               last_run_.step_heap_bytes, last_run_.step_ns);
  // An output whose extents depend on values was allocated at its bound: returned as what the
  // run made of it.
  for (size_t k = 0; k < outputs.size(); ++k) {
    const std::vector<int64_t>& made = runner_->run_extents(graph_->outputs()[k]);
    if (made == outputs[k].dims()) continue;
    Tensor exact(outputs[k].name(), outputs[k].dtype(), made);
    if (exact.bytes() > 0) std::memcpy(exact.data(), outputs[k].data(), exact.bytes());
    outputs[k] = std::move(exact);
  }
  last_run_.arena_bytes = arena_.size();
  if (prepared_.bounded_values > 0) last_run_.bounded_used_bytes = runner_->bounded_bytes().second;
  const heap::Stats after = heap::snapshot();
  last_run_.heap_before_bytes = before.current_bytes;
  last_run_.peak_heap_bytes = heap::available() ? after.peak_bytes - before.current_bytes : 0;
  last_run_.output_bytes = 0;
  for (const Tensor& t : outputs) last_run_.output_bytes += t.bytes();
  last_run_.latency_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace footprint::runtime
