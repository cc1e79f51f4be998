#pragma once
// Comparing two runs, benchmark by benchmark (matched by name): each metric's change and, for
// times, a Mann–Whitney U test over the repetitions. A threshold fails when the contender is
// worse than the baseline by more than its percentage; for times the U test must also say the
// difference is real (p < alpha) when both sides have enough repetitions, so two runs of the same
// build do not fail on noise.
//
//   auto t = bench::parse_threshold("time:5%");
//   bench::Comparison c = bench::compare(base, contender, {t});
//   if (c.failed) return 1;
#include <optional>
#include <string>
#include <vector>

#include "footprint/bench/record.hpp"

namespace footprint::bench {

// Metrics: time (median wall), cpu (median CPU), peak_heap, net_heap, allocations, peak_rss,
// predicted_peak.
struct Threshold {
  std::string metric;
  double percent = 0;
};
// "time:5%" or "peak_heap:1" (the % is optional). Throws footprint::UsageError.
Threshold parse_threshold(const std::string& spec);
const std::vector<std::string>& known_metrics();

struct MetricChange {
  std::string benchmark;
  std::string metric;
  double base = 0;
  double contender = 0;
  double change = 0;              // (contender - base) / base; 0 when both are 0
  std::optional<double> p_value;  // times only, with enough repetitions
  std::optional<double> threshold_percent;
  bool failed = false;
  std::string note;
};

struct Comparison {
  std::vector<MetricChange> changes;
  std::vector<std::string> only_in_base;
  std::vector<std::string> only_in_contender;
  bool failed = false;
};

struct CompareOptions {
  double alpha = 0.05;
  // The U test decides times only when both sides have at least this many repetitions; with
  // fewer, the threshold alone decides (the exact test cannot reach p < 0.05 with 3 vs 3).
  size_t min_repetitions_for_utest = 5;
};

// Throws footprint::Error when a thresholded time has no samples on one side, or when thresholds
// are given and no benchmark is in both runs: neither may pass for want of figures.
Comparison compare(const RunRecords& base, const RunRecords& contender,
                   const std::vector<Threshold>& thresholds, const CompareOptions& options = {});

}  // namespace footprint::bench
