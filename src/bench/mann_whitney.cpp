#include "footprint/bench/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace footprint::bench {
namespace {

struct Ranks {
  double rank_sum_a = 0;
  double tie_term = 0;  // sum over tie groups of t^3 - t
  bool ties = false;
};

// Midranks of the pooled sample.
Ranks rank(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  std::sort(pooled.begin(), pooled.end());
  Ranks r;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double mid = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    const auto t = static_cast<double>(j - i);
    if (t > 1) {
      r.ties = true;
      r.tie_term += t * t * t - t;
    }
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second) r.rank_sum_a += mid;
    i = j;
  }
  return r;
}

// P(U <= u) under the null, by counting arrangements: N(u; m, n) = N(u - n; m - 1, n) + N(u; m,
// n - 1). Small samples only (m, n < 8), so the table is tiny.
double exact_cdf(int u, int m, int n) {
  const int max_u = m * n;
  // counts[i][j][k]: arrangements of i values of a and j of b with U = k.
  std::vector<std::vector<std::vector<double>>> c(
      m + 1, std::vector<std::vector<double>>(n + 1, std::vector<double>(max_u + 1, 0)));
  for (int i = 0; i <= m; ++i) {
    for (int j = 0; j <= n; ++j) {
      if (i == 0 || j == 0) {
        c[i][j][0] = 1;
        continue;
      }
      for (int k = 0; k <= i * j; ++k) {
        c[i][j][k] = (k - j >= 0 ? c[i - 1][j][k - j] : 0) + c[i][j - 1][k];
      }
    }
  }
  const double total = std::accumulate(c[m][n].begin(), c[m][n].end(), 0.0);
  double below = 0;
  for (int k = 0; k <= std::min(u, max_u); ++k) below += c[m][n][k];
  return below / total;
}

}  // namespace

UTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  UTest t;
  if (a.empty() || b.empty()) return t;
  const auto n1 = static_cast<double>(a.size());
  const auto n2 = static_cast<double>(b.size());
  const Ranks r = rank(a, b);
  t.u = r.rank_sum_a - n1 * (n1 + 1) / 2;
  if (a.size() < 8 && b.size() < 8 && !r.ties) {
    // Two-sided: twice the smaller tail (the distribution is symmetric).
    const int u_small = static_cast<int>(std::min(t.u, n1 * n2 - t.u));
    t.p_value = std::min(
        1.0, 2 * exact_cdf(u_small, static_cast<int>(a.size()), static_cast<int>(b.size())));
    t.exact = true;
    return t;
  }
  const double n = n1 + n2;
  const double mu = n1 * n2 / 2;
  const double var = n1 * n2 / 12 * ((n + 1) - r.tie_term / (n * (n - 1)));
  if (var <= 0) return t;  // every value equal: no evidence of a difference
  const double z = (std::abs(t.u - mu) - 0.5) / std::sqrt(var);
  t.p_value = std::min(1.0, std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));
  return t;
}

}  // namespace footprint::bench
