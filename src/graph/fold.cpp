#include "footprint/graph/fold.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "footprint/core/bump_arena.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/thread_count.hpp"
#include "footprint/core/user_files.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/graph/node_runner.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/graph/topo_order.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/writer.hpp"

namespace footprint::graph {
namespace {

namespace fs = std::filesystem;

std::optional<uint64_t> bytes_of(const Value& v) {
  const auto e = v.shape.extents();
  const auto n = e ? checked_numel(e->data(), e->size()) : std::nullopt;
  if (!n || v.dtype == DType::undefined || v.dtype == DType::string) return std::nullopt;
  return dtype_storage_bytes(v.dtype, *n);
}

// Where a kept folded value went: in memory until the model is written, or into the data file.
struct Kept {
  SharedValue value;
  uint64_t offset = 0;
  uint64_t length = 0;
  bool kept = false;
  bool external = false;
};

class Folder {
 public:
  Folder(const onnx::Model& model, const OpRegistry& registry, const fs::path& out,
         const FoldOptions& options)
      : model_(model), g_(Graph::from_onnx(model, registry)), out_(out), options_(options) {
    checked_thread_count(options_.threads, "fold: threads");
    // The rewrite keeps the model's own nodes by index; a call of a local function stands for
    // several of the graph's (its inlined body).
    if (g_.inlined_function_calls() > 0) {
      throw Error("fold: the model calls local functions (" +
                  std::to_string(g_.inlined_function_calls()) +
                  " calls inlined); fold does not rewrite such models yet");
    }
    refuse_writing_over_model();
    infer_shapes(g_);
  }

  FoldReport run() {
    choose();
    if (options_.external_data) open_data_file();
    evaluate();
    write();
    return report_;
  }

 private:
  bool is_view(const Node& n) const {
    return n.schema != nullptr && n.schema->output_view_of >= 0 && n.outputs.size() == 1 &&
           n.subgraphs.empty();
  }

  // Why node `id` does not fold; empty when it does: deterministic, evaluable, every input a
  // constant, every output concrete and within the size limit.
  std::string_view why_kept(NodeId id) const {
    const Node& n = g_.node(id);
    for (ValueId v : n.inputs) {
      if (v != kNoValue && !known_[v]) return "read values known only when running";
    }
    if (!n.implicit_inputs.empty()) return "read values known only when running (subgraphs)";
    if (n.schema == nullptr) return "op unknown to footprint";
    if (!n.schema->deterministic) return "random (not deterministic)";
    if (n.schema->dequantizes)
      return "dequantizes stored weights (folded, they would be stored as float)";
    if (!can_evaluate(n) && !is_view(n)) return "no kernel to evaluate them with";
    for (ValueId v : n.outputs) {
      if (v == kNoValue) return "an output is omitted";
      const auto b = bytes_of(g_.value(v));
      if (!b) return "output extents not known before running";
      if (*b > options_.max_fold_bytes) return "outputs above --max-fold-bytes";
    }
    return {};
  }

  void keep(NodeId id, std::string_view reason) {
    for (KeptReason& k : report_.kept) {
      if (k.reason == reason) {
        ++k.nodes;
        return;
      }
    }
    report_.kept.push_back({std::string(reason), 1, g_.node(id).label(id)});
  }

  void choose() {
    const size_t nv = g_.values().size();
    known_.assign(nv, 0);
    for (ValueId v : g_.initializers()) known_[v] = 1;
    folded_.assign(g_.nodes().size(), 0);
    order_ = topo_order(g_);
    for (NodeId id : order_) {
      const std::string_view kept = why_kept(id);
      if (!kept.empty()) {
        keep(id, kept);
        continue;
      }
      folded_[id] = 1;
      for (ValueId v : g_.node(id).outputs) known_[v] = 1;
    }
    // A folded value is kept (becomes an initializer) when something not folded reads it.
    needed_.assign(nv, 0);
    for (ValueId v : g_.outputs()) needed_[v] = 1;
    last_use_.assign(nv, -1);
    for (size_t k = 0; k < order_.size(); ++k) {
      const Node& n = g_.node(order_[k]);
      if (folded_[order_[k]]) {
        for (ValueId v : n.inputs)
          if (v != kNoValue) last_use_[v] = static_cast<int>(k);
        continue;
      }
      for (ValueId v : n.inputs)
        if (v != kNoValue) needed_[v] = 1;
      for (ValueId v : n.implicit_inputs) needed_[v] = 1;
    }
    for (size_t k = 0; k < g_.nodes().size(); ++k) {
      if (folded_[k]) {
        ++report_.folded_nodes;
      } else {
        ++report_.kept_nodes;
      }
    }
  }

  // The folded model (and its .data) replace no file the model is read from.
  void refuse_writing_over_model() const {
    std::vector<InputFile> read;
    for (fs::path& f : model_.files()) read.push_back({std::move(f), "a file of the model"});
    refuse_overwriting(out_, read, "-o");
    if (options_.external_data) {
      fs::path data = out_;
      data += ".data";
      refuse_overwriting(data, read, "-o's .data");
    }
  }

  void open_data_file() {
    // The weights go to "<out>.data" beside the model: beside /dev/null that would be a new file
    // in /dev, so a model written through a device (user_files.hpp) takes no external data.
    std::error_code ec;
    if (fs::exists(out_, ec) && !fs::is_regular_file(out_, ec)) {
      throw Error(out_.string() +
                  ": --external-data writes a .data file beside the model, so -o must be a "
                  "regular file");
    }
    report_.data_file = out_;
    report_.data_file += ".data";
    data_tmp_ = report_.data_file;
    data_tmp_ += ".tmp";
    data_.open(data_tmp_, std::ios::binary | std::ios::trunc);
    if (!data_) throw Error(data_tmp_.string() + ": cannot write");
  }

  void evaluate() {
    const size_t nv = g_.values().size();
    live_.assign(nv, nullptr);
    held_.assign(nv, 0);
    initializer_bytes_.resize(nv);
    initializer_dims_.resize(nv);
    kept_.resize(nv);
    for (size_t k = 0; k < order_.size(); ++k) {
      const NodeId id = order_[k];
      if (!folded_[id]) continue;
      evaluate_one(id);
      const Node& n = g_.node(id);
      for (ValueId v : n.outputs) keep_if_needed(v);
      for (ValueId v : n.inputs) {
        if (v == kNoValue || last_use_[v] != static_cast<int>(k)) continue;
        initializer_bytes_[v].reset();
        drop(v);
      }
    }
  }

  // `counted`: false for a view sharing a value already counted.
  void hold(ValueId v, SharedValue value, bool counted = true) {
    held_[v] = counted ? value->bytes() : 0;
    in_flight_ += held_[v];
    live_[v] = std::move(value);
    report_.largest_in_flight_bytes = std::max(report_.largest_in_flight_bytes, in_flight_);
  }

  // Releases the value unless it stays in memory as a kept initializer until the model is written.
  void drop(ValueId v) {
    if (!live_[v]) return;
    if (!kept_[v].value) in_flight_ -= held_[v];
    live_[v] = nullptr;
  }

  // The bytes of a constant input: a folded value, or an initializer read (in place when it can).
  TensorRef input_ref(ValueId v) {
    if (live_[v]) return live_[v]->ref();
    const onnx::TensorProto& t = *g_.value(v).initializer;
    const DType dtype = onnx::tensor_dtype(t);
    const auto bits = static_cast<size_t>(std::max(dtype_bits(dtype), 8));
    auto& slot = initializer_bytes_[v];
    if (!slot) slot.emplace(onnx::tensor_bytes(t, bits / 8));
    auto& dims = initializer_dims_[v];
    dims.assign(t.dims.begin(), t.dims.end());
    return {dtype, dims, const_cast<std::byte*>(slot->bytes().data())};
  }

  void evaluate_one(NodeId id) {
    const Node& n = g_.node(id);
    std::vector<TensorRef> in(n.inputs.size());
    std::vector<const TensorRef*> in_ptrs;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != kNoValue) in[i] = input_ref(n.inputs[i]);
      in_ptrs.push_back(n.inputs[i] != kNoValue ? &in[i] : nullptr);
    }
    if (is_view(n) && !can_evaluate(n)) {
      const ValueId src_id = n.inputs[static_cast<size_t>(n.schema->output_view_of)];
      const auto extents = *g_.value(n.outputs[0]).shape.extents();
      if (live_[src_id]) {
        hold(n.outputs[0], HostValue::view(*live_[src_id], extents), false);
        return;
      }
      // A view of an initializer would dangle once its bytes are released: own them.
      const TensorRef& src = in[static_cast<size_t>(n.schema->output_view_of)];
      auto copy = HostValue::make(src.dtype, extents);
      std::memcpy(copy->data(), src.data, copy->bytes());
      hold(n.outputs[0], std::move(copy));
      return;
    }
    std::vector<TensorRef> out;
    std::vector<std::shared_ptr<HostValue>> values;
    for (ValueId o : n.outputs) {
      auto v = HostValue::make(g_.value(o).dtype, *g_.value(o).shape.extents());
      out.push_back(v->ref());
      values.push_back(std::move(v));
    }
    std::vector<TensorRef*> out_ptrs;
    out_ptrs.reserve(out.size());
    for (TensorRef& o : out) out_ptrs.push_back(&o);
    try {
      evaluate_node(n, g_.opset(n.domain), in_ptrs, out_ptrs, options_.threads, id);
    } catch (const Error& e) {
      throw Error(std::string("folding: ") + e.what());
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) hold(n.outputs[k], std::move(values[k]));
  }

  void keep_if_needed(ValueId v) {
    if (!needed_[v]) {
      if (last_use_[v] < 0) drop(v);  // read by nothing at all
      return;
    }
    Kept& k = kept_[v];
    k.kept = true;
    k.length = live_[v]->bytes();
    ++report_.folded_initializers;
    report_.folded_bytes += k.length;
    if (!options_.external_data || k.length < options_.external_min_bytes) {
      k.value = live_[v];
      return;
    }
    // Stream it out now, 64-byte aligned, and drop it unless a later folded node reads it.
    const uint64_t at = (data_offset_ + 63) / 64 * 64;
    static constexpr char kZeros[64] = {};
    data_.write(kZeros, static_cast<std::streamsize>(at - data_offset_));
    data_.write(reinterpret_cast<const char*>(live_[v]->data()),
                static_cast<std::streamsize>(k.length));
    if (!data_) throw Error(data_tmp_.string() + ": write failed");
    data_offset_ = at + k.length;
    k.offset = at;
    k.external = true;
    if (last_use_[v] < 0) drop(v);
  }

  onnx::TensorProto folded_tensor(ValueId v) {
    const Value& value = g_.value(v);
    const Kept& k = kept_[v];
    onnx::TensorProto t;
    t.name = arena_.copy(value.name);
    const auto extents = *value.shape.extents();
    auto dims = arena_.make_array<int64_t>(extents.size());
    std::copy(extents.begin(), extents.end(), dims.begin());
    t.dims = onnx::array_of(dims);
    t.data_type = static_cast<int32_t>(value.dtype);
    if (!k.external) {
      t.has_raw_data = true;
      t.raw_data = {k.value->data(), k.value->bytes()};
      return t;
    }
    t.data_location = onnx::TensorProto::Location::external;
    auto entries = arena_.make_array<onnx::StringEntry>(3);
    entries[0] = {"location", arena_.copy(report_.data_file.filename().string())};
    entries[1] = {"offset", arena_.copy(std::to_string(k.offset))};
    entries[2] = {"length", arena_.copy(std::to_string(k.length))};
    t.external_data = onnx::array_of(entries);
    return t;
  }

  // An original initializer, inlined when it came from an external file (whose path was
  // relative to the source model).
  static onnx::TensorProto original_tensor(const onnx::TensorProto& src) {
    onnx::TensorProto t = src;
    if (t.data_location == onnx::TensorProto::Location::external) {
      t.data_location = onnx::TensorProto::Location::inline_data;
      t.external_data = {};
      t.has_raw_data = true;
      t.raw_data = src.external_bytes;
    }
    return t;
  }

  // The graph inputs without the initializers that folding dropped; before IR version 4 every
  // initializer is also listed as an input, so the new ones are added.
  onnx::Array<onnx::ValueInfoProto> inputs(const onnx::GraphProto& src,
                                           const std::vector<onnx::TensorProto>& inits) {
    std::vector<onnx::ValueInfoProto> out;
    for (const onnx::ValueInfoProto& in : src.inputs) {
      const auto id = g_.find(in.name);
      if (id && g_.value(*id).kind == ValueKind::initializer && !needed_[*id]) continue;
      out.push_back(in);
    }
    if (model_.proto().ir_version > 0 && model_.proto().ir_version < 4) {
      for (size_t i = 0; i < inits.size(); ++i) {
        const auto id = g_.find(inits[i].name);
        if (!id || g_.value(*id).kind == ValueKind::initializer) continue;
        onnx::ValueInfoProto info;
        info.name = inits[i].name;
        auto* type = arena_.make<onnx::TypeProto>();
        type->kind = onnx::TypeProto::Kind::tensor;
        type->elem_type = inits[i].data_type;
        type->has_shape = true;
        auto dims = arena_.make_array<onnx::DimensionProto>(inits[i].dims.size());
        for (size_t d = 0; d < dims.size(); ++d) {
          dims[d].has_value = true;
          dims[d].value = inits[i].dims[d];
        }
        type->shape = onnx::array_of(dims);
        info.type = type;
        out.push_back(info);
      }
    }
    auto array = arena_.make_array<onnx::ValueInfoProto>(out.size());
    std::copy(out.begin(), out.end(), array.begin());
    return onnx::array_of(array);
  }

  void write() {
    const onnx::GraphProto& src = model_.graph();
    auto* graph = arena_.make<onnx::GraphProto>(src);
    std::vector<onnx::NodeProto> nodes;
    std::vector<char> produced(g_.values().size(), 0);
    for (size_t i = 0; i < src.nodes.size(); ++i) {
      if (folded_[i]) continue;
      nodes.push_back(src.nodes[i]);
      for (ValueId v : g_.node(static_cast<NodeId>(i)).outputs)
        if (v != kNoValue) produced[v] = 1;
    }
    auto node_array = arena_.make_array<onnx::NodeProto>(nodes.size());
    std::copy(nodes.begin(), nodes.end(), node_array.begin());
    graph->nodes = onnx::array_of(node_array);

    std::vector<onnx::TensorProto> inits;
    for (ValueId v : g_.initializers()) {
      if (!needed_[v]) continue;
      inits.push_back(original_tensor(*g_.value(v).initializer));
      report_.weight_bytes += onnx::tensor_storage_bytes(inits.back());
    }
    for (size_t v = 0; v < kept_.size(); ++v) {
      if (!kept_[v].kept) continue;
      inits.push_back(folded_tensor(static_cast<ValueId>(v)));
      report_.weight_bytes += kept_[v].length;
    }
    graph->inputs = inputs(src, inits);
    auto init_array = arena_.make_array<onnx::TensorProto>(inits.size());
    std::copy(inits.begin(), inits.end(), init_array.begin());
    graph->initializers = onnx::array_of(init_array);

    // value_info only for values that are still computed.
    std::vector<onnx::ValueInfoProto> infos;
    for (const onnx::ValueInfoProto& info : src.value_info) {
      const auto id = g_.find(info.name);
      if (id && produced[*id]) infos.push_back(info);
    }
    auto info_array = arena_.make_array<onnx::ValueInfoProto>(infos.size());
    std::copy(infos.begin(), infos.end(), info_array.begin());
    graph->value_info = onnx::array_of(info_array);

    onnx::ModelProto proto = model_.proto();
    proto.graph = graph;
    if (options_.external_data) {
      data_.close();
      if (!data_) throw Error(data_tmp_.string() + ": write failed");
    }
    onnx::write_model_file(proto, out_, {.inline_external_data = false});
    if (options_.external_data) fs::rename(data_tmp_, report_.data_file);
  }

  const onnx::Model& model_;
  Graph g_;
  fs::path out_;
  FoldOptions options_;
  FoldReport report_;
  BumpArena arena_;
  std::vector<NodeId> order_;
  std::vector<char> known_;
  std::vector<char> folded_;
  std::vector<char> needed_;
  std::vector<int> last_use_;
  std::vector<SharedValue> live_;
  std::vector<std::optional<onnx::TensorBytes>> initializer_bytes_;
  std::vector<Kept> kept_;
  std::vector<std::vector<int64_t>> initializer_dims_;
  std::vector<uint64_t> held_;
  uint64_t in_flight_ = 0;
  fs::path data_tmp_;
  std::ofstream data_;
  uint64_t data_offset_ = 0;
};

}  // namespace

FoldReport fold_model(const onnx::Model& model, const OpRegistry& registry, const fs::path& out,
                      const FoldOptions& options) {
  return Folder(model, registry, out, options).run();
}

}  // namespace footprint::graph
