#include "footprint/analysis/dim_sweep.hpp"

#include "footprint/analysis/timeline.hpp"

namespace footprint::analysis {
namespace {
// Products of two byte counts overflow 64 bits; GCC and clang have a 128-bit integer.
__extension__ typedef __int128 Wide;
}  // namespace

LinearFit fit_line(const std::vector<int64_t>& xs, const std::vector<uint64_t>& ys) {
  LinearFit fit;
  if (xs.size() < 2 || xs.front() == xs.back()) return fit;
  // Exact integer collinearity: (y_i - y_0)(x_n - x_0) == (y_n - y_0)(x_i - x_0).
  const auto x0 = static_cast<Wide>(xs.front());
  const auto y0 = static_cast<Wide>(ys.front());
  const auto dx = static_cast<Wide>(xs.back()) - x0;
  const auto dy = static_cast<Wide>(ys.back()) - y0;
  fit.linear = true;
  for (size_t i = 1; i + 1 < xs.size(); ++i) {
    const Wide lhs = (static_cast<Wide>(ys[i]) - y0) * dx;
    const Wide rhs = dy * (static_cast<Wide>(xs[i]) - x0);
    fit.linear = fit.linear && lhs == rhs;
  }
  fit.slope = static_cast<double>(dy) / static_cast<double>(dx);
  fit.intercept = static_cast<double>(y0) - fit.slope * static_cast<double>(x0);
  return fit;
}

DimSweep sweep_dim(const graph::Graph& g, const GraphProgramOptions& base, const std::string& dim,
                   const std::vector<int64_t>& values) {
  return sweep_dim(
      [&](int64_t v) {
        GraphProgramOptions options = base;
        options.dims[dim] = v;
        return simulate(build_program(g, options).program);
      },
      dim, values);
}

DimSweep sweep_dim(const std::function<Timeline(int64_t)>& timeline_at, const std::string& dim,
                   const std::vector<int64_t>& values) {
  DimSweep sweep;
  sweep.dim = dim;
  std::vector<uint64_t> totals;
  std::vector<uint64_t> bounds;
  for (int64_t v : values) {
    const Timeline t = timeline_at(v);
    sweep.points.push_back({v, t.total_peak_bytes, t.lower_bound_bytes});
    totals.push_back(t.total_peak_bytes);
    bounds.push_back(t.lower_bound_bytes);
  }
  sweep.total_peak = fit_line(values, totals);
  sweep.lower_bound = fit_line(values, bounds);
  return sweep;
}

}  // namespace footprint::analysis
