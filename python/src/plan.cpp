// footprint.plan: offsets for buffers with lifetimes, from any of the library's planners.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "bindings.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/core/error.hpp"
#include "footprint/plan/planner.hpp"

namespace footprint::python {
namespace {

// Buffers from an (n, 3) integer array of (lower, upper, size) rows: lifetimes half-open
// [lower, upper), as in MiniMalloc's CSV.
std::vector<plan::Buffer> buffers_of(
    const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& rows) {
  if (rows.ndim() != 2 || rows.shape(1) != 3) {
    throw UsageError("plan: buffers must be an (n, 3) array of (lower, upper, size), got " +
                     std::to_string(rows.ndim()) + " dimensions");
  }
  std::vector<plan::Buffer> out(static_cast<size_t>(rows.shape(0)));
  const auto r = rows.unchecked<2>();
  for (py::ssize_t i = 0; i < rows.shape(0); ++i) {
    plan::Buffer& b = out[static_cast<size_t>(i)];
    b.id = std::to_string(i);
    b.lower = r(i, 0);
    b.upper = r(i, 1);
    b.size = r(i, 2);
  }
  return out;
}

py::dict plan_of(const std::vector<plan::Buffer>& buffers, const std::string& algo,
                 const std::optional<double>& time_limit, const std::optional<int64_t>& capacity,
                 uint64_t seed) {
  plan::PlanOptions options;
  options.time_limit_s = time_limit;
  options.capacity_bytes = capacity;
  options.seed = seed;
  plan::Plan p;
  {
    const py::gil_scoped_release nogil;
    p = plan::plan_buffers(buffers, algo, options);
  }
  py::dict out;
  out["offsets"] =
      py::array_t<int64_t>(static_cast<py::ssize_t>(p.offsets.size()), p.offsets.data());
  out["arena_bytes"] = p.arena_bytes;
  out["lower_bound_bytes"] = p.lower_bound_bytes;
  out["optimal"] = p.optimal;
  out["algorithm"] = p.algorithm;
  out["solve_ms"] = p.solve_ms;
  out["search_nodes"] = p.search_nodes;
  out["buffers"] = buffers.size();
  return out;
}

}  // namespace

void bind_plan(py::module_& m) {
  m.def("_plan_rows",
        [](const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& rows,
           const std::string& algo, const std::optional<double>& time_limit,
           const std::optional<int64_t>& capacity,
           uint64_t seed) { return plan_of(buffers_of(rows), algo, time_limit, capacity, seed); });
  // A model's arena: its activation and workspace buffers, as `footprint plan MODEL` plans them.
  m.def("_plan_analysis",
        [](const PyAnalysis& a, const std::string& algo, const std::optional<double>& time_limit,
           const std::optional<int64_t>& capacity, uint64_t seed) {
          return plan_of(analysis::arena_buffers(a.timeline(), a.program()), algo, time_limit,
                         capacity, seed);
        });
  std::vector<std::string> names;
  for (const std::string_view n : plan::planner_names()) names.emplace_back(n);
  m.attr("planners") = names;
}

}  // namespace footprint::python
