#pragma once
// `footprint report`'s page, for the command and for the Python package (footprint.report): a
// model's program or a trace, planned as `plan` plans it, optionally measured by a run, written
// as one self-contained HTML file.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "footprint/analysis/trace_format.hpp"
#include "model_program.hpp"

namespace footprint::cli {

// The command's flags; `json` only chooses what the command prints.
struct ReportOptions {
  std::string input;
  std::string output;
  std::vector<std::string> dims;
  std::vector<std::string> shapes;
  std::string data_dir;  // the inputs' extents, and with --run the inputs the run is fed
  std::string inputs = "caller";
  std::string order = "stored";
  bool no_fuse = false;
  bool keep_16bit = false;
  std::string algo = "auto";
  std::optional<double> time_limit_s;
  bool json = false;
  bool run = false;
};

// `stored` is the model's program in its stored order (the memory-aware order is searched
// here); o.input titles the page, o.output is written atomically. Returns what `report --json`
// prints. Throws footprint::Error / UsageError as the command does.
nlohmann::json write_report(const ReportOptions& o, ModelProgram&& stored);
nlohmann::json write_report(const ReportOptions& o, analysis::Trace&& trace);

}  // namespace footprint::cli
