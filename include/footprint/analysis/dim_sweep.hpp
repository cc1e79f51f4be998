#pragma once
// Peak memory as a function of one named dim: analyse the model at each value and, where the
// peak is linear in the dim, give slope and intercept.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "footprint/analysis/graph_program.hpp"

namespace footprint::analysis {

struct SweepPoint {
  int64_t value = 0;
  uint64_t total_peak_bytes = 0;
  uint64_t lower_bound_bytes = 0;
};

struct LinearFit {
  bool linear = false;  // every point lies exactly on the line through the first and last
  double slope = 0;     // bytes per unit of the dim
  double intercept = 0;
};

struct DimSweep {
  std::string dim;
  std::vector<SweepPoint> points;
  LinearFit total_peak;
  LinearFit lower_bound;
};

DimSweep sweep_dim(const graph::Graph& g, const GraphProgramOptions& base, const std::string& dim,
                   const std::vector<int64_t>& values);

// The same over timelines the caller makes for each value: a model whose shapes are inferred
// anew at each value (graph::bind_input_extents) rather than evaluated from one symbolic graph.
DimSweep sweep_dim(const std::function<Timeline(int64_t)>& timeline_at, const std::string& dim,
                   const std::vector<int64_t>& values);

LinearFit fit_line(const std::vector<int64_t>& xs, const std::vector<uint64_t>& ys);

}  // namespace footprint::analysis
