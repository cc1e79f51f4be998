// Runs of elementwise ops as one footprint::Elementwise node (graph/elementwise_program.hpp): a
// residual Add and the Relu after it, a layer scale's Mul and the Add after it, a detection
// head's box arithmetic. Each op of the run read a tensor of the output's shape and wrote one;
// the node reads each input once and writes the output once, and the tensors between are never
// made. It runs after the epilogues are folded (graph::fuse), so an activation that can ride on
// a convolution or a product does.
#include <algorithm>
#include <optional>
#include <utility>

#include "footprint/graph/elementwise_program.hpp"
#include "footprint/graph/op_registry.hpp"
#include "fuse_patterns.hpp"

namespace footprint::graph {
namespace {

// The step node `n` runs, its operands left to the caller; nullopt when no step runs it.
std::optional<ChainStep> step_of(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1 || !n.subgraphs.empty() || !n.epilogues.empty() || n.inputs.empty() ||
      !is_real(g, n.outputs[0]) || !g.value(n.outputs[0]).shape.ranked) {
    return std::nullopt;
  }
  ChainStep s;
  if (n.domain.empty() && n.inputs.size() == 2) {
    constexpr std::pair<std::string_view, ChainOp> kBinary[] = {
        {"Add", ChainOp::add}, {"Sub", ChainOp::sub}, {"Mul", ChainOp::mul}, {"Div", ChainOp::div}};
    for (const auto& [name, op] : kBinary) {
      if (n.op_type != name) continue;
      // Before opset 7 a binary op broadcast only where its attributes said so.
      if (g.opset(n.domain) < 7 || !is_real(g, n.inputs[0]) || !is_real(g, n.inputs[1])) {
        return std::nullopt;
      }
      s.op = op;
      return s;
    }
    return std::nullopt;
  }
  if (n.schema == nullptr || n.schema->as_epilogue == nullptr || !is_real(g, n.inputs[0])) {
    return std::nullopt;
  }
  const std::optional<Epilogue> e = n.schema->as_epilogue(g, n);
  if (!e) return std::nullopt;
  s.op = ChainOp::unary;
  s.unary = e->op;
  s.alpha = e->alpha;
  s.beta = e->beta;
  return s;
}

// The operands a step reads: a unary step's input 0, a binary step's two.
size_t operand_count(const ChainStep& s) {
  return s.op == ChainOp::unary ? 1 : 2;
}

// Whether node `p`'s output becomes a step inside node `c`'s run: c alone reads it, nothing
// outside the graph's computation sees it, and it has c's output's shape (so every step of a
// run computes over the same index space).
bool joins(const Graph& g, NodeId p, NodeId c) {
  if (p < 0 || !step_of(g, g.node(p))) return false;
  const ValueId out = g.node(p).outputs[0];
  const Value& v = g.value(out);
  return sole_reader(g, out) == c && !v.constant && !v.known &&
         v.shape == g.value(g.node(c).outputs[0]).shape;
}

class ChainBuilder {
 public:
  ChainBuilder(const Graph& g, size_t max_steps) : g_(g), max_steps_(max_steps) {}

  // The nodes of the run ending at `id`, at most max_steps, nearest first.
  void collect(NodeId id) {
    members_.push_back(id);
    const Node& n = g_.node(id);
    const size_t operands = operand_count(*step_of(g_, n));
    for (size_t i = 0; i < operands; ++i) {
      const NodeId p = g_.value(n.inputs[i]).producer;
      if (members_.size() < max_steps_ && !is_member(p) && joins(g_, p, id)) collect(p);
    }
  }

  // Emits node `id`'s step after those of the members it reads; false when the run reads more
  // inputs than a node takes.
  bool emit(NodeId id) {
    const Node& n = g_.node(id);
    ChainStep s = *step_of(g_, n);
    for (size_t i = 0; i < operand_count(s); ++i) {
      const ValueId v = n.inputs[i];
      const NodeId p = g_.value(v).producer;
      if (is_member(p)) {
        if (!emitted(p) && !emit(p)) return false;
        s.operands[i] = {true, static_cast<uint8_t>(step_index(p))};
        continue;
      }
      auto at = std::find(inputs_.begin(), inputs_.end(), v);
      if (at == inputs_.end()) {
        if (inputs_.size() == kMaxChainInputs) return false;
        at = inputs_.insert(inputs_.end(), v);
      }
      s.operands[i] = {false, static_cast<uint8_t>(at - inputs_.begin())};
    }
    if (s.op == ChainOp::unary) s.operands[1] = s.operands[0];
    program_.steps[program_.size++] = s;
    order_.push_back(id);
    return true;
  }

  // Input 0 of the node is one of the output's shape where there is one: the planner may then
  // run the node in that input's buffer (in place), as the ops it replaces could.
  void full_shape_input_first(ValueId out) {
    const auto full = std::find_if(inputs_.begin(), inputs_.end(), [&](ValueId v) {
      return g_.value(v).shape == g_.value(out).shape;
    });
    if (full == inputs_.begin() || full == inputs_.end()) return;
    const auto k = static_cast<uint8_t>(full - inputs_.begin());
    std::swap(inputs_[0], inputs_[k]);
    for (size_t i = 0; i < program_.size; ++i) {
      for (ChainOperand& o : program_.steps[i].operands) {
        if (o.step) continue;
        if (o.index == 0) {
          o.index = k;
        } else if (o.index == k) {
          o.index = 0;
        }
      }
    }
  }

  const std::vector<NodeId>& members() const { return members_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const ChainProgram& program() const { return program_; }

 private:
  bool is_member(NodeId id) const {
    return id >= 0 && std::find(members_.begin(), members_.end(), id) != members_.end();
  }
  bool emitted(NodeId id) const {
    return std::find(order_.begin(), order_.end(), id) != order_.end();
  }
  size_t step_index(NodeId id) const {
    return static_cast<size_t>(std::find(order_.begin(), order_.end(), id) - order_.begin());
  }

  const Graph& g_;
  size_t max_steps_;
  std::vector<NodeId> members_;
  std::vector<NodeId> order_;  // members in the order their steps run
  std::vector<ValueId> inputs_;
  ChainProgram program_;
};

Rewrite rewrite_of(ChainBuilder& b, ValueId out) {
  b.full_shape_input_first(out);
  Rewrite r;
  r.nodes = b.members();
  r.domain = "footprint";
  r.op = "Elementwise";
  r.inputs = b.inputs();
  r.output = out;
  r.program = format_chain(b.program().view());
  return r;
}

}  // namespace

std::optional<Rewrite> elementwise_chain(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  // A value inference knows (a float computed from extents) stays an op whose inference
  // computes it: a Resize's scales may be read from it.
  const Value& out = g.value(n.outputs[0]);
  if (!step_of(g, n) || out.constant || out.known) return std::nullopt;
  // Not the run's end when the one node reading the output takes it in (a step itself: a Cast
  // or a Softmax of the same shape reading it ends the run here).
  const std::vector<NodeId>& readers = g.value(n.outputs[0]).consumers;
  if (!readers.empty() && step_of(g, g.node(readers.front())) && joins(g, id, readers.front())) {
    return std::nullopt;
  }
  // A run reading more inputs than a node takes (a sum of many tensors) is cut shorter until it
  // reads few enough.
  for (size_t max_steps = kMaxChainSteps; max_steps >= 2; --max_steps) {
    ChainBuilder b(g, max_steps);
    b.collect(id);
    if (b.members().size() < 2) return std::nullopt;
    if (b.emit(id)) return rewrite_of(b, n.outputs[0]);
  }
  return std::nullopt;
}

}  // namespace footprint::graph
