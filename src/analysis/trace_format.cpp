#include "footprint/analysis/trace_format.hpp"

#include <array>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"

namespace footprint::analysis {
namespace {

using nlohmann::json;

// Where a value is in the trace ("/ops/3/inputs/0"), spelled only when an error names it: a
// trace of a million ops has millions of values, and spelling each path cost more than reading.
struct Where {
  const char* list = nullptr;  // "tensors" or "ops", or null at the top level
  size_t index = 0;
  const char* key = nullptr;  // a member of the element (or of the top level)
  int64_t item = -1;          // an index into that member's array

  Where at(const char* member, int64_t i = -1) const {
    Where w = *this;
    w.key = member;
    w.item = i;
    return w;
  }
  std::string str() const {
    std::string s;
    if (list != nullptr) s += std::string("/") + list + "/" + std::to_string(index);
    if (key != nullptr) s += std::string("/") + key;
    if (item >= 0) s += "/" + std::to_string(item);
    return s.empty() ? "/" : s;
  }
};

// The trace read as it streams (nlohmann's SAX interface): tensors become ProgramTensors and ops
// ProgramSteps as each element ends, so a trace of a million ops never stands as a JSON tree
// (which took 1.7 GB for a 125 MB trace). Ops that come before the tensors they name are kept
// as names until the tensors are read.
class TraceReader {
 public:
  explicit TraceReader(std::string source) : source_(std::move(source)) {}

  Trace read(std::string_view text) {
    try {
      json::sax_parse(text.begin(), text.end(), this);
    } catch (const json::exception& e) {
      throw Error(source_ + ": invalid JSON (" + e.what() + ")");
    }
    if (parse_error_) {
      // A number too large for any type (1e99999) is out_of_range, not a parse_error.
      if (error_offset_ == 0) throw Error(source_ + ": invalid JSON (" + error_text_ + ")");
      throw Error(source_ + ": offset " + std::to_string(error_offset_) + ": invalid JSON");
    }
    finish();
    return std::move(trace_);
  }

  // ---- nlohmann's SAX interface
  bool null() { return scalar(Scalar{}); }
  bool boolean(bool b) { return scalar(Scalar{Scalar::truth_value, b}); }
  bool number_integer(int64_t v) {
    if (v < 0) return scalar(Scalar{Scalar::negative});
    return scalar(Scalar{Scalar::whole, false, static_cast<uint64_t>(v)});
  }
  bool number_unsigned(uint64_t v) { return scalar(Scalar{Scalar::whole, false, v}); }
  bool number_float(double /*v*/, const std::string& /*text*/) {
    return scalar(Scalar{Scalar::fraction});
  }
  bool string(std::string& v) { return scalar(Scalar{Scalar::text_value, false, 0, &v}); }
  bool binary(json::binary_t& /*v*/) { return scalar(Scalar{}); }
  bool start_object(size_t /*n*/) { return open(true); }
  bool start_array(size_t /*n*/) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (skip_ == 0) key_ = known_key(k);
    return true;
  }
  bool parse_error(size_t position, const std::string& /*token*/, const json::exception& e) {
    parse_error_ = true;
    error_offset_ = dynamic_cast<const json::parse_error*>(&e) != nullptr ? position : 0;
    error_text_ = e.what();
    return false;
  }

 private:
  // One value as the parser hands it over.
  struct Scalar {
    enum Type { null_value, truth_value, whole, negative, fraction, text_value };
    Type type = null_value;
    bool truth = false;
    uint64_t number = 0;
    std::string* string = nullptr;
  };

  // Where the parser is: the containers open around the current value.
  enum class In { root, tensors, tensor, shape, ops, op, names };

  // An op as read, its names kept until they can be resolved.
  struct PendingOp {
    size_t index = 0;
    ProgramStep step;
    bool has_name = false, has_op = false, has_free = false;
    std::array<std::vector<int>, 3> indices;        // inputs, outputs, free: resolved
    std::array<std::vector<std::string>, 3> lists;  // ... or names, before the tensors are read
  };

  // The member names the format has, so that Where can point at them; any other is skipped.
  static const char* known_key(const std::string& k) {
    static const char* const kKeys[] = {
        "format", "name",    "arguments", "tensors", "ops",       "explicit_frees", "bytes",
        "dtype",  "shape",   "kind",      "held",    "note",      "view_of",        "op",
        "inputs", "outputs", "free",      "phase",   "workspace", "in_place"};
    for (const char* key : kKeys) {
      if (k == key) return key;
    }
    return nullptr;
  }
  static bool is(const char* key, const char* name) {
    return key != nullptr && std::strcmp(key, name) == 0;
  }

  [[noreturn]] void fail(const Where& where, const std::string& what) const {
    throw Error(source_ + ": " + where.str() + ": " + what);
  }
  Where here() const {
    if (state_.size() <= 1) return Where{}.at(key_);
    const bool tensors = state_[1] == In::tensors;
    return Where{tensors ? "tensors" : "ops", index_in_list_}.at(key_);
  }

  // ---- containers

  bool open(bool object) {
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    if (state_.empty()) {
      if (!object) fail(Where{}, "a trace is a JSON object");
      state_.push_back(In::root);
      return true;
    }
    switch (state_.back()) {
      case In::root:
        return open_in_root(object);
      case In::tensors:
        if (!object) fail(Where{"tensors", index_in_list_}, kTensorShape);
        tensor_ = {};
        state_.push_back(In::tensor);
        return true;
      case In::ops:
        if (!object) fail(Where{"ops", index_in_list_}, "an op is an object");
        op_ = {};
        op_.index = index_in_list_;
        state_.push_back(In::op);
        return true;
      case In::tensor:
        if (is(key_, "shape") && !object) {
          tensor_.has_shape = true;
          tensor_.shape.clear();
          item_ = 0;
          state_.push_back(In::shape);
          return true;
        }
        return skip_or_fail(tensor_member_error());
      case In::op:
        if (list_of(key_) >= 0 && !object) {
          list_ = list_of(key_);
          list_key_ = key_;
          item_ = 0;
          if (list_ == 2) op_.has_free = true;
          op_.lists[static_cast<size_t>(list_)].clear();
          op_.indices[static_cast<size_t>(list_)].clear();
          state_.push_back(In::names);
          return true;
        }
        return skip_or_fail(op_member_error());
      case In::shape:
        fail(Where{"tensors", index_in_list_}.at("shape", item_), kCount);
      case In::names:
        fail(Where{"ops", index_in_list_}.at(list_key_, item_), "must be a tensor name");
    }
    return true;
  }

  bool open_in_root(bool object) {
    if ((is(key_, "tensors") || is(key_, "ops")) && !object) {
      const bool tensors = is(key_, "tensors");
      if ((tensors ? seen_tensors_ : seen_ops_)) fail(Where{}.at(key_), "given twice");
      (tensors ? seen_tensors_ : seen_ops_) = true;
      index_in_list_ = 0;
      state_.push_back(tensors ? In::tensors : In::ops);
      return true;
    }
    return skip_or_fail(root_member_error());
  }

  // A container where the format has a value of another type fails; elsewhere it is skipped.
  bool skip_or_fail(const char* error) {
    if (error != nullptr) fail(here(), error);
    skip_ = 1;
    return true;
  }

  bool close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    const In done = state_.back();
    state_.pop_back();
    switch (done) {
      case In::tensor:
        finish_tensor();
        ++index_in_list_;
        break;
      case In::op:
        finish_op();
        ++index_in_list_;
        break;
      case In::tensors:
        finish_tensors();
        break;
      case In::names:
      case In::shape:
      case In::ops:
      case In::root:
        break;
    }
    // Back in an object, the next value comes with its own key.
    if (!state_.empty() && (state_.back() == In::tensor || state_.back() == In::op)) key_ = nullptr;
    return true;
  }

  // ---- values

  bool scalar(const Scalar& v) {
    if (skip_ > 0) return true;
    if (state_.empty()) fail(Where{}, "a trace is a JSON object");
    switch (state_.back()) {
      case In::root:
        root_value(v);
        break;
      case In::tensors:
        fail(Where{"tensors", index_in_list_}, kTensorShape);
      case In::ops:
        fail(Where{"ops", index_in_list_}, "an op is an object");
      case In::tensor:
        tensor_value(v);
        break;
      case In::op:
        op_value(v);
        break;
      case In::shape:
        tensor_.shape.push_back(count(v, Where{"tensors", index_in_list_}.at("shape", item_)));
        ++item_;
        break;
      case In::names: {
        const Where where = Where{"ops", index_in_list_}.at(list_key_, item_);
        if (v.type != Scalar::text_value) fail(where, "must be a tensor name");
        if (tensors_done_) {
          op_.indices[static_cast<size_t>(list_)].push_back(lookup(*v.string, where));
        } else {
          op_.lists[static_cast<size_t>(list_)].push_back(std::move(*v.string));
        }
        ++item_;
        break;
      }
    }
    return true;
  }

  uint64_t count(const Scalar& v, const Where& where) const {
    if (v.type != Scalar::whole) fail(where, kCount);
    return v.number;
  }
  std::string text(const Scalar& v, const Where& where) const {
    if (v.type != Scalar::text_value) fail(where, "must be a string");
    return std::move(*v.string);
  }
  bool truth(const Scalar& v, const Where& where) const {
    if (v.type != Scalar::truth_value) fail(where, "must be true or false");
    return v.truth;
  }

  // The error of a container where the format has a scalar (null: a member it does not have).
  const char* root_member_error() const {
    if (is(key_, "tensors")) return "an array of tensors is required";
    if (is(key_, "ops")) return "an array of ops is required";
    if (is(key_, "explicit_frees")) return "must be true or false";
    if (is(key_, "format") || is(key_, "name") || is(key_, "arguments")) return "must be a string";
    return nullptr;
  }
  const char* tensor_member_error() const {
    if (is(key_, "name")) return kTensorShape;
    if (is(key_, "bytes")) return kCount;
    if (is(key_, "dtype")) return kDtype;
    if (is(key_, "shape")) return "must be an array of extents";
    if (is(key_, "held")) return "must be true or false";
    if (is(key_, "kind") || is(key_, "note") || is(key_, "view_of")) return "must be a string";
    return nullptr;
  }
  const char* op_member_error() const {
    if (list_of(key_) >= 0) return "must be an array of tensor names";
    if (is(key_, "workspace")) return kCount;
    if (is(key_, "in_place")) return "must be true or false";
    if (is(key_, "name") || is(key_, "op") || is(key_, "phase")) return "must be a string";
    return nullptr;
  }

  void root_value(const Scalar& v) {
    const Where where = Where{}.at(key_);
    if (is(key_, "format")) {
      const std::string format = text(v, where);
      if (format != kFormat) {
        fail(where,
             "unknown format " + in_quotes(format) + " (this footprint reads " + kFormat + ")");
      }
    } else if (is(key_, "name")) {
      trace_.name = text(v, where);
    } else if (is(key_, "arguments")) {
      const std::string policy = text(v, where);
      if (policy == "caller") {
        trace_.program.inputs = InputsPolicy::caller;
      } else if (policy == "donated") {
        trace_.program.inputs = InputsPolicy::donated;
      } else {
        fail(where, "must be \"caller\" or \"donated\", not " + in_quotes(policy));
      }
    } else if (is(key_, "explicit_frees")) {
      explicit_frees_ = truth(v, where);
    } else if (is(key_, "tensors") || is(key_, "ops")) {
      fail(where, root_member_error());
    }
  }

  void tensor_value(const Scalar& v) {
    const Where where = here();
    if (is(key_, "name")) {
      if (v.type != Scalar::text_value) fail(Where{"tensors", index_in_list_}, kTensorShape);
      tensor_.name = std::move(*v.string);
      tensor_.has_name = true;
    } else if (is(key_, "bytes")) {
      tensor_.bytes = count(v, where);
    } else if (is(key_, "dtype")) {
      if (v.type != Scalar::text_value) fail(where, kDtype);
      tensor_.dtype = dtype_of(*v.string, where);
    } else if (is(key_, "shape")) {
      fail(where, "must be an array of extents");
    } else if (is(key_, "kind")) {
      const std::string kind = text(v, where);
      tensor_.category = category_of(kind);
      if (tensor_.category == Category::workspace) {
        fail(where, "must be input, weight, activation or output, not " + in_quotes(kind));
      }
    } else if (is(key_, "held")) {
      tensor_.held = truth(v, where);
    } else if (is(key_, "note")) {
      tensor_.note = text(v, where);
    } else if (is(key_, "view_of")) {
      tensor_.view_of = text(v, where);
      tensor_.has_view_of = true;
    }
  }

  void op_value(const Scalar& v) {
    const Where where = here();
    if (is(key_, "name")) {
      op_.step.name = text(v, where);
      op_.has_name = true;
    } else if (is(key_, "op")) {
      op_.step.op = text(v, where);
      op_.has_op = true;
    } else if (is(key_, "phase")) {
      op_.step.phase = text(v, where);
    } else if (is(key_, "workspace")) {
      op_.step.workspace = count(v, where);
    } else if (is(key_, "in_place")) {
      op_.step.in_place = truth(v, where);
    } else if (list_of(key_) >= 0) {
      fail(where, "must be an array of tensor names");
    }
  }

  static int list_of(const char* key) {
    if (is(key, "inputs")) return 0;
    if (is(key, "outputs")) return 1;
    if (is(key, "free")) return 2;
    return -1;
  }

  DType dtype_of(const std::string& text, const Where& where) {
    // Traces name a few dtypes each; each name is looked up once.
    const auto known = dtypes_.find(text);
    if (known != dtypes_.end()) return known->second;
    std::string name = text;
    if (name == "float32") name = "float";
    if (name == "float64") name = "double";
    const auto dtype = dtype_from_name(name);
    if (!dtype.has_value()) fail(where, "unknown dtype " + in_quotes(name));
    dtypes_.emplace(text, *dtype);
    return *dtype;
  }

  static Category category_of(std::string_view kind) {
    if (kind == "activation") return Category::activations;
    if (kind == "input") return Category::inputs;
    if (kind == "weight") return Category::weights;
    if (kind == "output") return Category::outputs;
    return Category::workspace;  // not a kind a trace may name
  }

  // ---- elements

  void finish_tensor() {
    const Where where{"tensors", index_in_list_};
    if (!tensor_.has_name) fail(where, kTensorShape);
    if (index_.count(tensor_.name) != 0)
      fail(where.at("name"), in_quotes(tensor_.name) + " is defined twice");
    ProgramTensor pt;
    pt.bytes = tensor_bytes(where);
    pt.name = std::move(tensor_.name);
    pt.category = tensor_.category;
    pt.held = tensor_.held;
    pt.note = std::move(tensor_.note);
    MemoryProgram& p = trace_.program;
    if (tensor_.has_view_of) views_.emplace_back(p.tensors.size(), std::move(tensor_.view_of));
    index_.emplace(pt.name, static_cast<int>(p.tensors.size()));
    p.tensors.push_back(std::move(pt));
  }

  uint64_t tensor_bytes(const Where& where) const {
    if (tensor_.bytes.has_value()) return *tensor_.bytes;
    if (!tensor_.dtype.has_value() || !tensor_.has_shape)
      fail(where, "a tensor needs \"bytes\", or \"dtype\" and \"shape\"");
    uint64_t numel = 1;
    for (const uint64_t d : tensor_.shape) {
      const auto product = checked_mul(numel, d);
      if (!product.has_value()) {
        fail(where.at("shape"),
             "the element count of " + in_quotes(tensor_.name) + " overflows uint64");
      }
      numel = *product;
    }
    const auto bytes = dtype_storage_bytes(*tensor_.dtype, numel);
    if (!bytes.has_value()) {
      fail(where, "the bytes of " + in_quotes(tensor_.name) + " (" + std::to_string(numel) + " x " +
                      std::string(dtype_name(*tensor_.dtype)) +
                      ") overflow uint64, or the dtype has no fixed size");
    }
    return *bytes;
  }

  // Every tensor is known: views resolve, roots are found, and ops read before resolve now.
  void finish_tensors() {
    MemoryProgram& p = trace_.program;
    // A view allocates nothing, whatever its size says.
    for (auto& [i, viewed] : views_)
      p.tensors[i].view_of = lookup(viewed, Where{"tensors", i}.at("view_of"));
    views_.clear();
    find_roots(p);
    written_.assign(p.tensors.size(), 0);
    tensors_done_ = true;
    for (PendingOp& op : pending_) {
      for (size_t l = 0; l < 3; ++l) {
        for (size_t k = 0; k < op.lists[l].size(); ++k) {
          const Where where = Where{"ops", op.index}.at(kLists[l], static_cast<int64_t>(k));
          op.indices[l].push_back(lookup(op.lists[l][k], where));
        }
      }
      add_step(op);
    }
    pending_.clear();
  }

  void finish_op() {
    if (!tensors_done_) {
      pending_.push_back(std::move(op_));
      return;
    }
    add_step(op_);
  }

  void add_step(PendingOp& op) {
    ProgramStep& s = op.step;
    if (!op.has_name) s.name = "op" + std::to_string(op.index);
    if (!op.has_op) s.op = s.name;
    s.inputs = std::move(op.indices[0]);
    s.outputs = std::move(op.indices[1]);
    s.frees = std::move(op.indices[2]);
    const Where where{"ops", op.index};
    check_reads(trace_.program, s.inputs, where);
    check_writes(trace_.program, s.outputs, where);
    any_free_ = any_free_ || op.has_free;
    trace_.program.steps.push_back(std::move(s));
  }

  void finish() {
    if (!seen_tensors_) fail(Where{}.at("tensors"), "an array of tensors is required");
    if (!seen_ops_) fail(Where{}.at("ops"), "an array of ops is required");
    trace_.program.explicit_frees = explicit_frees_.value_or(any_free_);
  }

  // Per tensor, the tensor whose buffer it is (what its chain of views ends at), once for all:
  // following the chain per read made a nest of n views cost n^2. A tensor in or leading into a
  // cycle of views is its own root here; the timeline reports the cycle.
  void find_roots(const MemoryProgram& p) {
    const size_t n = p.tensors.size();
    constexpr int kUnknown = -1, kOnPath = -2;
    root_.assign(n, kUnknown);
    std::vector<int> path;
    for (size_t start = 0; start < n; ++start) {
      auto t = static_cast<int>(start);
      while (root_[static_cast<size_t>(t)] == kUnknown) {
        const int next = p.tensors[static_cast<size_t>(t)].view_of;
        if (next < 0) {
          root_[static_cast<size_t>(t)] = t;
          break;
        }
        root_[static_cast<size_t>(t)] = kOnPath;
        path.push_back(t);
        t = next;
      }
      // Ends at a known root, or back on the path (a cycle): each tensor on it takes the root.
      const bool cycle = root_[static_cast<size_t>(t)] == kOnPath;
      const int root = root_[static_cast<size_t>(t)];
      for (const int v : path) root_[static_cast<size_t>(v)] = cycle ? v : root;
      path.clear();
    }
  }

  int lookup(const std::string& name, const Where& where) const {
    auto it = index_.find(name);
    if (it == index_.end()) fail(where, "unknown tensor " + in_quotes(name));
    return it->second;
  }

  // An activation or output is read only after an op wrote it (through a view, the buffer
  // viewed); inputs and weights exist before the first op.
  void check_reads(const MemoryProgram& p, const std::vector<int>& inputs,
                   const Where& where) const {
    for (size_t k = 0; k < inputs.size(); ++k) {
      const auto root = static_cast<size_t>(root_[static_cast<size_t>(inputs[k])]);
      const Category c = p.tensors[root].category;
      if (c == Category::inputs || c == Category::weights || written_[root] != 0) continue;
      fail(where.at("inputs", static_cast<int64_t>(k)),
           in_quotes(p.tensors[static_cast<size_t>(inputs[k])].name) +
               " is read before any op writes it");
    }
  }

  // Inputs and weights are the caller's: an op writing one would make its bytes appear twice.
  void check_writes(const MemoryProgram& p, const std::vector<int>& outputs, const Where& where) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      const ProgramTensor& t = p.tensors[static_cast<size_t>(outputs[k])];
      if (t.category == Category::inputs || t.category == Category::weights) {
        fail(where.at("outputs", static_cast<int64_t>(k)),
             "writes " + in_quotes(t.name) + ", which is " +
                 (t.category == Category::inputs ? "an input" : "a weight") +
                 " (a tensor the trace does not produce)");
      }
      written_[static_cast<size_t>(root_[static_cast<size_t>(outputs[k])])] = 1;
    }
  }

  static constexpr const char* kFormat = "footprint-trace/1";
  static constexpr const char* kTensorShape = "a tensor is an object with a string \"name\"";
  static constexpr const char* kCount = "must be a non-negative integer";
  static constexpr const char* kDtype = "must be a string such as \"float32\"";
  static constexpr std::array<const char*, 3> kLists = {"inputs", "outputs", "free"};

  // One element of "tensors", as read.
  struct TensorRead {
    std::string name;
    bool has_name = false;
    std::optional<uint64_t> bytes;
    std::optional<DType> dtype;
    std::vector<uint64_t> shape;
    bool has_shape = false;
    Category category = Category::activations;
    bool held = false;
    std::string note;
    std::string view_of;
    bool has_view_of = false;
  };

  std::string source_;
  Trace trace_;
  std::vector<In> state_;
  size_t skip_ = 0;            // > 0 inside a value of a member the format does not have
  const char* key_ = nullptr;  // the current member (known_key), or null
  size_t index_in_list_ = 0;   // the element of "tensors" or "ops" being read
  int64_t item_ = 0;           // the element of "shape" or a name list being read
  int list_ = 0;               // which name list: 0 inputs, 1 outputs, 2 free
  const char* list_key_ = nullptr;
  TensorRead tensor_;
  PendingOp op_;
  bool seen_tensors_ = false, seen_ops_ = false, tensors_done_ = false, any_free_ = false;
  std::optional<bool> explicit_frees_;
  std::vector<std::pair<size_t, std::string>> views_;  // (tensor, name viewed)
  std::vector<PendingOp> pending_;                     // ops read before the tensors
  bool parse_error_ = false;
  size_t error_offset_ = 0;
  std::string error_text_;
  std::unordered_map<std::string, int> index_;
  std::unordered_map<std::string, DType> dtypes_;  // per dtype name seen, its dtype
  std::vector<int> root_;                          // per tensor, its buffer's tensor (find_roots)
  std::vector<char> written_;                      // per buffer, whether an op has written it yet
};

}  // namespace

Trace parse_trace(std::string_view json_text, const std::string& source_name) {
  return TraceReader(source_name).read(json_text);
}

Trace read_trace_file(const std::filesystem::path& path) {
  Trace t = parse_trace(read_text_file(path), path.string());
  if (t.name.empty()) t.name = path.stem().string();
  return t;
}

}  // namespace footprint::analysis
