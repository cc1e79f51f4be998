#pragma once
// Peak memory as a function of one named dim: analyse the model at each value and, where the
// peak is linear in the dim, give slope and intercept.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/timeline.hpp"

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

// An exact rational number, num / den with den > 0 and the fraction reduced.
struct Fraction {
  int64_t num = 0;
  int64_t den = 1;
  std::string to_string() const;  // "15396", "-3/2"
  friend bool operator==(const Fraction&, const Fraction&) = default;
};

// One piece of the total peak as a function of the dim: over the swept values `from` to `to`
// the peak is step `step`'s total bytes, and those are the polynomial `coefficients` (of x^0,
// x^1, ...) at every swept value, not only at these.
struct PeakPiece {
  int64_t from = 0;
  int64_t to = 0;
  std::string step;
  std::vector<Fraction> coefficients;
  std::string to_string(const std::string& dim) const;  // "7834494 + 15396*seq"
};

// The total peak is the largest of the steps' totals, so it is a polynomial only piecewise: a
// step's activations are a polynomial in the dim (attention's scores are quadratic in the
// sequence), and which step peaks changes with the dim. `exact` when every step's total
// is a polynomial of degree <= kMaxPeakDegree through all the swept points with at least two
// points to spare (the polynomial of least degree through the first points meets the others
// exactly); then `pieces` say which step peaks where, and `dominant` which step's polynomial
// grows fastest (the peak for every large enough value).
struct PeakLaw {
  static constexpr size_t kMaxPeakDegree = 3;
  bool exact = false;
  std::string why_not;  // when not exact: the first step that fits no such polynomial
  std::vector<PeakPiece> pieces;
  PeakPiece dominant;  // from/to unset
};

struct DimSweep {
  std::string dim;
  std::vector<SweepPoint> points;
  LinearFit total_peak;
  LinearFit lower_bound;
  PeakLaw total_peak_law;
};

// The law of the total peak from the timelines at `values` (ascending, each a distinct value);
// exposed for tests.
PeakLaw peak_law(const std::vector<int64_t>& values, const std::vector<Timeline>& timelines);

DimSweep sweep_dim(const graph::Graph& g, const GraphProgramOptions& base, const std::string& dim,
                   const std::vector<int64_t>& values);

// The same over timelines the caller makes for each value: a model whose shapes are inferred
// anew at each value (graph::bind_input_extents) rather than evaluated from one symbolic graph.
DimSweep sweep_dim(const std::function<Timeline(int64_t)>& timeline_at, const std::string& dim,
                   const std::vector<int64_t>& values);

LinearFit fit_line(const std::vector<int64_t>& xs, const std::vector<uint64_t>& ys);

}  // namespace footprint::analysis
