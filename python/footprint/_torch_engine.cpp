// footprint.torch's recorder below Python: what a TorchDispatchMode saw, at a fraction of its
// cost per op (the mode's Python ran ~50 us per op against ~5 us for a meta op itself).
//
// Two hooks of libtorch's public C++ API feed it:
//  - a thread-local RecordFunction callback (the profiler's) sees every dispatcher call with its
//    arguments and results. A call counts as one op of the program where a dispatch mode would
//    have seen it: not inside another op's kernel (there autograd's below-autograd guard has
//    excluded the autograd keys), and not a CompositeImplicitAutograd op (it runs as the ops
//    it calls);
//  - an allocator in place of the meta device's: every meta storage made while recording gets a
//    token in its DataPtr's context, whose deleter says when the storage goes. No weak
//    reference or sweep is needed to place a free, and a storage made outside any op (a muted
//    helper, torch.tensor) is known when it is first read.
//
// The trace it builds is the one the Python recorder builds (python/footprint/torch.py, the
// Recording class documents the semantics): one tensor per storage, named after the op that made
// it, freed after the last op before it went. Python calls it at module scopes, phases and
// autograd's saved-tensor packs, never per op.
//
// Built by footprint.torch on first use (torch.utils.cpp_extension, cached per torch version and
// source): it must see the installed torch's headers and ABI, so it is not part of the CMake
// build.
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <Python.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <frameobject.h>
#include <torch/extension.h>
#include <torch/version.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

namespace py = pybind11;

constexpr int64_t kAlive = INT64_MIN;

enum class Kind : uint8_t { activation, input, weight };

struct Storage {
  std::string name;
  int64_t bytes = 0;
  Kind kind = Kind::activation;
  int64_t freed_after = kAlive;  // index of the op after which it was gone
  bool outside = false;          // made outside any op: placed before its first read
  bool pending = true;           // made inside the open op, not yet shown as its output
  bool param_checked = false;    // asked whether a leaf over it is an nn.Parameter
  bool undescribed = false;      // its dtype and shape are read from its first reader
  int32_t made_by = -1;          // the visible frame that allocated it (depth), while pending
  int64_t made_at = -1;          // the op whose output it is (-1: it existed before)
  std::string op, tensor;
  int32_t module = 0, line = 0, phase = 0;
  std::vector<std::string> notes;
  c10::weak_intrusive_ptr<c10::StorageImpl> weak{c10::intrusive_ptr<c10::StorageImpl>()};

  void note(const std::string& text) {
    for (const auto& n : notes) {
      if (n == text) {
        return;
      }
    }
    notes.push_back(text);
  }
};

struct Op {
  std::string name, op;
  std::vector<int64_t> inputs, outputs;
  int32_t phase = 0, module = 0, line = 0;
  c10::weak_intrusive_ptr<c10::TensorImpl> first_out{c10::intrusive_ptr<c10::TensorImpl>()};
};

// Per aten operator, read from its schema once.
struct OpInfo {
  bool composite = false;  // CompositeImplicitAutograd: runs as the ops it calls
  bool profiler = false;   // the profiler's own ops hold no tensor data
  std::string name;        // "add.Tensor", "mm"
  std::string label;       // "add"
  std::string kind;        // " (in place)", " (view)" or ""
  std::vector<bool> aliases;
};

// A visible op being run: its arguments' records, and what the kernel allocated.
struct Frame {
  const OpInfo* info = nullptr;
  std::vector<int64_t> reads;
  int32_t line = 0;
  std::vector<int64_t> frees;  // records freed while it ran: placed after it
  std::vector<int64_t> made;   // records allocated while it was the innermost visible op
  bool composite = false;
  bool tensor_args = false;
  std::vector<int64_t> late;   // read, made outside aten: recorded when the op ends
  std::vector<int64_t> saved;  // its outputs autograd saved before it returned them
  // The first two tensor arguments' records and dtypes (mixed precision's copies).
  int64_t arg_ids[2] = {-1, -1};
  c10::ScalarType arg_types[2] = {c10::ScalarType::Undefined, c10::ScalarType::Undefined};
};

class Engine;

// The token in a meta DataPtr's context. It outlives the recording (a weight made in the step
// may live on), so it asks which engine, if any, is still recording.
struct Token {
  uint64_t generation;
  int64_t id;
  c10::DataPtr wrapped;  // the CPU allocator's memory (empty on meta)
};

// The recording engine: allocator callbacks carry no user data. Atomic: a storage may go on
// another thread.
std::atomic<Engine*> g_engine{nullptr};
std::atomic<uint64_t> g_generation{0};

void release_token(void* ctx);

// Stands in for a device's allocator while recording: the device's own allocates (nothing on
// meta), a token in the DataPtr's context carries the record.
bool cpu_autocast_enabled() {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::is_autocast_enabled(at::kCPU);
#else
  return at::autocast::is_cpu_enabled();
#endif
}

// c10::Allocator's interface changed in PyTorch 2.3: allocate() is no longer const, and
// copy_data() is to be defined.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define FOOTPRINT_ALLOCATE_CONST
#define FOOTPRINT_COPY_DATA 1
#else
#define FOOTPRINT_ALLOCATE_CONST const
#define FOOTPRINT_COPY_DATA 0
#endif

class TokenAllocator final : public c10::Allocator {
 public:
  TokenAllocator() = default;
  c10::DataPtr allocate(size_t n) FOOTPRINT_ALLOCATE_CONST override;
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
#if FOOTPRINT_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    previous->copy_data(dest, src, count);
  }
#endif
  c10::Allocator* previous = nullptr;
};

TokenAllocator g_meta_allocator;
TokenAllocator g_cpu_allocator;

bool is_ours(const c10::Storage& s) {
  return s.data_ptr().get_deleter() == &release_token;
}

class Engine {
 public:
  Engine(std::vector<std::string> skip_dirs, py::object classify, py::object is_parameter)
      : skip_dirs_(std::move(skip_dirs)),
        classify_(std::move(classify)),
        is_parameter_(std::move(is_parameter)) {
    intern("");
  }

  ~Engine() {
    try {
      if (g_engine == this) {
        stop();  // the hooks must not outlive it, whatever happened
      }
      py::gil_scoped_acquire gil;
      for (auto& [code, skip] : skipped_code_) {
        Py_DECREF(code);
      }
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor has no one to tell
    }
  }

  void start() {
    if (g_engine != nullptr) {
      throw std::runtime_error("footprint.torch's engine is already recording");
    }
    g_engine = this;
    thread_ = std::this_thread::get_id();
    generation_ = ++g_generation;
    for (auto* a : {&g_meta_allocator, &g_cpu_allocator}) {
      c10::DeviceType d = a == &g_meta_allocator ? c10::DeviceType::Meta : c10::DeviceType::CPU;
      a->previous = c10::GetAllocator(d);
      c10::SetAllocator(d, a, 255);
    }
    handle_ =
        at::addThreadLocalCallback(at::RecordFunctionCallback(&Engine::on_start, &Engine::on_end)
                                       .needsInputs(true)
                                       .needsOutputs(true)
                                       .scopes({at::RecordScope::FUNCTION}));
  }

  void stop() {
    if (g_engine != this) {
      return;
    }
    at::removeCallback(handle_);
    c10::SetAllocator(c10::DeviceType::Meta, g_meta_allocator.previous, 255);
    c10::SetAllocator(c10::DeviceType::CPU, g_cpu_allocator.previous, 255);
    take_foreign_frees();
    g_engine = nullptr;
    place_frees();
    look_at_existing();
    resolve_saved(true);
  }

  // -- what Python tells it ---------------------------------------------------------------------

  // Lets go of the Python callbacks once recording is over: the Recording holds this engine and
  // its bound method held the Recording, a cycle Python's collector cannot see through C++.
  void drop_callbacks() {
    classify_ = py::none();
    is_parameter_ = py::none();
  }

  void set_module(const std::string& m) { module_ = intern(m); }
  void set_phase(const std::string& p) { phase_ = intern(p); }
  void mute(int delta) { muted_ += delta; }

  void saved(const at::Tensor& t) {
    if (const Token* token = token_of(t)) {
      // An output saved before its op returned it: its record is the op's once it ends.
      const Storage& s = storages_[token->id];
      if (s.pending && !s.outside && !frames_.empty()) {
        frames_.back().saved.push_back(token->id);
        return;
      }
    }
    int64_t id = record_of(t, true);
    if (id >= 0) {
      pending_saved_.emplace_back(id, static_cast<int64_t>(ops_.size()));
    }
  }

  // dst (made muted on meta) takes over src's record: torch.tensor(data, device="meta") made
  // as the CPU makes it (see the Python recorder's _made_on_meta).
  void adopt(const at::Tensor& dst, const at::Tensor& src) {
    Token* d = token_of(dst);
    Token* s = token_of(src);
    if (d == nullptr || s == nullptr) {
      return;
    }
    storages_[d->id].freed_after = -2;  // the muted meta storage's own record: never shown
    d->id = s->id;
    s->generation = 0;  // the CPU tensor's going is not the record's
  }

  bool autocast_seen() const { return autocast_seen_; }

  // The record of t's storage (registering one that existed before), or -1.
  int64_t find(const at::Tensor& t) { return record_of(t, false); }
  void note(const at::Tensor& t, const std::string& text) {
    int64_t id = record_of(t, false);
    if (id >= 0 && storages_[id].freed_after == kAlive) {
      storages_[id].note(text);
    }
  }
  py::dict describe(int64_t id) const {
    const Storage& s = storages_.at(id);
    py::dict d;
    d["name"] = s.name;
    d["op"] = s.op;
    d["tensor"] = s.tensor;
    d["kind"] = s.kind == Kind::weight ? "weight" : s.kind == Kind::input ? "input" : "activation";
    return d;
  }
  // The first error inside a hook ("" for none): the trace is incomplete where there is one.
  const std::string& error() const { return error_; }
  void failed(const std::string& what) {
    if (error_.empty()) {
      error_ = what;
    }
  }

  size_t op_count() const { return ops_.size(); }

  bool on_recording_thread() const { return std::this_thread::get_id() == thread_; }

  py::list ops() const {
    py::list out;
    for (const Op& o : ops_) {
      py::dict d;
      d["name"] = o.name;
      d["op"] = o.op;
      d["inputs"] = names(o.inputs);
      d["outputs"] = names(o.outputs);
      d["phase"] = strings_[o.phase];
      d["module"] = strings_[o.module];
      d["line"] = strings_[o.line];
      out.append(std::move(d));
    }
    return out;
  }

  // (name, bytes, kind, freed_after or None, notes, op, module, line, phase, tensor) per storage
  // the trace holds, in the order first seen.
  py::list storages() const {
    py::list out;
    for (int64_t id : order_) {  // made and gone inside one op, or never read: not there
      const Storage& s = storages_[id];
      const char* kind = s.kind == Kind::weight  ? "weight"
                         : s.kind == Kind::input ? "input"
                                                 : "activation";
      py::object freed = py::none();
      if (s.freed_after != kAlive) {
        freed = py::int_(s.freed_after);
      }
      out.append(py::make_tuple(s.name, s.bytes, kind, freed, s.notes, s.op, strings_[s.module],
                                strings_[s.line], strings_[s.phase], s.tensor));
    }
    return out;
  }

  // The trace (docs/TRACE_FORMAT.md) as JSON text: what Recording.trace makes of the same
  // records, written here so that figures() never makes a Python object per op.
  std::string trace_json(const std::string& name, const std::string& recorder) const {
    std::vector<std::vector<int64_t>> frees(ops_.size());
    for (int64_t id : order_) {
      int64_t after = storages_[id].freed_after;
      if (after != kAlive && after >= 0) {
        frees[after].push_back(id);
      }
    }
    std::string out = R"({"format":"footprint-trace/1","name":)" + quoted(name) +
                      R"(,"arguments":"donated","explicit_frees":true,"recorder":)" +
                      quoted(recorder) + R"(,"tensors":[)";
    bool first = true;
    for (int64_t id : order_) {
      const Storage& s = storages_[id];
      if (s.freed_after != kAlive && s.freed_after < 0) {
        continue;  // existed before and was gone before the first op
      }
      out += first ? "{" : ",{";
      first = false;
      auto [kind, note] = trace_kind_and_note(s);
      out += R"("name":)" + quoted(s.name) + R"(,"bytes":)" + std::to_string(s.bytes) +
             R"(,"tensor":)" + quoted(s.tensor) + R"(,"kind":)" + quoted(kind);
      if (s.kind == Kind::activation) {
        out += R"(,"op":)" + quoted(s.op) + R"(,"module":)" + quoted(strings_[s.module]) +
               R"(,"line":)" + quoted(strings_[s.line]) + R"(,"phase":)" +
               quoted(strings_[s.phase]);
      } else {
        out += std::string(R"(,"held":)") + (s.freed_after == kAlive ? "true" : "false");
      }
      if (!note.empty()) {
        out += R"(,"note":)" + quoted(note);
      }
      out += "}";
    }
    out += R"(],"ops":[)";
    for (size_t i = 0; i < ops_.size(); ++i) {
      const Op& o = ops_[i];
      out += i ? ",{" : "{";
      out += R"("name":)" + quoted(o.name) + R"(,"op":)" + quoted(o.op) + R"(,"inputs":)" +
             names_json(o.inputs) + R"(,"outputs":)" + names_json(o.outputs) + R"(,"phase":)" +
             quoted(strings_[o.phase]) + R"(,"module":)" + quoted(strings_[o.module]) +
             R"(,"line":)" + quoted(strings_[o.line]);
      if (!frees[i].empty()) {
        out += R"(,"free":)" + names_json(frees[i]);
      }
      out += "}";
    }
    return out + "]}";
  }

  // (kind, note) of each trace tensor alive at op `step`, as figures()' roles read them.
  py::list alive_at(int64_t step) const {
    auto ops = static_cast<int64_t>(ops_.size());
    py::list out;
    for (int64_t id : order_) {
      const Storage& s = storages_[id];
      if (s.freed_after != kAlive && s.freed_after < 0) {
        continue;
      }
      int64_t freed = s.freed_after == kAlive ? ops : s.freed_after;
      if (s.made_at <= step && step <= freed) {
        auto [kind, note] = trace_kind_and_note(s);
        out.append(py::make_tuple(kind, note, s.bytes));
      }
    }
    return out;
  }

  // The bytes of the trace's inputs and weights: what existed when the recording began.
  int64_t start_bytes() const {
    int64_t sum = 0;
    for (int64_t id : order_) {
      const Storage& s = storages_[id];
      if (s.kind != Kind::activation && (s.freed_after == kAlive || s.freed_after >= 0)) {
        sum += s.bytes;
      }
    }
    return sum;
  }

  // -- the hooks ------------------------------------------------------------------------------

  Token* allocate(size_t n) {
    auto id = static_cast<int64_t>(storages_.size());
    Storage s;
    s.bytes = static_cast<int64_t>(n);
    if (frames_.empty() || muted_ > 0) {
      s.outside = true;
    } else {
      s.made_by = static_cast<int32_t>(frames_.size()) - 1;
      frames_.back().made.push_back(id);
    }
    storages_.push_back(std::move(s));
    return new Token{generation_, id, c10::DataPtr()};
  }

  void released(int64_t id) {
    if (!on_recording_thread()) {
      std::lock_guard<std::mutex> lock(foreign_);
      freed_elsewhere_.push_back(id);
      freed_elsewhere_any_ = true;
      return;
    }
    take_foreign_frees();
    release_here(id);
  }

 private:
  void release_here(int64_t id) {
    Storage& s = storages_[id];
    if (s.pending) {
      s.freed_after = -2;  // never part of the trace
      return;
    }
    if (Frame* op = running_op()) {
      op->frees.push_back(id);
      return;
    }
    between_ops_.push_back(id);
  }

  // RecordFunction swallows a callback's exception (it logs it): the first one is kept and
  // raised by Python when the recording ends (a trace missing an op is no trace).
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
    Engine* engine = g_engine.load();
    if (engine != nullptr && engine->on_recording_thread()) {
      try {
        engine->begin(fn);
      } catch (const std::exception& e) {
        engine->failed(e.what());
      }
    }
    return nullptr;
  }

  static void on_end(const at::RecordFunction& fn, at::ObserverContext* /*ctx*/) {
    Engine* engine = g_engine.load();
    if (engine != nullptr && engine->on_recording_thread()) {
      try {
        engine->end(fn);
      } catch (const std::exception& e) {
        engine->failed(e.what());
      }
    }
  }

  // Whether a dispatch mode would see the call. Not one torch hides from modes (it excludes the
  // Python key around torch.tensor's own allocation and nn.Parameter's detach). Below an open
  // op, only what the op calls above autograd: the ops a CompositeImplicitAutograd op runs as,
  // and what autograd's kernel of an op with tensor arguments calls before it hands the op
  // down (saved-tensor hooks; its guard then excludes the autograd keys for the kernel's own
  // calls). A factory op (no tensor argument) passes no autograd kernel: all it calls is its.
  bool seen_by_a_mode() const {
    auto excluded = c10::impl::tls_local_dispatch_key_set().excluded_;
    if (excluded.has(c10::DispatchKey::Python)) {
      return false;
    }
    if (frames_.empty() || frames_.back().composite) {
      return true;
    }
    return frames_.back().tensor_args && !excluded.has(c10::DispatchKey::ADInplaceOrView);
  }

  void begin(const at::RecordFunction& fn) {
    calls_.push_back(false);  // made true once its frame is pushed
    take_foreign_frees();
    const OpInfo* info = op_info(fn);
    if (info == nullptr || info->profiler || muted_ > 0 || !seen_by_a_mode()) {
      return;
    }
    autocast_seen_ = autocast_seen_ || cpu_autocast_enabled();
    if (!frames_.empty() && !frames_.back().composite) {
      place_frees();  // an op autograd runs before handing the open one down
    }
    look_at_existing();
    if (!pending_saved_.empty()) {
      resolve_saved(false);  // while the op that saved may still hold the tensor
    }
    forget_first_outputs();
    Frame f;
    f.info = info;
    f.composite = info->composite;
    std::vector<at::Tensor> tensors;
    for (const auto& v : fn.inputs()) {
      tensors_in(v, tensors);
    }
    f.tensor_args = !tensors.empty();
    reading_late_.clear();
    {
      py::gil_scoped_acquire gil;
      f.line = user_line();
      for (size_t i = 0; i < tensors.size(); ++i) {
        // A wrapped number (the 0-d tensor a Python number becomes) reaches a dispatch mode as
        // the number: the program read no tensor there (autograd saving it is another matter).
        if (tensors[i].unsafeGetTensorImpl()->is_wrapped_number()) {
          continue;
        }
        int64_t id = read(tensors[i], f.line);
        if (i < 2) {
          f.arg_ids[i] = id;
          f.arg_types[i] =
              tensors[i].defined() ? tensors[i].scalar_type() : c10::ScalarType::Undefined;
        }
        if (id >= 0 && std::find(f.reads.begin(), f.reads.end(), id) == f.reads.end()) {
          f.reads.push_back(id);
        }
      }
    }
    f.late = std::move(reading_late_);
    reading_late_.clear();
    frames_.push_back(std::move(f));
    calls_.back() = true;
  }

  void end(const at::RecordFunction& fn) {
    if (calls_.empty()) {
      return;  // began before the recording
    }
    bool visible = calls_.back();
    calls_.pop_back();
    if (!visible) {
      return;
    }
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    std::vector<at::Tensor> outs;
    for (const auto& v : fn.outputs()) {
      tensors_in(v, outs);
    }
    if (!f.composite) {
      place_frees();
    }
    for (int64_t id : f.late) {
      Storage& s = storages_[id];
      if (s.pending && s.freed_after == kAlive) {
        append_outside(id);
      }
    }
    auto index = static_cast<int64_t>(ops_.size());
    auto depth = static_cast<int32_t>(frames_.size());
    // An exception leaving the op after its kernel ran (2.x's checkpoint stops a recomputation
    // from a saved-tensor hook, above the kernel): no results to read, but what the kernel made
    // and is still alive was its output, as a dispatch mode below autograd saw it.
    bool unwound = outs.empty() && !f.composite && std::uncaught_exceptions() > 0;
    if (f.composite || (f.reads.empty() && outs.empty() && !unwound)) {
      leave_unclaimed(f, depth);
      release_frees(f, index - 1);
      return;
    }
    Op op;
    op.op = f.info->name;
    op.inputs = f.reads;
    op.phase = phase_;
    op.module = module_;
    op.line = f.line;
    const auto& aliases = f.info->aliases;
    bool flags = aliases.size() == outs.size();
    for (size_t i = 0; i < outs.size(); ++i) {
      const at::Tensor& t = outs[i];
      if (!t.defined() || !t.has_storage()) {
        continue;
      }
      if (const Token* token = token_of(t)) {
        const Storage& s = storages_[token->id];
        if (s.pending && !s.outside && s.made_by >= depth) {
          claim(token->id, f, index, &t);
          op.outputs.push_back(token->id);
          continue;
        }
      }
      if (!(flags && aliases[i]) && record_of(t, false) < 0) {
        // Made by the op with an allocator the engine does not stand in for.
        int64_t id = made_elsewhere(t, f);
        storages_[id].made_at = index;
        op.outputs.push_back(id);
        continue;
      }
      record_of(t, true);
    }
    if (unwound) {
      for (int64_t id : f.made) {
        Storage& s = storages_[id];
        if (s.pending && !s.outside && s.freed_after == kAlive && s.made_by >= depth) {
          claim(id, f, index, nullptr);
          op.outputs.push_back(id);
        }
      }
    }
    leave_unclaimed(f, depth);
    note_precision_copies(f, outs, op);
    std::string where;
    if (module_ != 0) {
      where = "@" + strings_[module_];
    }
    if (f.line != 0) {
      where += (where.empty() ? "" : " ") + strings_[f.line];
    }
    op.name = f.info->name + f.info->kind + (where.empty() ? "" : " " + where);
    if (!outs.empty() && outs[0].defined()) {
      op.first_out = c10::weak_intrusive_ptr<c10::TensorImpl>(outs[0].getIntrusivePtr());
    }
    ops_.push_back(std::move(op));
    for (int64_t id : f.saved) {
      pending_saved_.emplace_back(id, index + 1);  // as if packed after the op, as in Python
    }
    release_frees(f, index);
  }

  // Makes storage `id`, which the kernel of f allocated, an output of op `index` (described by
  // `t`, or at its first read when the op's results could not be read).
  void claim(int64_t id, const Frame& f, int64_t index, const at::Tensor* t) {
    Storage& s = storages_[id];
    s.pending = false;
    s.made_by = -1;
    order_.push_back(id);
    s.made_at = index;
    s.name = label(f.info->label);
    s.op = f.info->name;
    s.line = f.line;
    s.module = module_;
    s.phase = phase_;
    if (t != nullptr) {
      s.bytes = static_cast<int64_t>(t->storage().nbytes());
      s.tensor = describe_tensor(*t);
    } else {
      s.undescribed = true;
    }
  }

  // What an op allocated and did not return: its scratch (dropped when freed), or a storage it
  // left somewhere else, placed where it is first read (the op around it may still return it).
  void leave_unclaimed(const Frame& f, int32_t depth) {
    for (int64_t id : f.made) {
      Storage& s = storages_[id];
      if (s.pending && s.freed_after == kAlive) {
        if (frames_.empty()) {
          s.outside = true;
          s.made_by = -1;
        } else {
          s.made_by = depth - 1;
          frames_.back().made.push_back(id);
        }
      }
    }
  }

  int64_t made_elsewhere(const at::Tensor& t, const Frame& f) {
    Storage s;
    s.pending = false;
    s.bytes = static_cast<int64_t>(t.storage().nbytes());
    s.name = label(f.info->label);
    s.op = f.info->name;
    s.line = f.line;
    s.module = module_;
    s.phase = phase_;
    s.tensor = describe_tensor(t);
    return track(std::move(s), t.storage().unsafeGetStorageImpl());
  }

  // Adds the record of a storage the engine did not allocate: no token says when it goes, so it
  // is watched through a weak reference (look_at_existing).
  int64_t track(Storage s, c10::StorageImpl* impl) {
    auto id = static_cast<int64_t>(storages_.size());
    s.weak = c10::weak_intrusive_ptr<c10::StorageImpl>(
        c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(impl));
    storages_.push_back(std::move(s));
    existing_[impl] = id;
    order_.push_back(id);
    return id;
  }

  // Frees another thread made (a tensor dropped there): taken on the recording thread.
  void take_foreign_frees() {
    if (!freed_elsewhere_any_) {
      return;  // (every dispatcher call asks: no lock then)
    }
    std::vector<int64_t> ids;
    {
      std::lock_guard<std::mutex> lock(foreign_);
      ids.swap(freed_elsewhere_);
      freed_elsewhere_any_ = false;
    }
    for (int64_t id : ids) {
      release_here(id);
    }
  }

  // Frees between two ops are placed where a dispatch mode would have looked for them: when the
  // next op reaches the kernels (its end here), after the last op then, which may be the record
  // of a storage made outside aten that autograd saved for the op first (the Python recorder
  // swept at each op, below autograd).
  void place_frees() {
    for (int64_t id : between_ops_) {
      storages_[id].freed_after = static_cast<int64_t>(ops_.size()) - 1;
    }
    between_ops_.clear();
  }

  // The outermost open op that is not a composite (a composite is not an op of the trace:
  // what goes while only composites run goes between two of their ops), or null.
  Frame* running_op() {
    for (Frame& f : frames_) {
      if (!f.composite) {
        return &f;
      }
    }
    return nullptr;
  }

  void release_frees(Frame& f, int64_t after) {
    Frame* op = running_op();
    for (int64_t id : f.frees) {
      if (op != nullptr) {
        op->frees.push_back(id);
      } else {
        storages_[id].freed_after = after;
      }
    }
  }

  static void tensors_in(const c10::IValue& v, std::vector<at::Tensor>& out) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) {
        out.push_back(t);
      }
    } else if (v.isList()) {
      for (const c10::IValue& x : v.toListRef()) {
        tensors_in(x, out);
      }
    } else if (v.isTuple()) {
      for (const c10::IValue& x : v.toTupleRef().elements()) {
        tensors_in(x, out);
      }
    } else if (v.isOptionalTensorList()) {
      for (const c10::IValue& x : v.toListRef()) {
        tensors_in(x, out);
      }
    }
  }

  // The token of t's storage if this recording made it, else null.
  Token* token_of(const at::Tensor& t) const {
    if (!t.defined() || !t.has_storage() || !is_ours(t.storage())) {
      return nullptr;
    }
    auto* token = static_cast<Token*>(t.storage().data_ptr().get_context());
    return token->generation == generation_ ? token : nullptr;
  }

  // The record an op's read finds; a storage made outside ops gets the step that made it now.
  int64_t read(const at::Tensor& t, int32_t line) {
    if (const Token* token = token_of(t)) {
      Storage& s = storages_[token->id];
      if (s.pending && s.freed_after == kAlive &&
          (s.outside || s.made_by >= static_cast<int32_t>(frames_.size()))) {
        // Made outside aten and first read now: its record is made when the op reaches the
        // kernels, after the frees before it (see place_frees), unless autograd saves it first.
        s.outside = true;
        s.made_by = -1;
        s.tensor = describe_tensor(t);
        s.line = line;
        reading_late_.push_back(token->id);
        return token->id;
      }
      if (!s.pending) {
        if (s.undescribed) {
          s.tensor = describe_tensor(t);
          s.undescribed = false;
        }
        if (s.kind == Kind::activation && !s.param_checked && t.is_leaf() && t.requires_grad()) {
          // A model built inside the step: its parameters are storages ops made.
          s.param_checked = true;
          if (is_parameter_(t).cast<bool>()) {
            s.note("parameter");
          }
        }
        return token->id;
      }
    }
    return record_of(t, true);
  }

  void made_outside(int64_t id, const at::Tensor& t, int32_t line) {
    Storage& s = storages_[id];
    s.line = line;
    s.tensor = describe_tensor(t);
    s.bytes = static_cast<int64_t>(t.storage().nbytes());
    append_outside(id);
  }

  void append_outside(int64_t id) {
    Storage& s = storages_[id];
    s.pending = false;
    s.made_at = static_cast<int64_t>(ops_.size());
    order_.push_back(id);
    s.outside = false;
    s.name = label("outside_aten");
    s.op = "made outside aten (torch.tensor, a wrapped number)";
    s.module = module_;
    s.phase = phase_;
    int32_t line = s.line;
    Op op;
    op.name = s.name + " = " + s.tensor + " made outside aten " + strings_[line];
    op.op = "outside_aten";
    op.outputs.push_back(id);
    op.phase = phase_;
    op.module = module_;
    op.line = line;
    ops_.push_back(std::move(op));
  }

  // The record of a storage the engine did not allocate in this recording: one that existed
  // before (a parameter, an argument), asked of Python once; -1 for no storage. Needs the GIL
  // only to register.
  int64_t record_of(const at::Tensor& t, bool add) {
    if (!t.defined() || !t.has_storage()) {
      return -1;
    }
    const c10::Storage& st = t.storage();
    if (const Token* token = token_of(t)) {
      Storage& s = storages_[token->id];
      if (!s.pending) {
        return token->id;
      }
      bool open = !s.outside && s.made_by < static_cast<int32_t>(frames_.size());
      if (!add || s.freed_after != kAlive || open) {
        return -1;  // gone, or an output its op (still running) has not returned yet
      }
      // Made in this recording outside any op the program saw (a muted helper, a kernel's
      // storage it kept elsewhere), and wanted now: placed here.
      py::gil_scoped_acquire gil;
      made_outside(token->id, t, user_line());
      return token->id;
    }
    c10::StorageImpl* impl = st.unsafeGetStorageImpl();
    auto it = existing_.find(impl);
    if (it != existing_.end()) {
      Storage& s = storages_[it->second];
      if (s.freed_after == kAlive && !s.weak.expired()) {
        return it->second;
      }
      if (s.freed_after == kAlive) {
        s.freed_after = static_cast<int64_t>(ops_.size()) - 1;
      }
      existing_.erase(it);
    }
    if (!add) {
      return -1;
    }
    py::gil_scoped_acquire gil;
    py::tuple answer = classify_(t);  // (kind, name, note)
    Storage s;
    auto kind = answer[0].cast<std::string>();
    s.kind = kind == "weight" ? Kind::weight : Kind::input;
    auto name = answer[1].cast<std::string>();
    s.name = name.empty() ? label(kind == "weight" ? "parameter" : "input") : name;
    if (!answer[2].is_none()) {
      s.note(answer[2].cast<std::string>());
    }
    s.pending = false;
    s.bytes = static_cast<int64_t>(st.nbytes());
    s.tensor = describe_tensor(t);
    s.phase = phase_;
    s.module = module_;
    return track(std::move(s), impl);
  }

  // Storages that existed before the recording go with no token to say so: looked at before
  // each op (there are few: parameters and arguments).
  void look_at_existing() {
    for (auto it = existing_.begin(); it != existing_.end();) {
      Storage& s = storages_[it->second];
      if (s.weak.expired()) {
        if (s.freed_after == kAlive) {
          s.freed_after = static_cast<int64_t>(ops_.size()) - 1;
        }
        it = existing_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // An op's first output is kept (weakly: its TensorImpl's memory stays until the reference
  // goes) only while a pack may still name the node that saved it: the last op's, and those
  // pending packs point at.
  void forget_first_outputs() {
    auto limit = static_cast<int64_t>(ops_.size()) - 1;
    for (const auto& [id, c] : pending_saved_) {
      limit = std::min(limit, c - 1);
    }
    for (; forgotten_ < limit; ++forgotten_) {
      ops_[forgotten_].first_out.reset();
    }
  }

  // A pack between ops c-1 and c saves an output of op c-1 or an input of op c (see the Python
  // recorder's _resolve_saved); the saving node is that op's first output's grad_fn.
  void resolve_saved(bool final) {
    std::vector<std::pair<int64_t, int64_t>> keep;
    for (auto [id, c] : pending_saved_) {
      auto n = static_cast<int64_t>(ops_.size());
      if (c >= n && !final) {
        keep.emplace_back(id, c);
        continue;
      }
      int64_t op = c - 1;
      if (c < n) {
        const auto& in = ops_[c].inputs;
        if (std::find(in.begin(), in.end(), id) != in.end()) {
          op = c;
        }
      }
      std::string node;
      if (op >= 0 && op < n) {
        auto out = ops_[op].first_out.lock();
        if (out) {
          at::Tensor t(std::move(out));
          const auto& g = t.grad_fn();
          if (g) {
            node = g->name();
          }
        }
      }
      if (!node.empty()) {
        storages_[id].note("saved for backward of " + node);
      } else {
        storages_[id].note("saved for backward of " + (op >= 0 && op < n
                                                           ? "the node of " + ops_[op].op
                                                           : std::string("an autograd node")));
      }
    }
    pending_saved_ = std::move(keep);
  }

  // Mixed precision's two copies of a weight, as the Python recorder names them
  // (_note_precision_copy).
  void note_precision_copies(const Frame& f, const std::vector<at::Tensor>& outs, const Op& op) {
    const std::string& name = f.info->name;
    if (name == "_to_copy" && f.arg_ids[0] >= 0 && !op.outputs.empty()) {
      precision(f.arg_ids[0], f.arg_types[0], op.outputs[0], outs[0].scalar_type());
    } else if (name == "copy_" && f.arg_ids[0] >= 0 && f.arg_ids[1] >= 0) {
      precision(f.arg_ids[1], f.arg_types[1], f.arg_ids[0], f.arg_types[0]);
    }
  }

  bool is_param(const Storage& s) const {
    if (s.kind == Kind::weight) {
      return true;
    }
    return std::find(s.notes.begin(), s.notes.end(), "parameter") != s.notes.end();
  }

  static bool half(c10::ScalarType t) {
    return t == c10::ScalarType::Half || t == c10::ScalarType::BFloat16;
  }

  void precision(int64_t src, c10::ScalarType src_t, int64_t dst, c10::ScalarType dst_t) {
    Storage& a = storages_[src];
    Storage& b = storages_[dst];
    if (is_param(a) && src_t == c10::ScalarType::Float && half(dst_t)) {
      a.note("fp32 master");
      b.note("16-bit copy of " + a.name);
    } else if (is_param(b) && half(dst_t) && src_t == c10::ScalarType::Float) {
      a.note("fp32 master of " + b.name);
    }
  }

  const OpInfo* op_info(const at::RecordFunction& fn) {
    const char* key = fn.name();
    auto it = infos_.find(key);
    if (it != infos_.end()) {
      return it->second.get();
    }
    auto info = std::make_unique<OpInfo>();
    std::string full = key;
    auto opname = fn.operator_name();
    if (!opname) {
      infos_[key] = nullptr;
      return nullptr;
    }
    info->profiler = full.rfind("profiler::", 0) == 0;
    auto handle = c10::Dispatcher::singleton().findOp(*opname);
    if (handle) {
      info->composite = runs_as_its_ops(*handle);
      if (handle->hasSchema()) {
        bool write = false;
        for (const auto& r : handle->schema().returns()) {
          const auto* a = r.alias_info();
          info->aliases.push_back(a != nullptr);
          write = write || (a != nullptr && a->isWrite());
        }
        bool any =
            std::find(info->aliases.begin(), info->aliases.end(), true) != info->aliases.end();
        info->kind = !any ? "" : write ? " (in place)" : " (view)";
      }
    }
    std::string base = opname->name;
    auto colon = base.find("::");
    if (colon != std::string::npos) {
      base = base.substr(colon + 2);
    }
    info->label = base;
    info->name = opname->overload_name.empty() ? base : base + "." + opname->overload_name;
    const OpInfo* p = info.get();
    infos_[key] = std::move(info);
    return p;
  }

  // Whether the op decomposes above autograd (its CompositeImplicitAutograd kernel is the one
  // the dispatcher computed for autograd on the CPU: a registration alone does not say, as ops
  // with their own autograd formula may have one too).
  static bool runs_as_its_ops(const c10::OperatorHandle& op) {
    std::string table = op.dumpComputedTable();
    auto at = table.find("AutogradCPU:");
    if (at == std::string::npos) {
      return false;
    }
    auto end = table.find('\n', at);
    return table.substr(at, end - at).find("[math kernel]") != std::string::npos;
  }

  std::string label(const std::string& base) {
    int64_t& n = counts_[base];
    return base + "#" + std::to_string(n++);
  }

  static std::string describe_tensor(const at::Tensor& t) {
    std::string s = dtype_name(t.scalar_type()) + "[";
    for (size_t i = 0; i < static_cast<size_t>(t.dim()); ++i) {
      s += (i ? ", " : "") + std::to_string(t.sizes()[i]);
    }
    return s + "]";
  }

  static std::string dtype_name(c10::ScalarType t) {
    switch (t) {
      case c10::ScalarType::Float:
        return "float32";
      case c10::ScalarType::Double:
        return "float64";
      case c10::ScalarType::Half:
        return "float16";
      case c10::ScalarType::BFloat16:
        return "bfloat16";
      case c10::ScalarType::Long:
        return "int64";
      case c10::ScalarType::Int:
        return "int32";
      case c10::ScalarType::Short:
        return "int16";
      case c10::ScalarType::Char:
        return "int8";
      case c10::ScalarType::Byte:
        return "uint8";
      case c10::ScalarType::Bool:
        return "bool";
      case c10::ScalarType::ComplexFloat:
        return "complex64";
      case c10::ScalarType::ComplexDouble:
        return "complex128";
      default:
        return c10::toString(t);
    }
  }

  int32_t intern(const std::string& s) {
    auto it = interned_.find(s);
    if (it != interned_.end()) {
      return it->second;
    }
    auto id = static_cast<int32_t>(strings_.size());
    strings_.push_back(s);
    interned_.emplace(s, id);
    return id;
  }

  // A trace tensor's kind and note, as Recording.trace writes them.
  std::pair<std::string, std::string> trace_kind_and_note(const Storage& s) const {
    bool alive = s.freed_after == kAlive;
    std::vector<std::string> notes = s.notes;
    std::string kind;
    if (s.kind == Kind::activation) {
      kind = alive ? "output" : "activation";
      if (alive) {
        notes.emplace_back("held by the caller after the run");
      }
    } else {
      kind = s.kind == Kind::weight ? "weight" : "input";
      if (s.kind == Kind::input) {
        notes.emplace_back("existed before the recording");
      }
    }
    std::string note;
    for (const auto& n : notes) {
      note += (note.empty() ? "" : "; ") + n;
    }
    return {kind, note};
  }

  std::string names_json(const std::vector<int64_t>& ids) const {
    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
      out += (i ? "," : "") + quoted(storages_[ids[i]].name);
    }
    return out + "]";
  }

  static std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
      auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (u < 0x20) {
        static const char* hex = "0123456789abcdef";
        out += "\\u00";
        out += hex[u >> 4];
        out += hex[u & 15];
      } else {
        out += c;  // UTF-8 passes through: JSON text is UTF-8
      }
    }
    return out + "\"";
  }

  py::list names(const std::vector<int64_t>& ids) const {
    py::list out;
    for (int64_t id : ids) {
      out.append(storages_[id].name);
    }
    return out;
  }

  // "file.py:line" of the innermost Python frame outside torch, footprint and contextlib (GIL
  // held), interned; 0 for none.
  int32_t user_line() {
    PyFrameObject* frame = PyEval_GetFrame();  // borrowed
    if (frame == nullptr) {
      return 0;
    }
    Py_INCREF(frame);
    int32_t found = 0;
    while (frame != nullptr) {
      PyCodeObject* code = PyFrame_GetCode(frame);
      bool skip = skipped(code);
      if (!skip) {
        int line = PyFrame_GetLineNumber(frame);
        auto key = std::make_pair(code, line);
        auto it = lines_.find(key);
        if (it != lines_.end()) {
          found = it->second;
        } else {
          std::string file = py::str(code->co_filename);
          auto slash = file.rfind('/');
          found = intern((slash == std::string::npos ? file : file.substr(slash + 1)) + ":" +
                         std::to_string(line));
          lines_.emplace(key, found);
        }
        Py_DECREF(code);
        Py_DECREF(frame);
        return found;
      }
      Py_DECREF(code);
      PyFrameObject* back = PyFrame_GetBack(frame);
      Py_DECREF(frame);
      frame = back;
    }
    return found;
  }

  bool skipped(PyCodeObject* code) {
    auto it = skipped_code_.find(reinterpret_cast<PyObject*>(code));
    if (it != skipped_code_.end()) {
      return it->second;
    }
    std::string file = py::str(code->co_filename);
    bool skip = false;
    for (const auto& d : skip_dirs_) {
      skip = skip || file.rfind(d, 0) == 0;
    }
    Py_INCREF(code);  // held, so that its address is not another code object's
    skipped_code_.emplace(reinterpret_cast<PyObject*>(code), skip);
    return skip;
  }

  struct PairHash {
    size_t operator()(const std::pair<PyCodeObject*, int>& p) const {
      return std::hash<const void*>()(p.first) ^ (std::hash<int>()(p.second) << 1);
    }
  };

  std::vector<std::string> skip_dirs_;
  py::object classify_;
  py::object is_parameter_;
  uint64_t generation_ = 0;
  at::CallbackHandle handle_ = 0;
  std::vector<Storage> storages_;
  std::vector<Op> ops_;
  std::vector<Frame> frames_;
  std::vector<bool> calls_;  // per open dispatcher call, whether it is a visible frame
  int muted_ = 0;
  std::thread::id thread_;
  std::string error_;
  std::mutex foreign_;                    // guards freed_elsewhere_
  std::vector<int64_t> freed_elsewhere_;  // records whose storage another thread freed
  std::atomic<bool> freed_elsewhere_any_{false};
  bool autocast_seen_ = false;
  int32_t module_ = 0, phase_ = 0;
  std::unordered_map<c10::StorageImpl*, int64_t> existing_;
  std::vector<std::pair<int64_t, int64_t>> pending_saved_;
  int64_t forgotten_ = 0;       // ops before it hold no first output
  std::vector<int64_t> order_;  // the records the trace holds, in the order first seen
  std::vector<int64_t> between_ops_;
  std::vector<int64_t> reading_late_;  // freed since the last op, placed when the next begins
  std::unordered_map<const char*, std::unique_ptr<OpInfo>> infos_;
  std::unordered_map<std::string, int64_t> counts_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int32_t> interned_;
  std::unordered_map<PyObject*, bool> skipped_code_;
  std::unordered_map<std::pair<PyCodeObject*, int>, int32_t, PairHash> lines_;
};

c10::DataPtr TokenAllocator::allocate(size_t n) FOOTPRINT_ALLOCATE_CONST {
  c10::DataPtr real = previous->allocate(n);
  Engine* engine = g_engine.load();
  if (engine == nullptr || !engine->on_recording_thread()) {
    return real;  // a kernel's worker thread: scratch of the op the recording thread runs
  }
  Token* token = engine->allocate(n);
  void* data = real.get();
  c10::Device device = real.device();
  token->wrapped = std::move(real);
  return {data, token, &release_token, device};
}

void release_token(void* ctx) {
  auto* token = static_cast<Token*>(ctx);
  if (token == nullptr) {
    return;
  }
  Engine* engine = g_engine.load();
  if (engine != nullptr && token->generation == g_generation.load()) {
    engine->released(token->id);
  }
  delete token;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  py::class_<Engine>(m, "Engine")
      .def(py::init<std::vector<std::string>, py::object, py::object>())
      .def("start", &Engine::start)
      .def("stop", &Engine::stop)
      .def("drop_callbacks", &Engine::drop_callbacks)
      .def("set_module", &Engine::set_module)
      .def("set_phase", &Engine::set_phase)
      .def("mute", &Engine::mute)
      .def("saved", &Engine::saved)
      .def("find", &Engine::find)
      .def("note", &Engine::note)
      .def("describe", &Engine::describe)
      .def("adopt", &Engine::adopt)
      .def("autocast_seen", &Engine::autocast_seen)
      .def("error", &Engine::error)
      .def("op_count", &Engine::op_count)
      .def("trace_json", &Engine::trace_json)
      .def("alive_at", &Engine::alive_at)
      .def("start_bytes", &Engine::start_bytes)
      .def("ops", &Engine::ops)
      .def("storages", &Engine::storages);
}
