#include "footprint/bench/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"

namespace footprint::bench {

double percentile_of_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw Error("a percentile of no samples");
  if (!(q >= 0 && q <= 1)) throw Error("percentile " + std::to_string(q) + " is not in [0, 1]");
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(std::floor(rank));
  if (below + 1 >= sorted.size()) return sorted[below];
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
}

double percentile(std::span<const double> samples, double q) {
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return percentile_of_sorted(sorted, q);
}

}  // namespace footprint::bench
