// footprint.GraphBuilder: the C++ builder, with value propagation. A propagated value belongs
// to the Var handles that hold it (and to numpy views of it): when Python drops the last one,
// the value is freed, as in C++.
#include "footprint/graph/builder.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "footprint/core/error.hpp"
#include "footprint/onnx/writer.hpp"
#include "footprint/runtime/op_kernels.hpp"

namespace footprint::python {
namespace {

using graph::Attr;
using graph::GraphBuilder;
using graph::Var;

// A Var and the builder it reads its type through (the builder must outlive its Vars).
struct PyVar {
  std::shared_ptr<GraphBuilder> builder;
  Var var;
};

// The array's elements as a host value (one copy: the builder's constants own their bytes).
graph::SharedValue host_value(const py::array& array, const std::string& what) {
  const py::array c = py::array::ensure(native_order(array), py::array::c_style);
  if (!c) throw py::type_error(what + ": not convertible to a contiguous array");
  auto v = graph::HostValue::make(dtype_of(c.dtype(), what),
                                  std::vector<int64_t>(c.shape(), c.shape() + c.ndim()));
  if (v->bytes() > 0) std::memcpy(v->data(), c.data(), v->bytes());
  return v;
}

// A read-only numpy view of a propagated value; the view shares the value (it stays alive
// while the array does) and copies nothing.
py::object value_array(const PyVar& v) {
  const graph::SharedValue& value = v.var.shared_value();
  if (!value) return py::none();
  auto* held = new graph::SharedValue(value);
  const py::capsule base(held, [](void* p) { delete static_cast<graph::SharedValue*>(p); });
  py::array out(numpy_dtype(value->dtype(), "value of " + in_quotes(v.var.name())), value->dims(),
                value->data(), base);
  py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return out;
}

std::vector<Dim> dims_of(const py::sequence& shape) {
  std::vector<Dim> dims;
  for (const py::handle d : shape) {
    if (py::isinstance<py::str>(d)) {
      dims.push_back(Dim::named(d.cast<std::string>()));
    } else {
      dims.push_back(Dim::known(d.cast<int64_t>()));
    }
  }
  return dims;
}

class PyBuilder;
const GraphBuilder* builder_of(const py::handle& value);

// A Python attribute value as an ONNX attribute: int, float, str, a list of ints or floats,
// a numpy array (a tensor), or a GraphBuilder (a subgraph: a Loop's or Scan's body).
Attr attr_of(const std::string& name, const py::handle& value) {
  if (const GraphBuilder* sub = builder_of(value)) return Attr::of(name, *sub);
  if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) {
    return Attr::of(name, value.cast<int64_t>());
  }
  if (py::isinstance<py::float_>(value)) return Attr::of(name, value.cast<float>());
  if (py::isinstance<py::str>(value)) return Attr::of(name, value.cast<std::string>());
  if (py::isinstance<py::array>(value)) {
    return Attr::of(name, host_value(py::reinterpret_borrow<py::array>(value), name));
  }
  if (py::isinstance<py::sequence>(value)) {
    const auto items = py::reinterpret_borrow<py::sequence>(value);
    bool all_ints = true;
    for (const py::handle item : items) all_ints = all_ints && py::isinstance<py::int_>(item);
    if (all_ints) return Attr::of(name, value.cast<std::vector<int64_t>>());
    return Attr::of(name, value.cast<std::vector<float>>());
  }
  throw py::type_error("attribute " + name +
                       ": expected int, float, str, a list, an array or a subgraph");
}

class PyBuilder {
 public:
  explicit PyBuilder(graph::BuilderOptions options)
      : builder_(std::make_shared<GraphBuilder>(runtime::op_registry(), std::move(options))) {}

  // A subgraph of `parent` (an If branch, a Loop or Scan body): the parent's builder owns it,
  // and this handle keeps the parent alive.
  static std::unique_ptr<PyBuilder> subgraph_of(const PyBuilder& parent) {
    GraphBuilder& sub = parent.builder_->subgraph();
    return std::unique_ptr<PyBuilder>(
        new PyBuilder(std::shared_ptr<GraphBuilder>(parent.builder_, &sub)));
  }

  std::vector<PyVar> if_else(const PyVar& cond, const PyBuilder& then_branch,
                             const PyBuilder& else_branch) {
    return wrap_all(builder_->if_else(cond.var, *then_branch.builder_, *else_branch.builder_));
  }

  std::vector<PyVar> loop(const std::optional<PyVar>& max_trip, const std::optional<PyVar>& cond,
                          const std::vector<PyVar>& carried, const PyBuilder& body) {
    std::vector<Var> vars;
    vars.reserve(carried.size());
    for (const PyVar& v : carried) vars.push_back(v.var);
    return wrap_all(builder_->loop(max_trip ? max_trip->var : Var(), cond ? cond->var : Var(), vars,
                                   *body.builder_));
  }

  const GraphBuilder& builder() const { return *builder_; }

  PyVar input(std::string name, const py::object& dtype, const py::sequence& shape) {
    const DType t = dtype_of(py::dtype::from_args(dtype), "input " + in_quotes(name));
    return wrap(builder_->input(std::move(name), t, dims_of(shape)));
  }

  PyVar constant(const py::array& array, std::string name) {
    return wrap(builder_->constant(host_value(array, "constant"), std::move(name)));
  }

  std::vector<PyVar> op(const std::string& op_type, const std::vector<std::optional<PyVar>>& in,
                        const py::dict& attrs, size_t outputs, const std::string& domain) {
    std::vector<Var> vars;
    vars.reserve(in.size());
    for (const auto& v : in) vars.push_back(v ? v->var : Var());
    std::vector<Attr> as;
    for (const auto& [key, value] : attrs) as.push_back(attr_of(py::str(key), value));
    std::vector<Var> out;
    {
      // Propagation runs the kernels here: without the GIL, other threads go on.
      const py::gil_scoped_release nogil;
      out = builder_->op(op_type, vars, as, outputs, domain);
    }
    return wrap_all(std::move(out));
  }

  void output(const PyVar& v, std::string name) { builder_->output(v.var, std::move(name)); }
  size_t node_count() const { return builder_->node_count(); }
  size_t value_count() const { return builder_->value_count(); }
  void write_onnx(const std::filesystem::path& path) const { builder_->write_onnx(path); }

  // The graph as a Model (serialised in memory, then loaded from its own bytes).
  std::shared_ptr<PyModel> to_model(const std::string& name) const {
    std::vector<std::byte> bytes = onnx::serialize_model(builder_->export_onnx().proto());
    return std::make_shared<PyModel>(
        nullptr, graph::load_model(onnx::ModelSource::adopt(std::move(bytes), name)));
  }

 private:
  explicit PyBuilder(std::shared_ptr<GraphBuilder> b) : builder_(std::move(b)) {}
  PyVar wrap(Var v) const { return {builder_, std::move(v)}; }
  std::vector<PyVar> wrap_all(std::vector<Var> vars) const {
    std::vector<PyVar> result;
    result.reserve(vars.size());
    for (Var& v : vars) result.push_back(wrap(std::move(v)));
    return result;
  }
  std::shared_ptr<GraphBuilder> builder_;
};

const GraphBuilder* builder_of(const py::handle& value) {
  if (!py::isinstance<PyBuilder>(value)) return nullptr;
  return &value.cast<const PyBuilder&>().builder();
}

void bind_var(py::module_& m) {
  py::class_<PyVar>(m, "Var", "A value of the graph being built, with its propagated value.")
      .def_property_readonly("name", [](const PyVar& v) { return v.var.name(); })
      .def_property_readonly("dtype",
                             [](const PyVar& v) { return std::string(dtype_name(v.var.dtype())); })
      .def_property_readonly("shape", [](const PyVar& v) { return v.var.shape().to_string(); })
      .def_property_readonly("value", &value_array,
                             "The value computed at build time (a read-only numpy view), or "
                             "None.")
      .def("__repr__", [](const PyVar& v) {
        return "<footprint.Var " + v.var.name() + " " + std::string(dtype_name(v.var.dtype())) +
               v.var.shape().to_string() + (v.var.value() ? " (value)" : "") + ">";
      });
}

}  // namespace

void bind_builder(py::module_& m) {
  bind_var(m);
  py::class_<PyBuilder>(m, "GraphBuilder", "Builds a graph op by op (footprint.GraphBuilder).")
      .def(py::init([](int64_t opset, uint64_t max_value_bytes, bool propagate, int threads,
                       std::string name) {
             graph::BuilderOptions o;
             o.opset = opset;
             o.max_value_bytes = max_value_bytes;
             o.propagate = propagate;
             o.threads = threads;
             o.graph_name = std::move(name);
             return std::make_unique<PyBuilder>(std::move(o));
           }),
           py::arg("opset") = 18, py::arg("max_value_bytes") = uint64_t{64} << 20,
           py::arg("propagate") = true, py::arg("threads") = 1, py::arg("name") = "main")
      .def(py::init([](const PyBuilder& parent) { return PyBuilder::subgraph_of(parent); }),
           py::arg("parent"), "A subgraph of `parent` (GraphBuilder.subgraph makes one).")
      .def("if_else", &PyBuilder::if_else, py::arg("cond"), py::arg("then_branch"),
           py::arg("else_branch"))
      .def("loop", &PyBuilder::loop, py::arg("max_trip"), py::arg("cond"), py::arg("carried"),
           py::arg("body"))
      .def("input", &PyBuilder::input, py::arg("name"), py::arg("dtype"), py::arg("shape"))
      .def("const", &PyBuilder::constant, py::arg("array"), py::arg("name") = "")
      .def("op", &PyBuilder::op, py::arg("op_type"), py::arg("inputs"),
           py::arg("attrs") = py::dict(), py::arg("outputs") = 1, py::arg("domain") = "")
      .def("output", &PyBuilder::output, py::arg("var"), py::arg("name") = "")
      .def_property_readonly("node_count", &PyBuilder::node_count)
      .def_property_readonly("value_count", &PyBuilder::value_count)
      .def("write_onnx", &PyBuilder::write_onnx, py::arg("path"))
      .def("to_model", &PyBuilder::to_model, py::arg("name") = "<builder>");
}

}  // namespace footprint::python
