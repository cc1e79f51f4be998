#pragma once
// `footprint run` output: the prediction beside what the run measured, as DESIGN.md's JSON
// contract and as a readable summary. The CLI runs the model and fills a RunReport; everything
// printed is decided here.
//
//   report::RunReport r;
//   r.model = path;
//   r.prepared = session.prepared();  // ... and what the runs measured
//   std::printf("%s", report::run_text(r).c_str());       // or run_json(r).dump(2)
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "footprint/runtime/output_check.hpp"
#include "footprint/runtime/process_memory.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/shape_check.hpp"
#include "footprint/runtime/tensor.hpp"

namespace footprint::report {

// Of the timed runs, in milliseconds (median and p90 as bench::percentile defines them).
struct LatencyFigures {
  double min = 0;
  double median = 0;
  double p90 = 0;
  size_t runs = 0;
};

// `run --profile`: each step's median wall time over the timed runs, in the order they run.
struct StepTime {
  std::string name;
  std::string op;
  double ms = 0;
};
struct RunProfile {
  size_t runs = 0;
  std::vector<StepTime> steps;
};

// The profile summed by op type, the dearest first (ties by name).
struct OpTime {
  std::string op;
  size_t steps = 0;
  double ms = 0;
};
std::vector<OpTime> time_by_op(const RunProfile& p);

struct RunReport {
  std::string model;
  std::string input_source;  // "random (seed 1)", "files" or the --data-dir folder
  int threads = 1;
  runtime::PreparedStats prepared;
  runtime::RunStats first_run;  // the first run after preparing (it obtains the arena)
  runtime::RunStats last_run;
  LatencyFigures latency_ms;
  std::vector<runtime::Tensor> outputs;
  std::vector<std::string> output_files;      // one per output when written (-o), else empty
  std::optional<runtime::OutputCheck> check;  // with expected outputs only
  double rtol = 0;                            // the check's tolerances
  double atol = 0;
  double atol_of_peak = 0;  // the share of an output's largest magnitude its atol is at least
  // Whose defaults rtol and atol_of_peak are where the graph computes in fewer digits than
  // float32 ("a float16 graph's"); empty: float32's, or the flags given.
  std::string tolerance_rule;
  uint64_t load_peak_heap_bytes = 0;
  double load_ms = 0;
  double prepare_ms = 0;
  std::optional<runtime::ProcessMemory> after_prepare;
  std::optional<runtime::ProcessMemory> end;
  std::optional<RunProfile> profile;
  std::optional<runtime::ShapeCheck> shape_check;  // with --check-shapes only
};

nlohmann::json run_json(const RunReport& r);
std::string run_text(const RunReport& r);

}  // namespace footprint::report
