#pragma once
// An analysis result held for Python: a model's program (which keeps the model alive) or a
// trace's, with its timeline.
#include <memory>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "footprint/analysis/dim_sweep.hpp"
#include "footprint/analysis/model_program.hpp"
#include "footprint/analysis/trace_format.hpp"
#include "footprint/report/analysis_report.hpp"

namespace footprint::python {

// "caller" or "donated"; footprint::UsageError otherwise.
analysis::InputsPolicy policy(const std::string& s);

// A model's program, built as `footprint analyze` builds it: against the runtime's registry (the
// kernels' workspace is part of the prediction), sized for one thread as `run` runs by default.
// Call without the GIL.
// `values`: the inputs' values extents depend on (`--data-dir`'s small integer tensors).
analysis::ModelProgram model_program(const std::shared_ptr<PyModel>& model, const DimBindings& dims,
                                     const std::string& inputs, const std::string& order,
                                     const graph::InputShapes& shapes = {}, bool fuse = true,
                                     bool carry_float32 = true,
                                     const graph::InputValues& values = {});

// The values of the small integer and bool inputs in DIR's input_*.pb (none without DIR).
graph::InputValues input_values(const std::shared_ptr<PyModel>& model,
                                const std::optional<std::string>& dir);

class PyAnalysis {
 public:
  PyAnalysis(analysis::ModelProgram&& program, std::string name);
  PyAnalysis(analysis::Trace&& trace, std::string name);

  const analysis::Timeline& timeline() const;
  const analysis::MemoryProgram& program() const;
  const std::optional<analysis::ModelProgram>& model_program() const { return model_; }
  // What `footprint analyze --json` prints for the same input and options.
  report::AnalysisReport report() const;
  void set_sweep(analysis::DimSweep&& sweep) { sweep_ = std::move(sweep); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::optional<analysis::ModelProgram> model_;
  std::optional<analysis::Trace> trace_;
  analysis::Timeline trace_timeline_;
  std::optional<analysis::DimSweep> sweep_;
};

}  // namespace footprint::python
