// C++ exceptions as Python exceptions: footprint::UsageError -> footprint.UsageError,
// every other footprint::Error -> footprint.ModelError (both ValueErrors). The classes are
// defined in Python (footprint/errors.py), which parses path, offset and node from the one-line
// message. std::bad_alloc and other std::exceptions keep pybind11's MemoryError / RuntimeError.
#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "footprint/core/error.hpp"

namespace footprint::python {
namespace {

void raise_as(const char* cls, const char* message) {
  // The errors module is imported on first use: importing it while the extension initialises
  // would import the package recursively.
  const py::object type = py::module_::import("footprint.errors").attr(cls);
  PyErr_SetObject(type.ptr(), py::str(message).ptr());
}

// By value: pybind11 registers a void(*)(std::exception_ptr).
// NOLINTNEXTLINE(performance-unnecessary-value-param)
void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const UsageError& e) {
    raise_as("UsageError", e.what());
  } catch (const Error& e) {
    raise_as("ModelError", e.what());
  } catch (const nlohmann::json::exception& e) {
    raise_as("ModelError", e.what());
  }
}

}  // namespace

py::object to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

void bind_errors(py::module_& /*m*/) {
  py::register_exception_translator(translate);
}

}  // namespace footprint::python
