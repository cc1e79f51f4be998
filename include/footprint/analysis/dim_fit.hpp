#pragma once
// The largest value of one dim (batch, sequence or past length) whose predicted figure fits a
// budget: `footprint fit`.
//
//   DimFit f = fit_dim([&](int64_t v) { return timeline_at(m, with(dims, "seq", v)); }, "seq",
//                      FitFigure::total_peak, 64 << 20);
//   f.largest;  // the answer; f.bytes_at_largest <= budget < f.bytes_above
//
// The figure at a value is the analysis' exact prediction there; the search doubles the value
// until the figure exceeds the budget (or the analysis refuses the value: a position table too
// short, say), then bisects, O(log answer) analyses in all. It relies on the figure growing
// with the dim, and checks it: probes whose figures fall as the dim grows are an error.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "footprint/analysis/model_program.hpp"
#include "footprint/analysis/timeline.hpp"

namespace footprint::analysis {

enum class FitFigure {
  total_peak,        // everything live at the peak step, weights included
  activations_peak,  // the activations alone, workspace aside
  arena,             // the smallest arena of 64-byte buffers (activations and workspace): what
                     // `run` obtains where its plan is optimal
};
const char* figure_name(FitFigure f);  // "total peak", "activations peak", "arena lower bound"
uint64_t figure_of(const Timeline& t, FitFigure f);

struct FitProbe {
  int64_t value = 0;
  std::optional<uint64_t> bytes;  // nullopt: the analysis refused the value (`refused` says why)
  std::string refused;
};

struct DimFit {
  std::string dim;
  FitFigure figure = FitFigure::total_peak;
  uint64_t budget_bytes = 0;
  std::optional<int64_t> largest;  // nullopt: not even the smallest value fits
  uint64_t bytes_at_largest = 0;
  // The value above the answer and what stops it: its figure is over the budget, or the
  // analysis refuses it (then `refused` holds the reason), or it is past `limit`.
  int64_t above = 0;
  std::optional<uint64_t> bytes_above;
  std::string refused;
  bool at_limit = false;
  std::vector<FitProbe> probes;  // in the order they were analysed
};

// `timeline_at` throws footprint::Error for a value the model cannot take; values go from
// `low` (>= 0) to `limit`. Throws footprint::Error when two probes show the figure falling.
DimFit fit_dim(const std::function<Timeline(int64_t)>& timeline_at, const std::string& dim,
               FitFigure figure, uint64_t budget_bytes, int64_t low = 1,
               int64_t limit = int64_t{1} << 40);

// Throws footprint::UsageError when no input of m's model names `dim` and no re-batching made
// it: a dim nothing reads leaves every figure as it is, and the search would run to its limit.
void check_fit_dim(const ModelProgram& m, const std::string& dim);

}  // namespace footprint::analysis
