#include "footprint/graph/op_registry.hpp"

#include <algorithm>

namespace footprint::graph {
namespace {

constexpr int V = OpSchema::kVariadic;

OpSchema op(std::string_view name, int min_in, int max_in, int min_out = 1, int max_out = 1) {
  OpSchema s;
  s.op_type = name;
  s.min_inputs = min_in;
  s.max_inputs = max_in;
  s.min_outputs = min_out;
  s.max_outputs = max_out;
  return s;
}

OpSchema view(std::string_view name, int min_in, int max_in) {
  OpSchema s = op(name, min_in, max_in);
  s.output_view_of = 0;
  return s;
}

OpSchema elementwise(std::string_view name, int inputs) {
  OpSchema s = op(name, inputs, inputs);
  s.in_place = true;
  return s;
}

void add_default_domain(OpRegistry& r) {
  for (std::string_view name :
       {"Abs",         "Acos",      "Acosh",     "Asin", "Asinh",   "Atan", "Atanh",
        "Ceil",        "Cos",       "Cosh",      "Elu",  "Erf",     "Exp",  "Floor",
        "HardSigmoid", "HardSwish", "LeakyRelu", "Log",  "Mish",    "Neg",  "Not",
        "Reciprocal",  "Relu",      "Round",     "Selu", "Sigmoid", "Sign", "Sin",
        "Sinh",        "Softplus",  "Softsign",  "Sqrt", "Tan",     "Tanh", "ThresholdedRelu",
        "Gelu",        "Celu"}) {
    r.add(elementwise(name, 1));
  }
  for (std::string_view name :
       {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less",
        "GreaterOrEqual", "LessOrEqual", "Mod", "BitShift", "PRelu"}) {
    r.add(elementwise(name, 2));
  }
  for (std::string_view name : {"Sum", "Max", "Min", "Mean"}) r.add(op(name, 1, V));
  r.add(op("Clip", 1, 3));
  r.add(op("Where", 3, 3));
  r.add(op("Cast", 1, 1));
  r.add(op("CastLike", 2, 2));

  r.add(view("Reshape", 1, 2));
  r.add(view("Flatten", 1, 1));
  r.add(view("Squeeze", 1, 2));
  r.add(view("Unsqueeze", 1, 2));
  r.add(view("Identity", 1, 1));
  OpSchema dropout = view("Dropout", 1, 3);
  dropout.max_outputs = 2;
  r.add(dropout);

  r.add(op("Conv", 2, 3));
  r.add(op("ConvTranspose", 2, 3));
  r.add(op("ConvInteger", 2, 4));
  r.add(op("QLinearConv", 8, 9));
  r.add(op("Gemm", 2, 3));
  r.add(op("MatMul", 2, 2));
  r.add(op("MatMulInteger", 2, 4));
  r.add(op("Einsum", 1, V));
  r.add(op("BatchNormalization", 5, 5, 1, 3));
  r.add(op("InstanceNormalization", 3, 3));
  r.add(op("LayerNormalization", 2, 3, 1, 3));
  r.add(op("GroupNormalization", 3, 3));
  r.add(op("LRN", 1, 1));
  r.add(op("LpNormalization", 1, 1));
  r.add(op("MaxPool", 1, 1, 1, 2));
  r.add(op("AveragePool", 1, 1));
  r.add(op("LpPool", 1, 1));
  r.add(op("GlobalAveragePool", 1, 1));
  r.add(op("GlobalMaxPool", 1, 1));
  r.add(op("GlobalLpPool", 1, 1));
  r.add(op("Softmax", 1, 1));
  r.add(op("LogSoftmax", 1, 1));
  r.add(op("Hardmax", 1, 1));
  r.add(op("Resize", 1, 4));
  r.add(op("Upsample", 1, 2));
  r.add(op("Concat", 1, V));
  r.add(op("Split", 1, 2, 1, V));
  r.add(op("Transpose", 1, 1));
  r.add(op("Slice", 1, 5));
  r.add(op("Gather", 2, 2));
  r.add(op("GatherElements", 2, 2));
  r.add(op("GatherND", 2, 2));
  r.add(op("ScatterND", 3, 3));
  r.add(op("ScatterElements", 3, 3));
  r.add(op("Pad", 1, 4));
  r.add(op("Tile", 2, 2));
  r.add(op("Expand", 2, 2));
  r.add(op("Shape", 1, 1));
  r.add(op("Size", 1, 1));
  r.add(op("Constant", 0, 0));
  r.add(op("ConstantOfShape", 1, 1));
  r.add(op("Range", 3, 3));
  r.add(op("OneHot", 3, 3));
  r.add(op("NonZero", 1, 1));
  r.add(op("TopK", 2, 2, 2, 2));
  r.add(op("ArgMax", 1, 1));
  r.add(op("ArgMin", 1, 1));
  for (std::string_view name :
       {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    r.add(op(name, 1, 2));
  }
  r.add(op("CumSum", 2, 2));
  r.add(op("DepthToSpace", 1, 1));
  r.add(op("SpaceToDepth", 1, 1));
  r.add(op("QuantizeLinear", 2, 3));
  r.add(op("DequantizeLinear", 2, 3));
  r.add(op("LSTM", 3, 8, 0, 3));
  r.add(op("GRU", 3, 6, 0, 2));
  r.add(op("RNN", 3, 6, 0, 2));

  OpSchema if_op = op("If", 1, 1, 1, V);
  if_op.has_subgraphs = true;
  r.add(if_op);
  OpSchema loop = op("Loop", 2, V, 1, V);
  loop.has_subgraphs = true;
  r.add(loop);
  OpSchema scan = op("Scan", 1, V, 1, V);
  scan.has_subgraphs = true;
  r.add(scan);
}

}  // namespace

const OpRegistry& OpRegistry::builtin() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    add_default_domain(r);
    return r;
  }();
  return registry;
}

const OpSchema* OpRegistry::find(std::string_view domain, std::string_view op_type) const {
  if (domain == "ai.onnx") domain = "";
  auto it = std::find_if(schemas_.begin(), schemas_.end(), [&](const OpSchema& s) {
    return s.op_type == op_type && s.domain == domain;
  });
  return it == schemas_.end() ? nullptr : &*it;
}

void OpRegistry::add(const OpSchema& schema) {
  schemas_.push_back(schema);
}

}  // namespace footprint::graph
