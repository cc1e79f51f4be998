#pragma once
// Type and shape inference: what the op registry's `infer` hooks see and produce.
//
// Shapes are symbolic (Dim expressions), so a model with a dynamic batch infers "N*64" rather
// than giving up. Small integer tensors that describe shapes (Shape, Gather on it, Concat of
// dims, Constant, ...) are propagated as KnownValues whose elements may be symbolic too; that is
// what lets Reshape(x, Concat(Shape(x)[0], -1)) produce [N, 2048].
//
//   InferResult r;           // the pass sizes r.outputs and r.values to the node's outputs
//   schema->infer(ctx, r);   // r.outputs[i]: dtype + shape; r.values[i]: a known value or empty
//
// A hook that cannot say something (an unranked input, a shape given by a runtime tensor) leaves
// that part unknown; it fails only on a model that is wrong (dims that cannot broadcast, a
// Reshape that changes the element count), naming the node.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/core/dtype.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/onnx/proto.hpp"

namespace footprint::graph {

class Graph;
struct Node;

struct TensorType {
  DType dtype = DType::undefined;
  Shape shape;
};

// The contents of a tensor known before running: integer elements as Dims (possibly symbolic),
// floating-point elements as doubles. Only small tensors are ever held (kMaxElements), so
// propagating them never materialises weights. An integer element may be an unknown Dim: the
// shape of a tensor with a dynamic extent is still known in its other elements.
struct KnownValue {
  static constexpr size_t kMaxElements = 4096;
  // Floating-point tensors matter to shapes only as a few scales or bounds (Resize, Range); a
  // bias of a thousand floats is a weight, not worth holding as doubles.
  static constexpr size_t kMaxRealElements = 64;

  DType dtype = DType::undefined;
  std::vector<int64_t> dims;  // the value's own (static) shape
  std::vector<Dim> ints;      // integer and bool dtypes
  std::vector<double> reals;  // floating-point dtypes

  size_t numel() const { return ints.empty() ? reals.size() : ints.size(); }
  bool is_integer() const { return !ints.empty() || reals.empty(); }
  // All integer elements known constants (no symbols).
  std::optional<std::vector<int64_t>> int_values() const;
  // Every element a number (reals, or integers without symbols): a compile-time constant.
  bool is_concrete() const;
  // Element i as a double (integers converted); nullopt for a symbolic integer.
  std::optional<double> real(size_t i) const;
  // "[2,3]{1,2,N,...}" for diagnostics.
  std::string to_string() const;
};

// The contents of an initializer or attribute tensor of an integer or bool dtype with at most
// `max_elements` elements, or of a floating-point dtype with at most `max_real_elements`; nullopt
// otherwise (strings, complex, 8-bit floats, too big).
std::optional<KnownValue> known_value_of(const onnx::TensorProto& t,
                                         size_t max_elements = KnownValue::kMaxElements,
                                         size_t max_real_elements = KnownValue::kMaxRealElements);
// The same of `dtype` elements of extents `dims` stored in `bytes` (a tensor handed to a run).
std::optional<KnownValue> known_value_of(DType dtype, std::span<const int64_t> dims,
                                         std::span<const std::byte> bytes,
                                         size_t max_elements = KnownValue::kMaxElements,
                                         size_t max_real_elements = KnownValue::kMaxRealElements);

// Whether `e` says a size or position depends on values known only when running (the phrase every
// such message of the graph layer and the analysis uses): with the inputs' values given to
// inference, it can be computed (runtime::Session, analysis::build_model_program).
bool depends_on_values(const std::exception& e);

// What inferring one of a node's subgraphs produced (If branches, a Loop or Scan body).
struct SubgraphResult {
  std::vector<TensorType> outputs;
  std::vector<std::optional<KnownValue>> values;  // same length as outputs
};

// Implemented by the shape inference pass: infers the node's subgraph held in `attribute`
// (then_branch, body, ...) whose formal inputs have `inputs` types (empty for If branches, which
// have none); the subgraph sees the enclosing graphs' values as already inferred.
class SubgraphInferrer {
 public:
  virtual ~SubgraphInferrer() = default;
  virtual SubgraphResult infer(std::string_view attribute,
                               const std::vector<TensorType>& inputs) const = 0;
};

struct InferContext {
  const Node& node;
  int64_t opset = 0;
  std::vector<const TensorType*> inputs;        // nullptr: omitted optional input
  std::vector<const KnownValue*> input_values;  // nullptr: not known before running
  const SubgraphInferrer* subgraphs = nullptr;  // set for ops that hold subgraphs
  int32_t node_id = -1;                         // the node's index, for messages

  size_t input_count() const { return inputs.size(); }
  size_t output_count() const;
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const TensorType& input(size_t i) const;  // fails when absent
  const KnownValue* value(size_t i) const {
    return i < input_values.size() ? input_values[i] : nullptr;
  }
  // The known integer elements of input i when all are constants; nullopt otherwise.
  std::optional<std::vector<int64_t>> input_ints(size_t i) const;

  const onnx::AttributeProto* attribute(std::string_view name) const;
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::string_view attr_string(std::string_view name, std::string_view fallback) const;
  std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const;
  std::optional<std::vector<float>> attr_floats(std::string_view name) const;
  const onnx::TensorProto* attr_tensor(std::string_view name) const;

  // Infers a subgraph of this node (see SubgraphInferrer); fails when the pass gave none.
  SubgraphResult infer_subgraph(std::string_view attribute,
                                const std::vector<TensorType>& formal_inputs) const;

  // Throws footprint::Error naming the node: "node 'conv1' (Conv): <what>".
  [[noreturn]] void fail(const std::string& what) const;
};

struct InferResult {
  std::vector<TensorType> outputs;
  std::vector<std::optional<KnownValue>> values;  // same length as outputs (or empty)
  // Set when the op's outputs are compile-time constants although not small enough to hold as
  // values (ConstantOfShape weights): analysis counts them as weights, not activations.
  bool constant = false;
  // Set when the outputs differ from run to run whatever the inputs (Dropout in training mode):
  // never constants.
  bool random = false;
};

// Registered per op in the OpSchema.
using InferFn = void (*)(const InferContext& ctx, InferResult& out);

// A tensor's concrete extents once every named dim is bound.
struct ConcreteTensor {
  DType dtype = DType::undefined;
  std::vector<int64_t> dims;
};

// Scratch bytes of one step (DESIGN.md "workspace"), from concrete input and output extents.
using WorkspaceFn = uint64_t (*)(const Node& node, const std::vector<ConcreteTensor>& inputs,
                                 const std::vector<ConcreteTensor>& outputs);

// Heap bytes the kernel's prepared state keeps beside the plan (weights packed into a layout of
// its own: KernelState::owned_bytes), from concrete extents and which inputs are constants (known
// when the model is prepared).
using PackedFn = uint64_t (*)(const Node& node, const std::vector<ConcreteTensor>& inputs,
                              const std::vector<ConcreteTensor>& outputs,
                              const std::vector<bool>& constant_inputs);

// Whether the node's subgraph `index` can run, from what inference knows of the node's inputs
// (an If whose condition is a known value runs one branch only).
using SubgraphRunsFn = bool (*)(const Graph& g, const Node& node, size_t index);

}  // namespace footprint::graph
