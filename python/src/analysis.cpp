// footprint.analyze: a model's or a trace's timeline, lower bound, peak and what is alive at it.
#include "analysis.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <map>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "footprint/analysis/dim_fit.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/input_files.hpp"
#include "footprint/report/fit_report.hpp"
#include "footprint/runtime/op_kernels.hpp"

namespace footprint::python {

PyAnalysis::PyAnalysis(analysis::ModelProgram&& program, std::string name)
    : name_(std::move(name)), model_(std::move(program)) {}

PyAnalysis::PyAnalysis(analysis::Trace&& trace, std::string name)
    : name_(std::move(name)), trace_(std::move(trace)) {
  trace_timeline_ = analysis::simulate(trace_->program);
}

const analysis::Timeline& PyAnalysis::timeline() const {
  return model_ ? model_->timeline : trace_timeline_;
}

const analysis::MemoryProgram& PyAnalysis::program() const {
  return model_ ? model_->program.program : trace_->program;
}

report::AnalysisReport PyAnalysis::report() const {
  report::AnalysisReport r;
  if (model_) {
    r = report::analysis_report(*model_, name_);
  } else {
    // As `footprint analyze TRACE.json` reports a trace.
    r.model = name_;
    r.order = "trace";
    r.inputs_policy =
        trace_->program.inputs == analysis::InputsPolicy::donated ? "donated" : "caller";
    r.timeline = &trace_timeline_;
  }
  r.sweep = sweep_;
  return r;
}

analysis::InputsPolicy policy(const std::string& s) {
  if (s == "caller") return analysis::InputsPolicy::caller;
  if (s == "donated") return analysis::InputsPolicy::donated;
  throw UsageError("inputs must be caller or donated, got " + in_quotes(s));
}

analysis::ModelProgram model_program(const std::shared_ptr<PyModel>& model, const DimBindings& dims,
                                     const std::string& inputs, const std::string& order,
                                     const graph::InputShapes& shapes, bool fuse,
                                     bool carry_float32, const graph::InputValues& values) {
  analysis::ModelProgramOptions options;
  options.values = values;
  options.fuse = fuse;
  options.carry_float32 = carry_float32;
  options.dims = dims;
  options.shapes = shapes;
  options.inputs = policy(inputs);
  options.order = order;
  options.subgraph_arena = analysis::subgraph_arena("auto");  // as Session runs a branch
  runtime::set_intra_op_threads(1);
  return analysis::build_model_program(PyModel::share(model), runtime::op_registry(), options);
}

graph::InputValues input_values(const std::shared_ptr<PyModel>& model,
                                const std::optional<std::string>& dir) {
  graph::InputValues values;
  if (dir) {
    const auto files = graph::numbered_tensor_files(*dir, "input");
    if (files.empty()) throw Error(*dir + ": no input_0.pb");
    graph::input_shapes_from_files(model->model(), files, &values);
  }
  return values;
}

namespace {

using Columns = std::map<std::string, py::array_t<uint64_t>>;

// The per-step timeline as one numpy column per field (a dict, ready for pandas.DataFrame).
py::dict timeline_columns(const PyAnalysis& a) {
  const std::vector<analysis::StepMemory>& steps = a.timeline().steps;
  const auto n = static_cast<py::ssize_t>(steps.size());
  Columns cols;
  for (const char* name : {"alloc_bytes", "free_bytes", "workspace_bytes", "live_bytes",
                           "live_arena_bytes", "total_bytes"}) {
    cols.emplace(name, py::array_t<uint64_t>(n));
  }
  for (py::ssize_t i = 0; i < n; ++i) {
    const analysis::StepMemory& s = steps[static_cast<size_t>(i)];
    cols["alloc_bytes"].mutable_at(i) = s.alloc_bytes;
    cols["free_bytes"].mutable_at(i) = s.free_bytes;
    cols["workspace_bytes"].mutable_at(i) = s.workspace_bytes;
    cols["live_bytes"].mutable_at(i) = s.live_bytes;
    cols["live_arena_bytes"].mutable_at(i) = s.live_arena_bytes;
    cols["total_bytes"].mutable_at(i) = s.total_bytes;
  }
  py::dict out;
  std::vector<std::string> nodes;
  std::vector<std::string> ops;
  for (const auto& s : steps) {
    nodes.push_back(s.node);
    ops.push_back(s.op);
  }
  out["node"] = nodes;
  out["op"] = ops;
  for (auto& [name, col] : cols) out[py::str(name)] = std::move(col);
  return out;
}

// A sweep or fit over a dim no input names would bind nothing and draw a flat line: the
// library's check refuses it, here naming the Python function and its argument instead of the
// CLI's --solve.
void check_dim(const analysis::ModelProgram& m, const std::string& dim, const std::string& what) {
  try {
    analysis::check_fit_dim(m, dim);
  } catch (const UsageError& e) {
    const std::string message = e.what();
    const std::string cli = "--solve " + dim + ": ";
    throw UsageError(what + ": dim " + in_quotes(dim) + ": " +
                     (message.starts_with(cli) ? message.substr(cli.size()) : message));
  }
}

std::shared_ptr<PyAnalysis> analyze_model(
    const std::shared_ptr<PyModel>& model, const DimBindings& dims, const std::string& inputs,
    const std::string& order, const std::optional<std::string>& sweep_dim,
    const std::vector<int64_t>& sweep_values, const graph::InputShapes& shapes, bool fuse,
    bool carry_float32, const std::optional<std::string>& data_dir) {
  // A sweep's main report is at its first value unless the dim is bound, as in the CLI.
  DimBindings bound = dims;
  if (sweep_dim && !sweep_values.empty()) bound.emplace(*sweep_dim, sweep_values.front());
  const py::gil_scoped_release nogil;
  auto a = std::make_shared<PyAnalysis>(model_program(model, bound, inputs, order, shapes, fuse,
                                                      carry_float32, input_values(model, data_dir)),
                                        model->model().source().name());
  if (sweep_dim) {
    const analysis::ModelProgram& m = *a->model_program();
    check_dim(m, *sweep_dim, "sweep");
    a->set_sweep(analysis::sweep_model(m, *sweep_dim, sweep_values));
  }
  return a;
}

std::shared_ptr<PyAnalysis> analyze_trace(const std::string& text, const std::string& name,
                                          const std::optional<std::string>& inputs) {
  const py::gil_scoped_release nogil;
  analysis::Trace trace = analysis::parse_trace(text, name);
  if (inputs) trace.program.inputs = policy(*inputs);
  return std::make_shared<PyAnalysis>(std::move(trace), name);
}

void bind_alive(py::module_& m) {
  py::class_<analysis::AliveTensor>(m, "AliveTensor", "A tensor alive at the peak, and why.")
      .def_readonly("tensor", &analysis::AliveTensor::tensor)
      .def_readonly("bytes", &analysis::AliveTensor::bytes)
      .def_property_readonly(
          "category",
          [](const analysis::AliveTensor& t) { return analysis::category_name(t.category); })
      .def_readonly("producer", &analysis::AliveTensor::producer)
      .def_readonly("last_consumer", &analysis::AliveTensor::last_consumer)
      .def_readonly("why", &analysis::AliveTensor::why)
      .def("__repr__", [](const analysis::AliveTensor& t) {
        return "AliveTensor(" + t.tensor + ", " + std::to_string(t.bytes) + " bytes, " + t.why +
               ")";
      });
}

}  // namespace

void bind_analysis(py::module_& m) {
  bind_alive(m);
  using A = PyAnalysis;
  auto field = [](uint64_t analysis::Timeline::*f) {
    return [f](const A& a) { return a.timeline().*f; };
  };
  py::class_<A, std::shared_ptr<A>>(m, "Analysis", "A predicted memory timeline.")
      .def_property_readonly("total_peak", field(&analysis::Timeline::total_peak_bytes))
      .def_property_readonly("lower_bound", field(&analysis::Timeline::lower_bound_bytes))
      .def_property_readonly("lower_bound_arena",
                             field(&analysis::Timeline::lower_bound_arena_bytes))
      .def_property_readonly("weights", field(&analysis::Timeline::weights_bytes))
      .def_property_readonly("prepare_only_weights",
                             field(&analysis::Timeline::prepare_only_weights_bytes))
      .def_property_readonly("inputs", field(&analysis::Timeline::inputs_bytes))
      .def_property_readonly("outputs", field(&analysis::Timeline::outputs_bytes))
      .def_property_readonly("activations_peak", field(&analysis::Timeline::activations_peak_bytes))
      .def_property_readonly("workspace_peak", field(&analysis::Timeline::workspace_peak_bytes))
      .def_property_readonly("after", field(&analysis::Timeline::after_bytes))
      .def_property_readonly("peak_step", [](const A& a) { return a.timeline().peak_step; })
      .def_property_readonly("alive_at_peak", [](const A& a) { return a.timeline().alive_at_peak; })
      .def_property_readonly("timeline", &timeline_columns)
      .def_property_readonly("name", &A::name)
      .def(
          "to_json", [](const A& a) { return to_python(report::to_json(a.report())); },
          "What `footprint analyze --json` prints.")
      .def("__str__", [](const A& a) { return report::to_text(a.report()); });
  m.def("_analyze_model", &analyze_model);
  m.def(
      "_fit_model",
      [](const std::shared_ptr<PyModel>& model, const std::string& name, DimBindings dims,
         const std::string& inputs, const std::string& order, const graph::InputShapes& shapes,
         const std::string& dim, const std::string& figure, uint64_t budget, int64_t low,
         int64_t limit, bool fuse, bool carry_float32, const std::optional<std::string>& data_dir) {
        if (dims.contains(dim)) throw UsageError("dims binds " + dim + ", the dim solved for");
        const analysis::FitFigure f =
            figure == "activations" ? analysis::FitFigure::activations_peak
            : figure == "arena"     ? analysis::FitFigure::arena
            : figure == "total"     ? analysis::FitFigure::total_peak
                                    : throw UsageError("figure: total, activations or arena");
        nlohmann::json j;
        {
          const py::gil_scoped_release nogil;
          dims[dim] = low;
          const analysis::ModelProgram program =
              model_program(model, dims, inputs, order, shapes, fuse, carry_float32,
                            input_values(model, data_dir));
          check_dim(program, dim, "fit");
          const analysis::DimFit fit = analysis::fit_dim(
              [&](int64_t v) {
                DimBindings at = program.options.dims;
                at[dim] = v;
                return analysis::timeline_at(program, at);
              },
              dim, f, budget, low, limit);
          j = report::fit_json(name, fit);
        }
        return to_python(j);
      },
      "What `footprint fit --json` prints.");
  m.def(
      "_input_shapes",
      [](const std::shared_ptr<PyModel>& model, const std::string& dir) {
        const auto files = graph::numbered_tensor_files(dir, "input");
        if (files.empty()) throw Error(dir + ": no input_0.pb");
        return graph::input_shapes_from_files(model->model(), files);
      },
      "The extents DIR's input_*.pb give the model's inputs (`--data-dir`).");
  m.def("_analyze_trace", &analyze_trace);
}

}  // namespace footprint::python
