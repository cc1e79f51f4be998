#pragma once
// Hand-built graphs for the shape inference tests: ONNX wire bytes assembled field by field
// (onnx/wire_builder.hpp), loaded, built into a Graph and inferred.
//
//   Wire g;
//   g.msg(11, tensor_info("x", DType::float32, {"N", 3, "H", "W"}));
//   g.msg(1, node("Relu", {"x"}, {"y"}));
//   g.msg(12, output("y"));
//   auto r = infer(g);
//   EXPECT_EQ(r->type_of("y"), "float[N,3,H,W]");
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/core/dtype.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/bind_inputs.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/shape_inference.hpp"
#include "footprint/onnx/model.hpp"
#include "onnx/wire_builder.hpp"

namespace footprint::testing {

// A dim of a declared type: a number or a symbol, as in {"N", 3, "H", "W"}.
struct DimSpec {
  DimSpec(int v) : value(v) {}          // NOLINT: implicit on purpose, for brace lists
  DimSpec(const char* p) : param(p) {}  // NOLINT
  int64_t value = -1;
  std::string param;
};

// ValueInfoProto of a tensor with a shape.
inline Wire tensor_info(std::string_view name, DType dtype, const std::vector<DimSpec>& dims) {
  Wire shape;
  for (const DimSpec& d : dims) {
    shape.msg(1, d.param.empty() ? Wire().int_field(1, d.value) : Wire().str(2, d.param));
  }
  Wire tensor_type;
  tensor_type.int_field(1, static_cast<int64_t>(dtype)).msg(2, shape);
  return Wire().str(1, name).msg(2, Wire().msg(1, tensor_type));
}

// ValueInfoProto with a name only (a graph output left to inference).
inline Wire output(std::string_view name) {
  return Wire().str(1, name);
}

// ---- AttributeProto (field 5 of NodeProto)

inline Wire attr(std::string_view name, int64_t v) {
  return Wire().str(1, name).int_field(3, v).int_field(20, 2);
}
inline Wire attr(std::string_view name, const std::vector<int64_t>& v) {
  Wire a;
  a.str(1, name);
  for (int64_t x : v) a.int_field(8, x);
  return a.int_field(20, 7);
}
inline Wire attr(std::string_view name, std::string_view s) {
  return Wire().str(1, name).str(4, s).int_field(20, 3);
}
inline uint32_t float_bits(float f) {
  uint32_t b = 0;
  std::memcpy(&b, &f, 4);
  return b;
}
inline Wire attr_float(std::string_view name, float f) {
  return Wire().str(1, name).fixed32(2, float_bits(f)).int_field(20, 1);
}
inline Wire attr_floats(std::string_view name, const std::vector<float>& v) {
  Wire a;
  a.str(1, name);
  for (float f : v) a.fixed32(7, float_bits(f));
  return a.int_field(20, 6);
}
inline Wire attr_tensor(std::string_view name, const Wire& tensor) {
  return Wire().str(1, name).msg(5, tensor).int_field(20, 4);
}
inline Wire attr_graph(std::string_view name, const Wire& graph) {
  return Wire().str(1, name).msg(6, graph).int_field(20, 5);
}

// ---- TensorProto with raw_data

template <class T>
Wire raw_tensor(std::string_view name, DType dtype, const std::vector<int64_t>& dims,
                const std::vector<T>& values) {
  Wire t;
  for (int64_t d : dims) t.int_field(1, d);
  t.int_field(2, static_cast<int64_t>(dtype));
  t.str(8, name);
  t.bytes_field(9, std::as_bytes(std::span<const T>(values)));
  return t;
}
inline Wire int64_tensor(std::string_view name, const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& values) {
  return raw_tensor(name, DType::int64, dims, values);
}

// A node with attributes.
inline Wire node_with(std::string_view op, std::vector<std::string_view> inputs,
                      std::vector<std::string_view> outputs, const std::vector<Wire>& attrs,
                      std::string_view name = {}) {
  Wire n = node(op, std::move(inputs), std::move(outputs), name);
  for (const Wire& a : attrs) n.msg(5, a);
  return n;
}

struct Inferred {
  std::vector<std::byte> bytes;
  onnx::Model model;
  graph::Graph graph;
  graph::ShapeInferenceReport report;

  const graph::Value& value(std::string_view name) const {
    const auto id = graph.find(name);
    if (!id) throw std::runtime_error("no value " + std::string(name));
    return graph.value(*id);
  }
  // "float[N,3]"; "?" for an unknown dtype.
  std::string type_of(std::string_view name) const {
    const graph::Value& v = value(name);
    const std::string_view dtype = v.dtype == DType::undefined ? "?" : dtype_name(v.dtype);
    return std::string(dtype) + v.shape.to_string();
  }
  std::string shape_of(std::string_view name) const { return value(name).shape.to_string(); }
  // The known value's elements, "1,N,3"; "" when not known.
  std::string known_of(std::string_view name) const {
    const graph::Value& v = value(name);
    if (!v.known) return "";
    std::string out;
    for (size_t i = 0; i < v.known->numel(); ++i) {
      if (i != 0) out += ',';
      if (v.known->is_integer()) {
        out += v.known->ints[i].to_string();
      } else {
        std::string r = std::to_string(v.known->reals[i]);
        r.erase(r.find_last_not_of('0') + 1);
        if (r.back() == '.') r.pop_back();
        out += r;
      }
    }
    return out;
  }
};

// The bytes of ModelProto{ir_version 10, opset_import {"" opset}, graph}: a model a test loads
// (graph::load_model(onnx::ModelSource::adopt(model_bytes(g)))) and runs.
inline std::vector<std::byte> model_bytes(const Wire& graph, int64_t opset = 18) {
  Wire m;
  m.int_field(1, 10).msg(8, Wire().str(1, "").int_field(2, opset)).msg(7, graph);
  return m.bytes();
}

// ModelProto{ir_version 8, opset_import {"" opset}, graph}, loaded and inferred; with `bind`, the
// inputs' extents are bound first (graph::bind_input_extents), as analysis and the runtime do.
// The kernel tests pass runtime::op_registry(), whose rows the node runner runs.
inline std::unique_ptr<Inferred> infer(
    const Wire& graph, int64_t opset = 18, const DimBindings* bind = nullptr,
    const graph::OpRegistry& registry = graph::OpRegistry::builtin()) {
  Wire m;
  m.int_field(1, 8).msg(7, graph).msg(8, Wire().int_field(2, opset));
  auto bytes = m.bytes();
  auto model = onnx::load(onnx::ModelSource::borrow(bytes, "test.onnx"));
  auto r = std::unique_ptr<Inferred>(new Inferred{std::move(bytes), std::move(model), {}, {}});
  r->graph = graph::Graph::from_onnx(r->model, registry);
  if (bind != nullptr) {
    std::vector<std::string> defaulted;
    graph::bind_input_extents(r->graph, *bind, defaulted);
  }
  r->report = graph::infer_shapes(r->graph);
  return r;
}

// The message of the error inferring `graph` throws; "" when it does not.
inline std::string infer_error(const Wire& graph, int64_t opset = 18) {
  try {
    infer(graph, opset);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A graph of one node: inputs declared with `inputs` types, outputs left to inference.
struct OneNode {
  Wire graph;
  OneNode& input(std::string_view name, DType dtype, const std::vector<DimSpec>& dims) {
    graph.msg(11, tensor_info(name, dtype, dims));
    return *this;
  }
  OneNode& initializer(const Wire& tensor) {
    graph.msg(5, tensor);
    return *this;
  }
  OneNode& node(const Wire& n) {
    graph.msg(1, n);
    return *this;
  }
  OneNode& output(std::string_view name) {
    graph.msg(12, testing::output(name));
    return *this;
  }
};

}  // namespace footprint::testing
