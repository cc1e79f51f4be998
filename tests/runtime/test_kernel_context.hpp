#pragma once
// Runs one kernel outside the executor: a one-node ONNX model is built in memory (every input an
// initializer, so shape inference knows the values that decide output extents), its outputs are
// allocated with the inferred extents, and the runtime registry's kernel runs on them.
//
//   KernelRun k("Add", {f32({2}, {1, 2}), f32({1}, {10})});
//   k.run();
//   EXPECT_EQ(k.out(0).values<float>(), (std::vector<float>{11, 12}));
//   EXPECT_EQ(k.allocations(), 0u);  // kernels never touch the heap while running
//
// Attributes use the Wire builders of tests/graph/infer_builder.hpp (attr, attr_float, ...).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/graph/node_runner.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "graph/infer_builder.hpp"

namespace footprint::testing {

// A tensor the test owns: dtype, dims and little-endian element bytes (8-byte aligned).
struct TestTensor {
  DType dtype = DType::undefined;
  std::vector<int64_t> dims;
  std::vector<uint64_t> words;  // storage; bytes() of it are the elements
  size_t nbytes = 0;

  size_t numel() const {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    return n;
  }
  void* data() { return words.data(); }
  const void* data() const { return words.data(); }
  std::span<const std::byte> bytes() const {
    return {reinterpret_cast<const std::byte*>(words.data()), nbytes};
  }

  static TestTensor zeros(DType dtype, std::vector<int64_t> dims) {
    TestTensor t;
    t.dtype = dtype;
    t.dims = std::move(dims);
    t.nbytes = dtype_storage_bytes(dtype, t.numel()).value_or(0);
    t.words.assign(t.nbytes / 8 + 1, 0);
    return t;
  }
  template <class T>
  static TestTensor of(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
    TestTensor t = zeros(dtype, std::move(dims));
    if (values.size() * sizeof(T) != t.nbytes) {
      throw std::runtime_error("test tensor: values do not match the dims");
    }
    if (t.nbytes > 0) std::memcpy(t.data(), values.data(), t.nbytes);
    return t;
  }
  // The elements as T (bool tensors read as uint8_t).
  template <class T>
  std::vector<T> values() const {
    std::vector<T> v(nbytes / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), data(), v.size() * sizeof(T));
    return v;
  }
};

inline TestTensor f32(std::vector<int64_t> dims, const std::vector<float>& v) {
  return TestTensor::of(DType::float32, std::move(dims), v);
}
inline TestTensor f64(std::vector<int64_t> dims, const std::vector<double>& v) {
  return TestTensor::of(DType::float64, std::move(dims), v);
}
inline TestTensor i64(std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  return TestTensor::of(DType::int64, std::move(dims), v);
}
inline TestTensor i32(std::vector<int64_t> dims, const std::vector<int32_t>& v) {
  return TestTensor::of(DType::int32, std::move(dims), v);
}
inline TestTensor u8(std::vector<int64_t> dims, const std::vector<uint8_t>& v) {
  return TestTensor::of(DType::uint8, std::move(dims), v);
}
inline TestTensor boolean(std::vector<int64_t> dims, const std::vector<uint8_t>& v) {
  return TestTensor::of(DType::boolean, std::move(dims), v);
}

// Node 0 of a one-node model, run on tensors the test owns.
// The node runs through graph::evaluate, as value propagation and folding run it: the row's
// workspace, its prepare hook on the inputs (all of them known), then the kernel.
class KernelRun {
 public:
  // `inputs`: nullopt for an omitted optional input. `outputs`: how many outputs the node has.
  KernelRun(std::string op, std::vector<std::optional<TestTensor>> inputs,
            std::vector<Wire> attrs = {}, int64_t opset = 18, size_t outputs = 1)
      : op_(std::move(op)), inputs_(std::move(inputs)), opset_(opset) {
    OneNode g;
    std::vector<std::string> in_names;
    std::vector<std::string> out_names;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      in_names.push_back(inputs_[i] ? "in" + std::to_string(i) : "");
      if (inputs_[i]) g.initializer(initializer(in_names.back(), *inputs_[i]));
    }
    for (size_t i = 0; i < outputs; ++i) out_names.push_back("out" + std::to_string(i));
    g.node(node_with(op_, views(in_names), views(out_names), attrs, "n0"));
    for (const std::string& o : out_names) g.output(o);
    model_ = infer(g.graph, opset, nullptr, runtime::op_registry());
    for (const auto& in : inputs_) {
      in_refs_.push_back(in ? graph::TensorRef{in->dtype, in->dims, const_cast<void*>(in->data())}
                            : graph::TensorRef{});
    }
    for (const std::string& o : out_names) {
      const graph::Value& v = model_->value(o);
      std::vector<int64_t> dims;
      if (v.shape.is_static()) {
        for (const Dim& d : v.shape.dims) dims.push_back(*d.value());
      }
      outputs_.push_back(TestTensor::zeros(v.dtype, dims));
      static_ok_.push_back(v.shape.is_static());
    }
  }

  // Overrides output i's extents (when inference cannot know them).
  KernelRun& output_dims(size_t i, std::vector<int64_t> dims) {
    outputs_[i] = TestTensor::zeros(outputs_[i].dtype, std::move(dims));
    static_ok_[i] = true;
    return *this;
  }
  KernelRun& threads(int n) {
    threads_ = n;
    return *this;
  }
  // Output 0 shares input 0's buffer, as when the executor runs an in_place op in place.
  KernelRun& in_place() {
    in_place_ = true;
    return *this;
  }

  // Runs the kernel; throws what it throws.
  void run() {
    const graph::OpSchema* s = runtime::op_registry().find("", op_);
    if (s == nullptr || s->kernel == nullptr) throw std::runtime_error("no kernel for " + op_);
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (!static_ok_[i]) throw std::runtime_error("output extents are not known");
      // Garbage first, so an element the kernel forgets to write shows.
      std::memset(outputs_[i].data(), 0xcd, outputs_[i].nbytes);
    }
    graph::NodeContext ctx(node(), 0, opset_);
    ctx.thread_count = threads_;
    for (size_t i = 0; i < inputs_.size(); ++i) ctx.add_input(inputs_[i] ? &in_refs_[i] : nullptr);
    for (TestTensor& o : outputs_) {
      const graph::TensorRef ref{o.dtype, o.dims, o.data()};
      ctx.add_output(&ref);
    }
    if (in_place_) {
      in_place_copy_ = *inputs_.at(0);
      ctx.inputs[0].data = in_place_copy_.data();
      ctx.outputs[0].data = in_place_copy_.data();
    }
    const graph::NodeRun r = graph::evaluate(ctx);
    allocations_ = r.kernel_heap_allocations;
    workspace_bytes_ = r.workspace_bytes;
    if (in_place_ && outputs_[0].nbytes > 0) {
      std::memcpy(outputs_[0].data(), in_place_copy_.data(), outputs_[0].nbytes);
    }
  }
  // The message of the error the kernel throws; "" when it does not.
  std::string run_error() {
    try {
      run();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  const TestTensor& out(size_t i) const { return outputs_.at(i); }
  // Heap allocations by the kernel during the last run (0 without the heap counter linked).
  uint64_t allocations() const { return allocations_; }
  // The scratch the op's row declared for the last run, which the kernel was given.
  uint64_t workspace_bytes() const { return workspace_bytes_; }

  const graph::Node& node() const { return model_->graph.node(0); }
  const graph::Graph& graph() const { return model_->graph; }

 private:
  static std::vector<std::string_view> views(const std::vector<std::string>& names) {
    return {names.begin(), names.end()};
  }
  static Wire initializer(std::string_view name, const TestTensor& t) {
    Wire w;
    for (int64_t d : t.dims) w.int_field(1, d);
    w.int_field(2, static_cast<int64_t>(t.dtype));
    w.str(8, name);
    w.bytes_field(9, t.bytes());
    return w;
  }

  std::string op_;
  std::vector<std::optional<TestTensor>> inputs_;
  int64_t opset_;
  std::unique_ptr<Inferred> model_;
  std::vector<graph::TensorRef> in_refs_;
  std::vector<TestTensor> outputs_;
  std::vector<bool> static_ok_;
  TestTensor in_place_copy_;
  int threads_ = 1;
  bool in_place_ = false;
  uint64_t allocations_ = 0;
  uint64_t workspace_bytes_ = 0;
};

// One float output of `op` on `in`, with the check every kernel test makes: running allocated
// nothing.
struct Ran {
  std::vector<int64_t> dims;
  std::vector<float> values;
};

inline Ran run_f32(const std::string& op, std::vector<std::optional<TestTensor>> in,
                   std::vector<Wire> attrs = {}, int64_t opset = 18) {
  KernelRun k(op, std::move(in), std::move(attrs), opset);
  k.run();
  EXPECT_EQ(k.allocations(), 0u) << op;
  return {k.out(0).dims, k.out(0).values<float>()};
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want,
                        float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// 0, 1, ..., n-1.
inline std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

}  // namespace footprint::testing
