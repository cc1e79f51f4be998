// footprint.report: `footprint report`'s HTML page for a model or a trace.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis.hpp"
#include "bindings.hpp"
#include "footprint/core/user_files.hpp"
#include "report_page.hpp"

namespace footprint::python {
namespace {

cli::ReportOptions options_of(std::string title, const std::filesystem::path& output,
                              const std::string& inputs, const std::string& order,
                              const std::string& algo, const std::optional<double>& time_limit,
                              bool run) {
  cli::ReportOptions o;
  o.input = std::move(title);
  o.output = output.string();
  o.inputs = inputs;
  o.order = order;
  o.algo = algo;
  o.time_limit_s = time_limit;
  o.run = run;
  return o;
}

}  // namespace

void bind_report(py::module_& m) {
  m.def("_report_model",
        [](const std::shared_ptr<PyModel>& model, const std::filesystem::path& output,
           const DimBindings& dims, const std::string& inputs, const std::string& order,
           const std::string& algo, const std::optional<double>& time_limit, bool run) {
          std::vector<InputFile> read;
          for (std::filesystem::path& f : model->model().files())
            read.push_back({std::move(f), "a file of the model"});
          refuse_overwriting(output, read, "path");
          const cli::ReportOptions o = options_of(model->model().source().name(), output, inputs,
                                                  order, algo, time_limit, run);
          nlohmann::json summary;
          {
            const py::gil_scoped_release nogil;
            // The stored order, as the command builds it: the page sets the memory order beside it.
            summary = cli::write_report(o, model_program(model, dims, inputs, "stored"));
          }
          return to_python(summary);
        });
  m.def("_report_trace", [](const std::string& text, const std::string& name,
                            const std::filesystem::path& output,
                            const std::optional<std::string>& inputs, const std::string& algo,
                            const std::optional<double>& time_limit,
                            const std::optional<std::filesystem::path>& source_file) {
    if (source_file) {
      const InputFile read[] = {{*source_file, "the trace"}};
      refuse_overwriting(output, read, "path");
    }
    const cli::ReportOptions o =
        options_of(name, output, inputs.value_or("caller"), "stored", algo, time_limit, false);
    nlohmann::json summary;
    {
      const py::gil_scoped_release nogil;
      analysis::Trace trace = analysis::parse_trace(text, name);
      if (inputs) trace.program.inputs = policy(*inputs);
      summary = cli::write_report(o, std::move(trace));
    }
    return to_python(summary);
  });
}

}  // namespace footprint::python
