#include "footprint/bench/compare.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "footprint/bench/mann_whitney.hpp"
#include "footprint/core/error.hpp"

namespace footprint::bench {
namespace {

double metric_value(const Record& r, const std::string& metric) {
  if (metric == "time") return r.wall.median;
  if (metric == "cpu") return r.cpu.median;
  if (metric == "peak_heap") return static_cast<double>(r.peak_heap_bytes);
  if (metric == "net_heap") return static_cast<double>(r.net_heap_bytes);
  if (metric == "allocations") return static_cast<double>(r.allocations);
  if (metric == "peak_rss") return static_cast<double>(r.peak_rss_bytes);
  return static_cast<double>(r.predicted_peak_bytes);  // predicted_peak
}

const std::vector<double>* samples(const Record& r, const std::string& metric) {
  if (metric == "time") return &r.wall_ms;
  if (metric == "cpu") return &r.cpu_ms;
  return nullptr;
}

double relative_change(double base, double contender) {
  if (base == 0) return contender == 0 ? 0 : 1;  // from nothing to something: +100 %
  return (contender - base) / std::abs(base);
}

// Why `r` has no figure for `metric`, or nullopt when it has one. A figure that is not there reads
// as 0, and a 0 would pass any threshold as "-100 %".
std::optional<std::string> missing(const Record& r, const std::string& metric) {
  if (const auto* s = samples(r, metric)) {
    if (s->empty()) return metric + " samples";
    return std::nullopt;
  }
  if (r.absent.contains(metric)) return metric + " figure";
  if (metric == "predicted_peak" && r.predicted_peak_bytes == 0) return "prediction";
  return std::nullopt;
}

MetricChange compare_metric(const Record& a, const Record& b, const std::string& metric,
                            const std::optional<double>& percent, const CompareOptions& o) {
  MetricChange c;
  c.benchmark = a.name;
  c.metric = metric;
  c.base = metric_value(a, metric);
  c.contender = metric_value(b, metric);
  c.change = relative_change(c.base, c.contender);
  c.threshold_percent = percent;
  const auto* sa = samples(a, metric);
  const auto* sb = samples(b, metric);
  const auto gap_a = missing(a, metric);
  if (const auto gap = gap_a ? gap_a : missing(b, metric)) {
    const char* side = gap_a ? "baseline" : "contender";
    if (percent) {
      throw Error("benchmark " + in_quotes(a.name) + ": the " + side + " record has no " + *gap +
                  ", so --fail-on " + metric + " cannot be checked");
    }
    c.note = "no " + *gap + " in the " + side;
    c.change = 0;
    return c;
  }
  const bool testable = sa != nullptr && sa->size() >= o.min_repetitions_for_utest &&
                        sb->size() >= o.min_repetitions_for_utest;
  if (testable) c.p_value = mann_whitney_u(*sa, *sb).p_value;
  if (percent && c.change * 100 > *percent) {
    if (c.p_value && *c.p_value >= o.alpha) {
      c.note = "above the threshold but not significant (U test)";
    } else {
      c.failed = true;
      if (sa != nullptr && !testable) c.note = "too few repetitions for a U test";
    }
  }
  return c;
}

}  // namespace

const std::vector<std::string>& known_metrics() {
  static const std::vector<std::string> m = {"time",        "cpu",      "peak_heap",     "net_heap",
                                             "allocations", "peak_rss", "predicted_peak"};
  return m;
}

Threshold parse_threshold(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos)
    throw UsageError("--fail-on " + spec + ": expected METRIC:PERCENT, e.g. time:5%");
  Threshold t;
  t.metric = spec.substr(0, colon);
  const auto& m = known_metrics();
  if (std::find(m.begin(), m.end(), t.metric) == m.end())
    throw UsageError("--fail-on " + spec + ": unknown metric '" + t.metric +
                     "' (time, cpu, peak_heap, net_heap, allocations, peak_rss, predicted_peak)");
  std::string pct = spec.substr(colon + 1);
  if (!pct.empty() && pct.back() == '%') pct.pop_back();
  char* end = nullptr;
  t.percent = std::strtod(pct.c_str(), &end);
  if (pct.empty() || end != pct.c_str() + pct.size() || t.percent < 0)
    throw UsageError("--fail-on " + spec + ": expected a non-negative percentage");
  return t;
}

Comparison compare(const RunRecords& base, const RunRecords& contender,
                   const std::vector<Threshold>& thresholds, const CompareOptions& options) {
  std::map<std::string, double> limits;
  for (const Threshold& t : thresholds) limits[t.metric] = t.percent;
  std::map<std::string, const Record*> theirs;
  for (const Record& r : contender.records) theirs[r.name] = &r;
  Comparison out;
  for (const Record& a : base.records) {
    const auto it = theirs.find(a.name);
    if (it == theirs.end()) {
      out.only_in_base.push_back(a.name);
      continue;
    }
    if (!it->second->error.empty() || !a.error.empty()) {
      // A case that failed has no figures to compare; failing it is the only safe verdict.
      MetricChange c;
      c.benchmark = a.name;
      c.metric = "error";
      c.failed = !it->second->error.empty();
      c.note = it->second->error.empty() ? "baseline failed: " + a.error : it->second->error;
      out.changes.push_back(c);
      out.failed |= c.failed;
      theirs.erase(it);
      continue;
    }
    for (const std::string& m : known_metrics()) {
      const auto limit = limits.find(m);
      std::optional<double> pct;
      if (limit != limits.end()) pct = limit->second;
      out.changes.push_back(compare_metric(a, *it->second, m, pct, options));
      out.failed |= out.changes.back().failed;
    }
    theirs.erase(it);
  }
  for (const auto& [name, r] : theirs) out.only_in_contender.push_back(name);
  if (!thresholds.empty() && out.changes.empty()) {
    // Nothing was compared: passing would say the contender met thresholds it was never held to.
    throw Error("no benchmark is in both runs (" + std::to_string(base.records.size()) +
                " in the baseline, " + std::to_string(contender.records.size()) +
                " in the contender): nothing to check --fail-on against");
  }
  return out;
}

}  // namespace footprint::bench
