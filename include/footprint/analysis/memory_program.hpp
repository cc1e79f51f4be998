#pragma once
// The program the memory timeline runs over: tensors with sizes and categories, and steps that
// read and write them. Models (through the graph and the op registry) and traces from any
// framework (JSON) both become one of these, so both follow the same semantics (DESIGN.md,
// "Memory semantics").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace footprint::analysis {

enum class Category : uint8_t { weights, inputs, activations, workspace, outputs };
std::string_view category_name(Category c);

// Who keeps the program's inputs alive: the caller for the whole run, or nobody once the
// program has used them (they were donated, e.g. in a list the callee clears).
enum class InputsPolicy : uint8_t { caller, donated };

struct ProgramTensor {
  std::string name;
  uint64_t bytes = 0;
  Category category = Category::activations;
  int view_of = -1;  // a view allocates nothing and keeps the tensor it views alive
  // An input whose buffer the caller keeps regardless of the policy (e.g. a gradient the engine
  // holds while the backward runs).
  bool held = false;
  // A weight that only preparing reads (the original a constant is computed from, such as a
  // convolution's weights before a BatchNormalization is folded into them): released once the
  // constants are computed, so not among the weights a run holds.
  bool prepare_only = false;
  // Set when `bytes` is an upper bound, not the size: the tensor's extents depend on values
  // known only when running. Names what bounds them ("'/rpn/NonZero' (NonZero)").
  std::string bound_by{};
  // Why the tensor is alive, as the framework that recorded it knows (a trace's "note": "saved
  // for backward of MulBackward0"); the timeline's own reason is added to it.
  std::string note = {};
  // An output the run fills from another tensor after its last step (a constant, an input, or an
  // output listed twice, returned as it is): its memory is the caller's from before the run.
  bool returned_copy = false;
};

struct ProgramStep {
  std::string name;
  std::string op;
  std::vector<int> inputs;
  std::vector<int> outputs;
  uint64_t workspace = 0;
  // May write output 0 into input 0's buffer when that buffer dies here (registry: in_place).
  bool in_place = false;
  // Tensors released after this step (traces with explicit frees only).
  std::vector<int> frees;
  // The part of the program the step belongs to (a trace's "phase": forward, backward,
  // optimizer); empty when the source has none.
  std::string phase = {};
};

struct MemoryProgram {
  std::vector<ProgramTensor> tensors;
  std::vector<ProgramStep> steps;
  InputsPolicy inputs = InputsPolicy::caller;
  // When true, tensors are released only by the steps' `frees`; otherwise after their last use.
  bool explicit_frees = false;
};

}  // namespace footprint::analysis
