// The `footprint._footprint` extension; the Python package (python/footprint) wraps it.
#include "bindings.hpp"
#include "footprint/version.hpp"

PYBIND11_MODULE(_footprint, m) {
  m.doc() = "footprint's C++ library: models, analysis, plans, sessions (see docs/PYTHON.md)";
  m.attr("__version__") = footprint::kVersion;
  footprint::python::bind_errors(m);
  footprint::python::bind_model(m);
  footprint::python::bind_analysis(m);
  footprint::python::bind_plan(m);
  footprint::python::bind_session(m);
  footprint::python::bind_cli(m);
  footprint::python::bind_builder(m);
  footprint::python::bind_report(m);
  footprint::python::bind_bench(m);
}
