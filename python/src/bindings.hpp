#pragma once
// What the binding files of the `footprint._footprint` extension share. The extension is thin:
// it converts Python objects to the library's types and back, releases the GIL while the
// library works, and every figure it returns is computed by the C++ layers.
#include <pybind11/pybind11.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "footprint/graph/model.hpp"

namespace footprint::python {

namespace py = pybind11;

// A loaded model and what keeps its bytes valid: for a borrowed bytes-like object, a held
// buffer export (Py_buffer keeps a reference to the object, and a bytearray cannot be resized
// while it is exported); for a path, the model's own mapping.
class PyModel {
 public:
  PyModel(std::unique_ptr<Py_buffer> view, graph::Model&& model);
  PyModel(const PyModel&) = delete;
  PyModel& operator=(const PyModel&) = delete;
  ~PyModel();

  const graph::Model& model() const { return *model_; }
  // The model as a shared pointer that keeps this object (and so the bytes) alive.
  static std::shared_ptr<const graph::Model> share(const std::shared_ptr<PyModel>& self) {
    return {self, self->model_.get()};
  }

 private:
  std::unique_ptr<Py_buffer> view_;  // declared first: released after the model
  std::unique_ptr<const graph::Model> model_;
};

// The library's JSON as Python objects (through the json module: the same text the CLI
// prints, parsed by Python).
py::object to_python(const nlohmann::json& j);

void bind_errors(py::module_& m);
void bind_model(py::module_& m);
void bind_analysis(py::module_& m);
void bind_plan(py::module_& m);
void bind_session(py::module_& m);
void bind_cli(py::module_& m);
void bind_builder(py::module_& m);
void bind_report(py::module_& m);
void bind_bench(py::module_& m);

}  // namespace footprint::python
