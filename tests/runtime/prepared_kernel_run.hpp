#pragma once
// Runs one kernel that has a prepare hook and a workspace the way the executor does: a one-node
// model is built in memory (every input an initializer), its outputs are allocated with the
// inferred extents, the registry's WorkspaceFn sizes the scratch, the PrepareFn builds the state
// (seeing data only for the inputs marked constant) and the kernel runs on it.
//
//   PreparedRun k("Conv", {x, w}, {attr("pads", Ints{1, 1, 1, 1})});
//   k.run();
//   k.out(0).floats();  // compared with a naive reference
//   k.workspace_bytes(); k.allocations();
//   PreparedRun("com.microsoft::MatMulNBits", ...);   // an op of another domain
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/graph/node_runner.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "graph/infer_builder.hpp"

namespace footprint::testing {

using Ints = std::vector<int64_t>;

// A tensor the test owns, its elements as raw bytes.
struct Tensor {
  DType dtype = DType::float32;
  Ints dims;
  std::vector<std::byte> bytes;

  size_t numel() const {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
  }
  template <class T>
  std::vector<T> values() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }
  std::vector<float> floats() const { return values<float>(); }

  template <class T>
  static Tensor of(DType dtype, Ints dims, const std::vector<T>& v) {
    Tensor t{dtype, std::move(dims), {}};
    if (t.numel() != v.size()) throw std::runtime_error("test tensor: values do not match dims");
    t.bytes.resize(v.size() * sizeof(T));
    if (!t.bytes.empty()) std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    return t;
  }
};

inline Tensor floats(Ints dims, const std::vector<float>& v) {
  return Tensor::of(DType::float32, std::move(dims), v);
}

// Uniform(-1, 1) elements from a fixed seed (different per call through `seed`).
inline Tensor random_floats(Ints dims, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return floats(std::move(dims), v);
}

// n integers of T drawn uniformly from [lo, hi] (by default T's whole range), seeded.
template <class T>
std::vector<T> random_ints(
    size_t n, unsigned seed,
    int lo = std::numeric_limits<T>::min(),  // NOLINT(bugprone-signed-char-misuse)
    int hi = std::numeric_limits<T>::max()) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> u(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(gen));
  return v;
}

// 64-byte aligned bytes, as the arena gives them.
struct AlignedBytes {
  struct Free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<std::byte[], Free> data;
  size_t size = 0;
  explicit AlignedBytes(size_t n = 0)
      : data(n ? static_cast<std::byte*>(::operator new[](n, std::align_val_t{64})) : nullptr),
        size(n) {}
};

// The node runs through graph::workspace_bytes, graph::prepare and graph::run, as the
// runtime's steps run.
class PreparedRun {
 public:
  // `inputs`: nullopt for an omitted optional input; `outputs`: the node's output count (an
  // empty name in `omitted_outputs` positions leaves that output out). An op outside the default
  // domain is named with it: "com.microsoft::QLinearAdd".
  PreparedRun(std::string op, std::vector<std::optional<Tensor>> inputs,
              std::vector<Wire> attrs = {}, int64_t opset = 18, size_t outputs = 1)
      : op_(std::move(op)), inputs_(std::move(inputs)), opset_(opset) {
    if (const size_t at = op_.find("::"); at != std::string::npos) {
      domain_ = op_.substr(0, at);
      op_ = op_.substr(at + 2);
    }
    OneNode g;
    std::vector<std::string> in_names;
    std::vector<std::string> out_names;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      in_names.push_back(inputs_[i] ? "in" + std::to_string(i) : "");
      if (inputs_[i]) g.initializer(initializer(in_names.back(), *inputs_[i]));
    }
    for (size_t i = 0; i < outputs; ++i) out_names.push_back("out" + std::to_string(i));
    Wire n = node_with(op_, {in_names.begin(), in_names.end()},
                       {out_names.begin(), out_names.end()}, attrs, "n0");
    if (!domain_.empty()) n.str(7, domain_);
    g.node(n);
    for (const std::string& o : out_names) g.output(o);
    model_ = infer(g.graph, opset, nullptr, runtime::op_registry());
    for (auto& in : inputs_) {
      in_refs_.push_back(in ? graph::TensorRef{in->dtype, in->dims, in->bytes.data()}
                            : graph::TensorRef{});
    }
    for (const std::string& o : out_names) {
      const graph::Value& v = model_->value(o);
      if (!v.shape.is_static()) throw std::runtime_error("output extents are not known");
      Tensor t{v.dtype, {}, {}};
      for (const Dim& d : v.shape.dims) t.dims.push_back(*d.value());
      t.bytes.resize(dtype_storage_bytes(t.dtype, t.numel()).value_or(0));
      outputs_.push_back(std::move(t));
    }
    ctx_ = std::make_unique<graph::NodeContext>(node(), 0, opset_);
    for (size_t i = 0; i < inputs_.size(); ++i)
      ctx_->add_input(inputs_[i] ? &in_refs_[i] : nullptr);
    for (Tensor& t : outputs_) {
      const graph::TensorRef ref{t.dtype, t.dims, t.bytes.data()};
      ctx_->add_output(&ref);
    }
  }

  // Inputs whose data the PrepareFn sees (weights); the others read as null while preparing.
  PreparedRun& constants(std::vector<size_t> which) {
    constants_ = std::move(which);
    return *this;
  }
  PreparedRun& threads(int n) {
    threads_ = n;
    return *this;
  }

  // Workspace, prepare, then the kernel (twice: a second run reuses the state). Throws what the
  // hooks throw.
  void run() {
    const graph::OpSchema* s = runtime::op_registry().find(domain_, op_);
    if (s == nullptr || s->kernel == nullptr) throw std::runtime_error("no kernel for " + op_);
    graph::NodeContext& ctx = *ctx_;
    ctx.thread_count = threads_;
    workspace_bytes_ = graph::workspace_bytes(ctx);
    workspace_ = AlignedBytes(workspace_bytes_);
    ctx.scratch = {workspace_.data.get(), workspace_.size};
    ctx.kernel_state = nullptr;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      if (!is_constant(i)) ctx.inputs[i].data = nullptr;
    }
    state_ = graph::prepare(ctx);
    for (size_t i = 0; i < ctx.inputs.size(); ++i) ctx.inputs[i].data = in_refs_[i].data;
    ctx.kernel_state = state_.get();
    for (int pass = 0; pass < 2; ++pass) {
      // Garbage first, so an element the kernel forgets to write shows.
      for (Tensor& t : outputs_) {
        if (!t.bytes.empty()) std::memset(t.bytes.data(), 0xcd, t.bytes.size());
      }
      const auto before = heap::snapshot().allocations;
      graph::run(ctx);
      allocations_ = heap::snapshot().allocations - before;
    }
  }
  // The kernel alone on the state the last run() prepared (for timing).
  void rerun() { graph::run(*ctx_); }

  std::string run_error() {
    try {
      run();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  const Tensor& out(size_t i) const { return outputs_.at(i); }
  // The bytes of input i the next run() reads: a value inference never saw (its size kept).
  std::vector<std::byte>& input_bytes(size_t i) { return inputs_.at(i)->bytes; }
  uint64_t workspace_bytes() const { return workspace_bytes_; }
  uint64_t allocations() const { return allocations_; }  // in the last run (0 without the counter)
  bool has_state() const { return state_ != nullptr; }
  const graph::KernelState* state() const { return state_.get(); }

  const graph::Node& node() const { return model_->graph.node(0); }

 private:
  bool is_constant(size_t i) const {
    return std::find(constants_.begin(), constants_.end(), i) != constants_.end();
  }
  static Wire initializer(std::string_view name, const Tensor& t) {
    Wire w;
    for (int64_t d : t.dims) w.int_field(1, d);
    w.int_field(2, static_cast<int64_t>(t.dtype));
    w.str(8, name);
    w.bytes_field(9, t.bytes);
    return w;
  }

  std::string op_;
  std::string domain_;
  std::vector<std::optional<Tensor>> inputs_;
  int64_t opset_;
  std::unique_ptr<Inferred> model_;
  std::vector<graph::TensorRef> in_refs_;
  std::vector<Tensor> outputs_;
  std::unique_ptr<graph::NodeContext> ctx_;
  std::vector<size_t> constants_{1, 2, 3, 4};
  AlignedBytes workspace_;
  uint64_t workspace_bytes_ = 0;
  std::unique_ptr<graph::KernelState> state_;
  int threads_ = 1;
  uint64_t allocations_ = 0;
};

// |got - want| <= tol * (1 + |want|) element by element, reporting the first few misses.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                         float tol = 1e-4f) {
  ASSERT_EQ(got.size(), want.size());
  int misses = 0;
  for (size_t i = 0; i < got.size() && misses < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want[i];
      ++misses;
    }
  }
}

}  // namespace footprint::testing
