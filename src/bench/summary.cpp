#include <algorithm>
#include <cmath>
#include <numeric>

#include "footprint/bench/percentile.hpp"
#include "footprint/bench/record.hpp"

namespace footprint::bench {

Summary summarize(const std::vector<double>& samples) {
  Summary s;
  if (samples.empty()) return s;
  std::vector<double> v = samples;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.min = v.front();
  s.median = percentile_of_sorted(v, 0.5);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(n - 1));
  }
  return s;
}

}  // namespace footprint::bench
