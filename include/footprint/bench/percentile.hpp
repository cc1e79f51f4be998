#pragma once
// The one quantile of timing samples footprint reports (`run`'s latency median and p90, a
// benchmark's median), so the same samples give the same figure everywhere.
//
//   const double p90 = bench::percentile(latencies_ms, 0.9);
//
// Definition: linear interpolation between the closest ranks, numpy's default ("linear",
// Hyndman and Fan's type 7): with the n samples sorted, q maps to rank h = q (n - 1) and the
// result is x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]). Chosen because it is what
// numpy, R and spreadsheets give by default (figures can be checked with them), its median of an
// even count is the usual mean of the two middle samples, and it moves continuously with q rather
// than jumping between samples as nearest rank does.
#include <span>

namespace footprint::bench {

// q in [0, 1]; no samples, or q outside [0, 1] (or NaN), is an Error.
double percentile(std::span<const double> samples, double q);
// The same over samples already sorted ascending (no copy).
double percentile_of_sorted(std::span<const double> sorted, double q);

}  // namespace footprint::bench
