// footprint.Session: runs a model inside its plan, numpy arrays in and out.
#include "footprint/runtime/session.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/report/model_summary_report.hpp"
#include "footprint/runtime/process_memory.hpp"

namespace footprint::python {
namespace {

// `array` as a runtime tensor: read in place when it is C-contiguous, aligned for its dtype and
// in native byte order (the caller's array must then outlive the tensor); a copy otherwise,
// counted in `copied_bytes`.
runtime::Tensor tensor_of(const std::string& name, const py::array& array, uint64_t& copied_bytes) {
  const py::array native = native_order(array);
  const DType dtype = dtype_of(native.dtype(), "input " + in_quotes(name));
  using npy = py::detail::npy_api;
  constexpr int kInPlace =
      static_cast<int>(npy::NPY_ARRAY_C_CONTIGUOUS_) | static_cast<int>(npy::NPY_ARRAY_ALIGNED_);
  const bool in_place = native.ptr() == array.ptr() && (array.flags() & kInPlace) == kInPlace;
  const py::array c = in_place ? array : py::array::ensure(native, py::array::c_style);
  if (!c) throw py::type_error("input " + name + ": not convertible to a contiguous array");
  std::vector<int64_t> dims(c.shape(), c.shape() + c.ndim());
  // The session never writes into its inputs, so a read-only array may be viewed too.
  auto* data = static_cast<std::byte*>(const_cast<void*>(c.data()));
  runtime::Tensor t = in_place ? runtime::Tensor::view(name, dtype, std::move(dims), data)
                               : runtime::Tensor(name, dtype, std::move(dims));
  if (t.bytes() != static_cast<size_t>(c.nbytes())) {
    throw UsageError("input " + in_quotes(name) + ": " + std::to_string(c.nbytes()) +
                     " bytes where the dtype and shape need " + std::to_string(t.bytes()));
  }
  if (!in_place && t.bytes() > 0) {
    std::memcpy(t.data(), c.data(), t.bytes());
    copied_bytes += t.bytes();
  }
  return t;
}

// The output as a numpy array over the tensor's own storage (no copy): the array owns the
// tensor through a capsule.
py::array array_of(runtime::Tensor&& t) {
  const py::dtype dt = numpy_dtype(t.dtype(), "output " + in_quotes(t.name()));
  auto* owned = new runtime::Tensor(std::move(t));
  const py::capsule base(owned, [](void* p) { delete static_cast<runtime::Tensor*>(p); });
  return {dt, owned->dims(), owned->data(), base};
}

class PySession {
 public:
  PySession(std::shared_ptr<PyModel> model, runtime::SessionOptions options)
      : model_(std::move(model)), session_(model_->model(), std::move(options)) {}

  // One run at a time: the arena, the kernels' state and the last run's figures are the
  // session's. A second thread calling run() waits for the first (without the GIL) rather than
  // running in the same arena.
  py::dict run(const py::dict& feeds) {
    // The arrays stay referenced here while the run reads them without the GIL.
    std::vector<py::array> arrays;
    std::vector<runtime::Tensor> inputs;
    uint64_t copied_bytes = 0;
    for (const auto& [key, value] : feeds) {
      arrays.push_back(py::array::ensure(value));
      if (!arrays.back())
        throw py::type_error("input " + std::string(py::str(key)) + ": not an array");
      inputs.push_back(tensor_of(py::str(key), arrays.back(), copied_bytes));
    }
    std::vector<runtime::Tensor> outputs;
    {
      const py::gil_scoped_release nogil;
      const std::lock_guard<std::mutex> lock(mutex_);
      outputs = session_.run(inputs);
      copied_bytes_ = copied_bytes;
    }
    py::dict out;
    for (runtime::Tensor& t : outputs) {
      const std::string name = t.name();
      out[py::str(name)] = array_of(std::move(t));
    }
    return out;
  }

  py::dict stats() const;
  py::list inputs() const {
    py::list out;
    for (const auto& i : session_.inputs()) {
      out.append(py::make_tuple(i.name, std::string(dtype_name(i.dtype)), i.shape.to_string()));
    }
    return out;
  }

  // ({input: kind}, {output: kind}) of those declared other than tensors ("sequence",
  // "optional", ...).
  py::tuple held() const {
    py::dict ins;
    py::dict outs;
    for (const auto& i : session_.inputs()) {
      if (!i.not_a_tensor.empty()) ins[py::str(i.name)] = i.not_a_tensor;
    }
    for (const auto& o : session_.outputs()) {
      if (!o.not_a_tensor.empty()) outs[py::str(o.name)] = o.not_a_tensor;
    }
    return py::make_tuple(ins, outs);
  }

 private:
  std::shared_ptr<PyModel> model_;  // first: the session reads the model's weights in place
  runtime::Session session_;
  uint64_t copied_bytes_ = 0;  // input bytes the last run copied (0: every input read in place)
  mutable std::mutex mutex_;   // held by run() and by stats() while they read the session
};

// Heap figures come from the counting allocator, which this extension does not link (it
// replaces malloc process-wide, which a dlopen'd module cannot do): None unless the process
// was started with it.
py::object heap_figure(uint64_t bytes) {
  return heap::available() ? py::object(py::int_(bytes)) : py::object(py::none());
}

py::dict PySession::stats() const {
  runtime::PreparedStats p;
  runtime::RunStats r;
  std::vector<std::string> names;
  std::vector<std::string> ops;
  uint64_t copied_bytes = 0;
  {
    // A snapshot, so a run in another thread neither waits for the dict nor changes it midway.
    const py::gil_scoped_release nogil;
    const std::lock_guard<std::mutex> lock(mutex_);
    p = session_.prepared();
    r = session_.last_run();
    copied_bytes = copied_bytes_;
    if (!r.step_ns.empty()) {
      names = session_.step_names();
      ops = session_.step_ops();
    }
  }
  py::dict predicted;
  predicted["arena_bytes"] = p.planned_arena_bytes;
  predicted["lower_bound_bytes"] = p.lower_bound_bytes;
  predicted["activations_peak_bytes"] = p.activations_peak_bytes;
  predicted["workspace_peak_bytes"] = p.workspace_peak_bytes;
  predicted["outputs_bytes"] = p.outputs_bytes;
  predicted["weights_bytes"] = p.weights_bytes;
  predicted["run_heap_bytes"] = p.planned_arena_bytes + p.outputs_bytes;
  predicted["total_peak_bytes"] = p.total_peak_bytes;
  predicted["planner"] = p.planner;
  py::dict measured;
  measured["arena_bytes"] = r.arena_bytes;
  measured["input_copied_bytes"] = copied_bytes;
  measured["output_bytes"] = r.output_bytes;
  measured["latency_ms"] = r.latency_ms;
  measured["peak_heap_bytes"] = heap_figure(r.peak_heap_bytes);
  measured["prepare_peak_heap_bytes"] = heap_figure(p.prepare_peak_heap_bytes);
  measured["constant_bytes"] = p.constant_bytes;
  measured["packed_weights_bytes"] = p.packed_weights_bytes;
  // The buffers preparing declared, at their peak together and kept: analyze's `prepare`.
  measured["prepare_buffers_peak_bytes"] = p.prepare_buffers_peak_bytes;
  measured["prepare_buffers_kept_bytes"] = p.prepare_buffers_kept_bytes;
  measured["released_constant_bytes"] = p.released_constant_bytes;
  measured["released_mapped_bytes"] = p.released_mapped_bytes;
  if (const auto os = runtime::read_process_memory()) {
    measured["rss_bytes"] = os->rss_bytes;
    measured["peak_rss_bytes"] = os->peak_rss_bytes;
    measured["private_bytes"] = os->private_bytes;
    measured["file_backed_bytes"] = os->file_backed_bytes;
  }
  py::dict out;
  out["dims"] = p.dims;
  out["rebatched"] = p.rebatched;
  out["fused"] = p.fused;
  out["patterns"] = p.patterns;
  out["channels_last"] = py::dict(py::arg("nodes") = p.channels_last_nodes,
                                  py::arg("layout_changes") = p.layout_changes);
  out["float32_carriers"] = to_python(report::carried_json(p.carried));
  out["steps"] = p.steps;
  // The inputs whose values the plan was made for (an extent depends on them), else empty.
  out["planned_for_values_of"] = p.bound_by_value;
  out["predicted"] = predicted;
  out["measured"] = measured;
  if (!r.step_ns.empty()) {
    // profile=True: the last run's time per step, named and typed as `run --profile` shows them.
    py::list steps;
    for (size_t s = 0; s < r.step_ns.size() && s < names.size(); ++s) {
      py::dict step;
      step["name"] = names[s];
      step["op"] = ops[s];
      step["ms"] = static_cast<double>(r.step_ns[s]) / 1e6;
      steps.append(step);
    }
    out["profile"] = steps;
  }
  return out;
}

}  // namespace

void bind_session(py::module_& m) {
  m.def(
      "read_tensor",
      [](const std::filesystem::path& path) {
        runtime::Tensor t;
        {
          const py::gil_scoped_release nogil;
          t = runtime::read_tensor_file(path);
        }
        return array_of(std::move(t));
      },
      py::arg("path"), "A serialized TensorProto (.pb) as a numpy array.");
  m.def(
      "write_tensor",
      [](const std::filesystem::path& path, const py::array& array, const std::string& name) {
        uint64_t copied = 0;
        const runtime::Tensor t = tensor_of(name, array, copied);
        const py::gil_scoped_release nogil;
        runtime::write_tensor_file(path, t);
      },
      py::arg("path"), py::arg("array"), py::arg("name") = "",
      "Writes a numpy array as a serialized TensorProto (.pb).");
  py::class_<PySession>(m, "Session", "Runs a model inside its planned arena.")
      .def(py::init([](std::shared_ptr<PyModel> model, int threads, const DimBindings& dims,
                       const std::string& planner, const std::string& order, bool profile,
                       bool fuse, bool carry_float32) {
             runtime::SessionOptions o;
             o.threads = threads;
             o.dims = dims;
             o.planner = planner;
             o.order = order;
             o.profile = profile;
             o.fuse = fuse;
             o.carry_float32 = carry_float32;
             return std::make_unique<PySession>(std::move(model), std::move(o));
           }),
           py::arg("model"), py::arg("threads") = 1, py::arg("dims") = DimBindings{},
           py::arg("planner") = "auto", py::arg("order") = "stored", py::arg("profile") = false,
           py::arg("fuse") = true, py::arg("carry_float32") = true)
      .def("run", &PySession::run, py::arg("inputs"),
           "Runs on {name: numpy array}; returns {name: numpy array} (the outputs' own storage).")
      .def_property_readonly("stats", &PySession::stats,
                             "Predicted and measured figures of the last run, as `run --json`.")
      .def_property_readonly("inputs", &PySession::inputs)
      .def_property_readonly("_held", &PySession::held,
                             "The inputs and outputs declared sequences or optionals, and which.");
}

}  // namespace footprint::python
