#pragma once
// What an operator's kernel sees when it runs: its node, tensors whose memory the executor owns
// (inputs in place, outputs already allocated at their planned offsets with their inferred
// extents), the step's scratch from the plan, and the thread count.
//
// A kernel never allocates its outputs or its scratch: both come from the plan, so every byte it
// touches was predicted (DESIGN.md "Prediction = measurement"). Kernels are rows of the op
// registry (OpSchema::kernel), filled by the runtime layer (runtime/op_kernels.hpp).
//
//   void relu(graph::KernelContext& ctx) {
//     const auto x = ctx.input(0).span<const float>();
//     auto y = ctx.output(0).span<float>();   // may alias x when the step runs in place
//     for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : 0;
//   }
//
// A kernel that needs per-node state built once (a oneDNN primitive) registers a PrepareFn; the
// executor calls it when the model is prepared, with the inputs' extents (and data for weights),
// and hands the state back through ctx.state() on every run.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/core/dtype.hpp"
#include "footprint/onnx/proto.hpp"

namespace footprint::graph {

struct Node;

// A tensor in memory the executor owns. `data` is null while preparing for tensors whose
// contents are not known yet (activations, inputs).
struct TensorRef {
  DType dtype = DType::undefined;
  std::span<const int64_t> dims;
  void* data = nullptr;

  size_t numel() const;
  size_t bytes() const;  // numel x element size (packed types rounded up)
  size_t rank() const { return dims.size(); }
  int64_t dim(size_t i) const { return dims[i]; }
  template <class T>
  std::span<T> span() const {
    return {static_cast<T*>(data), numel()};
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

// Per-node state a kernel builds when the model is prepared (primitives, packed constants).
class KernelState {
 public:
  virtual ~KernelState() = default;
  // Heap bytes the state holds beyond its primitives (packed weights).
  virtual uint64_t owned_bytes() const { return 0; }
};

class KernelContext {
 public:
  virtual ~KernelContext() = default;

  virtual const Node& node() const = 0;
  virtual int32_t node_id() const = 0;
  virtual int64_t opset() const = 0;
  virtual size_t input_count() const = 0;
  virtual size_t output_count() const = 0;
  // nullptr: an omitted optional input or output.
  virtual const TensorRef* input_or_null(size_t i) const = 0;
  virtual TensorRef* output_or_null(size_t i) = 0;
  // The step's scratch, planned in the arena (empty when the op's WorkspaceFn gives 0).
  virtual std::span<std::byte> workspace() = 0;
  virtual int threads() const = 0;
  // What the kernel's PrepareFn built; nullptr when it has none (or while preparing).
  virtual KernelState* state() const = 0;
  // Runs the node's subgraph held in `attribute` (If branches, Loop bodies) with `inputs` as its
  // formal inputs; its outputs are written into `outputs`, which have the node's output extents.
  virtual void run_subgraph(std::string_view attribute, std::span<const TensorRef> inputs,
                            std::span<TensorRef> outputs) = 0;
  // What an op whose output extents depend on values (NonZero's count, the boxes
  // NonMaxSuppression keeps) produced: at most, dim by dim, the extents output i was given,
  // which are its bound. output(i).dims then reads them; the runner binds the data-dependent
  // dims from them. Not calling it, or calling it with the extents given, says they are the
  // ones produced (OpSchema::reports_extents). Fails naming the node when they exceed the
  // bound.
  virtual void set_output_extents(size_t i, std::span<const int64_t> extents) = 0;

  bool has_input(size_t i) const { return input_or_null(i) != nullptr; }
  const TensorRef& input(size_t i) const;  // fails naming the node when absent
  TensorRef& output(size_t i);

  const onnx::AttributeProto* attribute(std::string_view name) const;
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::string_view attr_string(std::string_view name, std::string_view fallback) const;
  std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const;
  std::optional<std::vector<float>> attr_floats(std::string_view name) const;
  const onnx::TensorProto* attr_tensor(std::string_view name) const;

  // Throws footprint::Error naming the node: "node 'conv1' (Conv): <what>".
  [[noreturn]] void fail(const std::string& what) const;
};

// Runs one step. Outputs may alias input 0 when the op is in_place in the registry.
using KernelFn = void (*)(KernelContext& ctx);
// Builds the node's state once, when the model is prepared; may return nullptr.
using PrepareFn = std::unique_ptr<KernelState> (*)(const KernelContext& ctx);

}  // namespace footprint::graph
