#include "footprint/graph/elementwise_program.hpp"

#include <charconv>
#include <system_error>

namespace footprint::graph {
namespace {

struct Unary {
  std::string_view name;
  int parameters;  // alpha, then beta
  EpilogueOp op;
};

constexpr Unary kUnary[] = {
    {"Relu", 0, EpilogueOp::relu},
    {"LeakyRelu", 1, EpilogueOp::leaky_relu},
    {"Clip", 2, EpilogueOp::clip},
    {"Sigmoid", 0, EpilogueOp::sigmoid},
    {"Tanh", 0, EpilogueOp::tanh},
    {"Swish", 1, EpilogueOp::swish},
    {"HardSigmoid", 2, EpilogueOp::hard_sigmoid},
    {"HardSwish", 0, EpilogueOp::hard_swish},
    {"Gelu", 0, EpilogueOp::gelu_erf},
    {"GeluTanh", 0, EpilogueOp::gelu_tanh},
};

constexpr std::pair<ChainOp, std::string_view> kBinary[] = {
    {ChainOp::add, "Add"}, {ChainOp::sub, "Sub"}, {ChainOp::mul, "Mul"}, {ChainOp::div, "Div"}};

const Unary* unary_of(EpilogueOp op) {
  for (const Unary& u : kUnary) {
    if (u.op == op) return &u;
  }
  return nullptr;
}

// Reads the program left to right; each method consumes what it names, after any spaces.
class Reader {
 public:
  explicit Reader(std::string_view text) : rest_(text) {}

  bool done() {
    skip_spaces();
    return rest_.empty();
  }
  bool take(char c) {
    skip_spaces();
    if (rest_.empty() || rest_.front() != c) return false;
    rest_.remove_prefix(1);
    return true;
  }
  std::string_view name() {
    skip_spaces();
    size_t n = 0;
    while (n < rest_.size() &&
           ((rest_[n] >= 'A' && rest_[n] <= 'Z') || (rest_[n] >= 'a' && rest_[n] <= 'z'))) {
      ++n;
    }
    const std::string_view out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return out;
  }
  bool number(unsigned& out) {
    skip_spaces();
    const auto [end, ec] = std::from_chars(rest_.data(), rest_.data() + rest_.size(), out);
    if (ec != std::errc() || end == rest_.data()) return false;
    rest_.remove_prefix(static_cast<size_t>(end - rest_.data()));
    return true;
  }
  bool real(float& out) {
    skip_spaces();
    const auto [end, ec] = std::from_chars(rest_.data(), rest_.data() + rest_.size(), out);
    if (ec != std::errc() || end == rest_.data()) return false;
    rest_.remove_prefix(static_cast<size_t>(end - rest_.data()));
    return true;
  }

 private:
  void skip_spaces() {
    while (!rest_.empty() && rest_.front() == ' ') rest_.remove_prefix(1);
  }
  std::string_view rest_;
};

const char* parse_operand(Reader& r, size_t inputs, size_t step, ChainOperand& out) {
  const std::string_view kind = r.name();
  unsigned index = 0;
  if ((kind != "x" && kind != "s") || !r.number(index)) return "an operand is not x<i> or s<k>";
  out.step = kind == "s";
  if (out.step && index >= step) return "a step reads a step that is not before it";
  if (!out.step && index >= inputs) return "a step reads an input the node does not have";
  out.index = static_cast<uint8_t>(index);
  return nullptr;
}

const char* parse_step(Reader& r, size_t inputs, size_t index, ChainStep& out) {
  const std::string_view op = r.name();
  if (!r.take('(')) return "a step is not Op(operands)";
  for (const auto& [code, name] : kBinary) {
    if (op != name) continue;
    out.op = code;
    if (const char* e = parse_operand(r, inputs, index, out.operands[0])) return e;
    if (!r.take(',')) return "a binary step takes two operands";
    if (const char* e = parse_operand(r, inputs, index, out.operands[1])) return e;
    return r.take(')') ? nullptr : "a binary step takes two operands";
  }
  for (const Unary& u : kUnary) {
    if (op != u.name) continue;
    out.op = ChainOp::unary;
    out.unary = u.op;
    if (const char* e = parse_operand(r, inputs, index, out.operands[0])) return e;
    out.operands[1] = out.operands[0];
    float* parameters[] = {&out.alpha, &out.beta};
    for (int p = 0; p < u.parameters; ++p) {
      if (!r.take(',') || !r.real(*parameters[p])) return "a unary step lacks a parameter";
    }
    return r.take(')') ? nullptr : "a unary step has more operands than its op takes";
  }
  return "a step's op is not one a program runs";
}

void append_operand(std::string& s, const ChainOperand& o) {
  s += o.step ? 's' : 'x';
  s += std::to_string(o.index);
}

void append_real(std::string& s, float v) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  s.append(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace

const char* parse_chain(std::string_view text, size_t inputs, ChainProgram& out) {
  out.size = 0;
  Reader r(text);
  if (r.done()) return "the program has no step";
  do {
    if (out.size == kMaxChainSteps) return "the program has more steps than a node runs";
    if (const char* e = parse_step(r, inputs, out.size, out.steps[out.size])) return e;
    ++out.size;
  } while (r.take(';'));
  return r.done() ? nullptr : "the program does not end after its last step";
}

std::string format_chain(std::span<const ChainStep> steps) {
  std::string s;
  for (const ChainStep& step : steps) {
    if (!s.empty()) s += "; ";
    if (step.op == ChainOp::unary) {
      const Unary* u = unary_of(step.unary);
      s += u != nullptr ? u->name : "?";
      s += '(';
      append_operand(s, step.operands[0]);
      const float parameters[] = {step.alpha, step.beta};
      for (int p = 0; u != nullptr && p < u->parameters; ++p) {
        s += ", ";
        append_real(s, parameters[p]);
      }
    } else {
      s += kBinary[static_cast<size_t>(step.op)].second;
      s += '(';
      append_operand(s, step.operands[0]);
      s += ", ";
      append_operand(s, step.operands[1]);
    }
    s += ')';
  }
  return s;
}

std::string_view chain_unary_name(EpilogueOp op) {
  const Unary* u = unary_of(op);
  return u != nullptr ? u->name : std::string_view("?");
}

}  // namespace footprint::graph

namespace footprint::graph {

std::optional<EpilogueOp> chain_unary_op(std::string_view name) {
  for (const Unary& u : kUnary) {
    if (u.name == name) return u.op;
  }
  return std::nullopt;
}

}  // namespace footprint::graph
