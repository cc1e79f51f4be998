#pragma once
// The Mann–Whitney U test, two-sided, as Google Benchmark's compare.py runs it (scipy's
// mannwhitneyu with method "auto"): exact distribution when both samples have fewer than 8
// values and no ties, normal approximation with tie and continuity corrections otherwise.
#include <vector>

namespace footprint::bench {

struct UTest {
  double u = 0;        // U of the first sample
  double p_value = 1;  // two-sided
  bool exact = false;
};

// Needs at least one value on each side (p = 1 otherwise).
UTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace footprint::bench
