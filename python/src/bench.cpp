// footprint.bench's native half: parameter representations (xxHash3-128 content hashes of
// arrays and models), timing summaries, the run context, and the C++ runner's stores (JSONL,
// Google Benchmark JSON, SQLite), so a Python run is written by the same code as a C++ one and
// `footprint compare` / `footprint history` read it. Records cross the boundary as the JSONL
// format's JSON text: one mapping (src/bench/record_json.cpp) on both sides.
#include <malloc.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "footprint/bench/content_hash.hpp"
#include "footprint/bench/param.hpp"
#include "footprint/bench/record_io.hpp"
#include "footprint/bench/sqlite_store.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"
#include "footprint/report/model_summary_report.hpp"
#include "footprint/runtime/process_memory.hpp"
#include "record_json.hpp"

namespace footprint::python {
namespace {

using nlohmann::json;

// A C-contiguous numpy array's representation, as Representation<runtime::Tensor> makes it: the
// array is viewed, not copied, and hashed without the GIL.
py::object tensor_repr(const py::array& array) {
  using npy = py::detail::npy_api;
  if ((array.flags() & static_cast<int>(npy::NPY_ARRAY_C_CONTIGUOUS_)) == 0)
    throw py::value_error("_tensor_repr: the array must be C-contiguous");
  const DType dtype = dtype_of(array.dtype(), "benchmark parameter");
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  // The representation only reads the bytes, so a read-only array may be viewed too.
  auto* data = static_cast<std::byte*>(const_cast<void*>(array.data()));
  const runtime::Tensor view = runtime::Tensor::view("", dtype, std::move(dims), data);
  bench::ParamRepr r;
  {
    const py::gil_scoped_release nogil;
    bench::Representation<runtime::Tensor>::fill(view, r);
  }
  return to_python(bench::to_json(r));
}

// A loaded model's representation: its bytes (the mapped file or the borrowed object) hashed
// where they lie; the source is the model's name (its path when it was loaded from one).
py::object model_repr(const PyModel& model) {
  const onnx::ModelSource& s = model.model().source();
  bench::ParamRepr r;
  r.type = "model";
  r.source = s.name();
  r.bytes = s.bytes().size();
  {
    const py::gil_scoped_release nogil;
    r.hash = bench::content_hash(s.bytes());
  }
  return to_python(bench::to_json(r));
}

std::string buffer_hash(const py::buffer& b) {
  const py::buffer_info info = b.request();
  if (!PyBuffer_IsContiguous(info.view(), 'C'))
    throw py::value_error("_content_hash: the buffer must be C-contiguous");
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(info.ptr),
                                         static_cast<size_t>(info.size * info.itemsize));
  const py::gil_scoped_release nogil;
  return bench::content_hash(bytes);
}

// The run the Python runner measured, from {"context", "records", "peak_rss_bytes",
// "memo_creations", "memo_evictions"}; record summaries are computed from the samples here.
bench::RunRecords run_from_json(const std::string& text) {
  const json j = json::parse(text);
  bench::RunRecords run;
  run.context = bench::context_from_json(j.at("context"));
  for (const json& r : j.at("records")) run.records.push_back(bench::record_from_json(r));
  run.peak_rss_bytes = j.value("peak_rss_bytes", uint64_t{0});
  run.memo_creations = j.value("memo_creations", uint64_t{0});
  run.memo_evictions = j.value("memo_evictions", uint64_t{0});
  return run;
}

void write_run(const std::string& text, const std::optional<std::filesystem::path>& jsonl,
               const std::optional<std::filesystem::path>& gbench) {
  const bench::RunRecords run = run_from_json(text);
  const py::gil_scoped_release nogil;
  if (jsonl) bench::append_jsonl(*jsonl, run);
  if (gbench) {
    write_output_file(*gbench, [&](std::ostream& f) { f << bench::to_gbench_json(run); });
  }
}

py::object summarize(const std::vector<double>& samples) {
  const bench::Summary s = bench::summarize(samples);
  return to_python(bench::to_json(s, samples));
}

py::object process_memory() {
  const auto m = runtime::read_process_memory();
  if (!m) return py::none();
  return to_python({{"rss_bytes", m->rss_bytes}, {"peak_rss_bytes", m->peak_rss_bytes}});
}

// Bytes of the native heap in use as glibc counts them (every arena, mmapped blocks too): the
// figure footprint.heap_in_use reads, here without a round trip through Python.
uint64_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// The native heap's peak, sampled by a thread of its own that never takes the GIL, so sampling
// does not stop the Python code being measured. take() returns the highest figure since the last
// take() (or the start) and starts the next window at the current figure. A peak shorter than
// the interval can be missed: the figure is a lower bound of the true peak.
class HeapSampler {
 public:
  explicit HeapSampler(double interval_s)
      : peak_(heap_in_use()),
        interval_(std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(interval_s))),
        thread_([this](const std::stop_token& stop) { sample(stop); }) {}

  uint64_t take() {
    const uint64_t now = heap_in_use();
    return std::max(peak_.exchange(now), now);
  }
  void stop() {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void raise_to(uint64_t v) {
    uint64_t seen = peak_.load();
    while (v > seen && !peak_.compare_exchange_weak(seen, v)) {
    }
  }
  void sample(const std::stop_token& stop) {
    std::mutex m;
    std::condition_variable_any wake;
    std::unique_lock lock(m);
    while (!stop.stop_requested()) {
      raise_to(heap_in_use());
      wake.wait_for(lock, stop, interval_, [] { return false; });
    }
  }
  std::atomic<uint64_t> peak_;
  std::chrono::nanoseconds interval_;
  std::jthread thread_;  // last: started once the members it reads exist
};

}  // namespace

void bind_bench(py::module_& m) {
  m.def("_tensor_repr", &tensor_repr, py::arg("array"));
  m.def("_model_repr", &model_repr, py::arg("model"));
  m.def("_content_hash", &buffer_hash, py::arg("buffer"), "xxHash3-128 of a buffer, 32 hex");
  m.def("_summarize", &summarize, py::arg("samples"));
  m.def(
      "_short_text",
      [](const std::string& repr) {
        return bench::short_text(bench::param_from_json(json::parse(repr)));
      },
      py::arg("repr_json"));
  m.def("_run_context", [] { return to_python(bench::to_json(bench::current_context())); });
  m.def(
      "_to_jsonl", [](const std::string& text) { return bench::to_jsonl(run_from_json(text)); },
      py::arg("run_json"));
  m.def("_write_run", &write_run, py::arg("run_json"), py::arg("jsonl") = py::none(),
        py::arg("gbench") = py::none());
  m.def("_process_memory", &process_memory);
  m.def("_human_bytes", &report::human_bytes, py::arg("bytes"));
  m.def("_heap_in_use", &heap_in_use);
  // Freed memos often sit in glibc's free lists; giving the pages back keeps the next memo's
  // growth from being measured on top of them (as the C++ runner does after an eviction).
  m.def("_malloc_trim", [] { return malloc_trim(0) != 0; });
  py::class_<HeapSampler>(m, "_HeapSampler")
      .def(py::init<double>(), py::arg("interval_s"))
      .def("take", &HeapSampler::take, py::call_guard<py::gil_scoped_release>())
      .def("stop", &HeapSampler::stop, py::call_guard<py::gil_scoped_release>());
  py::class_<bench::SqliteStore>(m, "_SqliteStore")
      .def(py::init<const std::filesystem::path&>(), py::arg("path"))
      .def_property_readonly("version", &bench::SqliteStore::version)
      .def(
          "save",
          [](bench::SqliteStore& db, const std::string& text) {
            const bench::RunRecords run = run_from_json(text);
            const py::gil_scoped_release nogil;
            db.save(run);
          },
          py::arg("run_json"));
}

}  // namespace footprint::python
