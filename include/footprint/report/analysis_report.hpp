#pragma once
// `footprint analyze` output: the JSON contract of DESIGN.md and a readable summary.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "footprint/analysis/dim_sweep.hpp"
#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/model_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/graph/carry_float32.hpp"
#include "footprint/graph/channels_last.hpp"

namespace footprint::report {

struct AnalysisReport {
  std::string model;
  std::string order = "stored";
  std::optional<uint64_t> stored_lower_bound_bytes;  // beside the chosen order's, when not stored
  std::string inputs_policy = "caller";
  const analysis::Timeline* timeline = nullptr;
  DimBindings dims;
  std::vector<std::string> unbound_dims;
  std::vector<std::string> warnings;
  std::vector<analysis::SubgraphMemory> subgraphs;
  // Tensors of data-dependent size, counted at their bounds: the figures are upper bounds.
  std::vector<analysis::BoundedTensor> bounded;
  // Inputs whose values (--data-dir) the figures were computed for: an extent depends on them.
  std::vector<std::string> values_of;
  size_t constant_nodes = 0;
  std::vector<std::string> fused;           // graph::fuse's lines: what each host node absorbed
  std::vector<std::string> patterns;        // graph::fuse's lines: patterns run as one op
  graph::ChannelsLastReport channels_last;  // graph::to_channels_last's counts
  graph::CarryReport carried;               // graph::carry_float32's
  uint64_t packed_bytes = 0;                // weights the kernels keep in layouts of their own
  analysis::PrepareMemory prepare;          // the heap buffers preparing takes (a lower bound)
  std::optional<analysis::DimSweep> sweep;
};

// The report of a model's program (no sweep), named `model`; it points into `m`. Unbound dims
// are reported at 1, as the analysis used them.
AnalysisReport analysis_report(const analysis::ModelProgram& m, std::string model);

nlohmann::json to_json(const AnalysisReport& r);
// "bounded by" lines: how many tensors each data-dependent op bounds, the largest first.
std::vector<std::string> bound_lines(const std::vector<analysis::BoundedTensor>& bounded,
                                     size_t max_lines = 8);
std::string to_text(const AnalysisReport& r, size_t max_alive_rows = 15);

}  // namespace footprint::report
