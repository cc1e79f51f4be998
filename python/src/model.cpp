// footprint.load and Model: a path is mapped, a bytes-like object is borrowed in place.
#include "footprint/graph/model.hpp"

#include <pybind11/stl.h>

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "footprint/analysis/model_summary.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/topo_order.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/report/model_summary_report.hpp"

namespace footprint::python {

PyModel::PyModel(std::unique_ptr<Py_buffer> view, graph::Model&& model)
    : view_(std::move(view)), model_(std::make_unique<const graph::Model>(std::move(model))) {}

PyModel::~PyModel() {
  model_.reset();
  if (view_) {
    // Releasing the export touches the object's refcount: it needs the GIL, wherever the last
    // reference to the model is dropped (the C API: a destructor must not throw).
    const PyGILState_STATE gil = PyGILState_Ensure();
    PyBuffer_Release(view_.get());
    PyGILState_Release(gil);
  }
}

namespace {

// A C-contiguous byte view of `obj`, held until released; TypeError for an object without the
// buffer protocol, a non-contiguous one, or elements wider than a byte (a float array passed
// by mistake).
std::unique_ptr<Py_buffer> byte_view(const py::handle& obj) {
  auto view = std::make_unique<Py_buffer>();
  if (PyObject_GetBuffer(obj.ptr(), view.get(), PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
    const py::error_already_set why;  // takes Python's error (a ValueError or BufferError)
    throw py::type_error(std::string("footprint.load: expected contiguous bytes: ") + why.what());
  }
  if (view->itemsize != 1) {
    PyBuffer_Release(view.get());
    throw py::type_error("footprint.load: expected bytes (itemsize 1), got elements of " +
                         std::to_string(view->itemsize) + " bytes");
  }
  return view;
}

std::shared_ptr<PyModel> load_path(const std::string& path) {
  std::optional<graph::Model> model;
  {
    const py::gil_scoped_release nogil;
    model.emplace(graph::load_model(path));
  }
  return std::make_shared<PyModel>(nullptr, std::move(*model));
}

std::shared_ptr<PyModel> load_bytes(const py::handle& obj, const std::string& name,
                                    const std::string& base_dir) {
  std::unique_ptr<Py_buffer> view = byte_view(obj);
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(view->buf),
                                         static_cast<size_t>(view->len));
  std::optional<graph::Model> model;
  try {
    const py::gil_scoped_release nogil;
    model.emplace(graph::load_model(onnx::ModelSource::borrow(bytes, name, base_dir)));
  } catch (...) {
    PyBuffer_Release(view.get());
    throw;
  }
  return std::make_shared<PyModel>(std::move(view), std::move(*model));
}

std::shared_ptr<PyModel> load(const py::object& source, const std::optional<std::string>& name,
                              const std::optional<std::string>& base_dir) {
  const py::object os = py::module_::import("os");
  if (py::isinstance<py::str>(source) || py::isinstance(source, os.attr("PathLike"))) {
    return load_path(py::str(os.attr("fspath")(source)));
  }
  if (!PyObject_CheckBuffer(source.ptr())) {
    throw py::type_error(
        "footprint.load: expected a path, bytes, bytearray, memoryview or numpy uint8 array");
  }
  return load_bytes(source, name.value_or("<memory>"), base_dir.value_or(""));
}

// What `footprint info --json` prints, less its "load" object (that measures the CLI's own
// load, with the counting allocator this extension does not link).
py::object info(const PyModel& self) {
  nlohmann::json j;
  {
    const py::gil_scoped_release nogil;
    const graph::Graph g = self.model().graph(graph::OpRegistry::builtin());
    (void)graph::topo_order(g);  // a cycle or dangling input is reported here, as info does
    j = report::to_json(analysis::summarize(self.model(), g));
  }
  return to_python(j);
}

std::string repr(const PyModel& self) {
  const onnx::ModelSource& s = self.model().source();
  return "<footprint.Model " + s.name() + " (" + std::to_string(s.bytes().size()) + " bytes, " +
         (s.is_mapped() ? "mapped" : "borrowed") + ")>";
}

}  // namespace

void bind_model(py::module_& m) {
  py::class_<PyModel, std::shared_ptr<PyModel>>(m, "Model",
                                                "A loaded ONNX model; its weights are views of "
                                                "the file's mapping or of the caller's bytes.")
      .def("info", &info, "What `footprint info --json` prints (without its load figures).")
      .def_property_readonly("name", [](const PyModel& s) { return s.model().source().name(); })
      .def_property_readonly("nbytes",
                             [](const PyModel& s) { return s.model().source().bytes().size(); })
      .def_property_readonly("mapped",
                             [](const PyModel& s) { return s.model().source().is_mapped(); })
      .def_property_readonly("tree_bytes",
                             [](const PyModel& s) { return s.model().onnx().tree_bytes(); })
      .def("__repr__", &repr);
  m.def("load", &load, py::arg("source"), py::arg("name") = py::none(),
        py::arg("base_dir") = py::none(),
        "Loads a model from a path (mapped) or a bytes-like object (borrowed: the Model keeps a "
        "reference to it). `name` appears in errors; `base_dir` resolves external data of "
        "borrowed bytes (none allowed without it).");
}

}  // namespace footprint::python
