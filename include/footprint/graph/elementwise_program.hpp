#pragma once
// The program of a footprint::Elementwise node (graph::fuse): a run of elementwise ops an
// exporter wrote one node each (an Add then a Relu, a Mul by a layer scale then the residual
// Add), computed in one pass over the output. Every step's result has the output's shape, so the
// node computes each output element from its inputs' elements at that index once they are
// broadcast, as each op did; the tensors between the steps are never made.
//
// The program is the node's string attribute `program`, one step per `;`, each an op over
// operands: `x<i>` is the node's input i, `s<k>` the result of step k (an earlier one); the last
// step's result is the output. A unary step is an Epilogue op (the registry's as_epilogue decodes
// the node it stands for) with its parameters after the operand:
//
//   Add(x0, x1); Relu(s0)
//   Mul(x0, x1); Add(x2, s0)
//   Sub(x0, x1); Clip(s0, 0, 6); Div(s1, x2)
//
// Parsing allocates nothing (a kernel parses it on every run).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "footprint/graph/epilogue.hpp"

namespace footprint::graph {

enum class ChainOp : uint8_t { add, sub, mul, div, unary };

// An operand: input `index` of the node, or the result of step `index`.
struct ChainOperand {
  bool step = false;
  uint8_t index = 0;
};

struct ChainStep {
  ChainOp op = ChainOp::add;
  std::array<ChainOperand, 2> operands{};  // a unary step reads operands[0]
  EpilogueOp unary = EpilogueOp::relu;     // op == unary: which, with its parameters
  float alpha = 0;
  float beta = 0;
};

inline constexpr size_t kMaxChainSteps = 16;
inline constexpr size_t kMaxChainInputs = 8;

struct ChainProgram {
  std::array<ChainStep, kMaxChainSteps> steps{};
  size_t size = 0;

  std::span<const ChainStep> view() const { return {steps.data(), size}; }
};

// Parses `text` for a node with `inputs` inputs into `out`. Returns nullptr when it is a
// program every step of which reads inputs below `inputs` and earlier steps, else what is wrong
// (a literal, for a message naming the node).
const char* parse_chain(std::string_view text, size_t inputs, ChainProgram& out);
// The text parse_chain reads; floats are written so that they read back exactly.
std::string format_chain(std::span<const ChainStep> steps);
// The unary op's name in a program ("Relu", "LeakyRelu", ...): a literal, which outlives any
// graph (an attribute may hold it), and the op of such a name.
std::string_view chain_unary_name(EpilogueOp op);
std::optional<EpilogueOp> chain_unary_op(std::string_view name);

}  // namespace footprint::graph
