// Google Benchmark's JSON (the format its compare.py and dashboards read): one "iteration" entry
// per repetition, so a U test can use the samples, then the mean/median/stddev aggregates.
#include <algorithm>
#include <utility>

#include "footprint/bench/record_io.hpp"
#include "record_json.hpp"

namespace footprint::bench {
namespace {

using nlohmann::json;

json gbench_context(const RunRecords& run) {
  const RunContext& c = run.context;
  std::string build = c.build_type;
  std::transform(build.begin(), build.end(), build.begin(), ::tolower);
  json j = {{"date", c.date},
            {"host_name", c.host},
            {"executable", c.executable},
            {"num_cpus", c.num_cpus},
            {"mhz_per_cpu", 0},
            {"cpu_scaling_enabled", false},
            {"caches", json::array()},
            {"load_avg", json::array()},
            {"library_build_type", build == "debug" ? "debug" : "release"}};
  // Ours, beside Google Benchmark's.
  json ours = to_json(c);
  ours.erase("type");
  ours["peak_rss_bytes"] = run.peak_rss_bytes;
  j["footprint"] = ours;
  return j;
}

json base_entry(const Record& r, size_t family, size_t instance) {
  json params = json::array();
  for (const ParamRepr& p : r.params) params.push_back(to_json(p));
  json e = {{"name", r.name},
            {"family_index", family},
            {"per_family_instance_index", instance},
            {"run_name", r.name},
            {"repetitions", r.wall_ms.size()},
            {"threads", 1},
            {"iterations", 1},
            {"time_unit", "ms"},
            {"allocs_per_iter", r.allocations},
            {"max_bytes_used", r.peak_heap_bytes},
            {"net_heap_growth", r.net_heap_bytes},
            {"peak_rss_bytes", r.peak_rss_bytes},
            {"predicted_peak_bytes", r.predicted_peak_bytes},
            {"params", params}};
  // A figure the record never had is left out, not written as a 0 a reader would take as measured.
  for (const auto& [metric, key] : {std::pair{"allocations", "allocs_per_iter"},
                                    {"peak_heap", "max_bytes_used"},
                                    {"net_heap", "net_heap_growth"},
                                    {"peak_rss", "peak_rss_bytes"},
                                    {"predicted_peak", "predicted_peak_bytes"}}) {
    if (r.absent.contains(metric)) e.erase(key);
  }
  return e;
}

void add_entries(const Record& r, size_t family, size_t instance, json& out) {
  for (size_t i = 0; i < r.wall_ms.size(); ++i) {
    json e = base_entry(r, family, instance);
    e["run_type"] = "iteration";
    e["repetition_index"] = i;
    e["real_time"] = r.wall_ms[i];
    e["cpu_time"] = r.cpu_ms[i];
    out.push_back(std::move(e));
  }
  const std::pair<const char*, double Summary::*> aggregates[] = {
      {"mean", &Summary::mean}, {"median", &Summary::median}, {"stddev", &Summary::stddev}};
  for (const auto& [agg, field] : aggregates) {
    json e = base_entry(r, family, instance);
    e["name"] = r.name + "_" + agg;
    e["run_type"] = "aggregate";
    e["aggregate_name"] = agg;
    e["aggregate_unit"] = "time";
    e["real_time"] = r.wall.*field;
    e["cpu_time"] = r.cpu.*field;
    out.push_back(std::move(e));
  }
}

}  // namespace

std::string to_gbench_json(const RunRecords& run) {
  json benchmarks = json::array();
  std::vector<std::string> families;
  std::vector<size_t> instances;
  for (const Record& r : run.records) {
    auto it = std::find(families.begin(), families.end(), r.family);
    if (it == families.end()) {
      families.push_back(r.family);
      instances.push_back(0);
      it = families.end() - 1;
    }
    const auto f = static_cast<size_t>(it - families.begin());
    if (!r.error.empty()) {
      json e = base_entry(r, f, instances[f]);
      e["run_type"] = "iteration";
      e["error_occurred"] = true;
      e["error_message"] = r.error;
      benchmarks.push_back(std::move(e));
    } else {
      add_entries(r, f, instances[f], benchmarks);
    }
    ++instances[f];
  }
  return json{{"context", gbench_context(run)}, {"benchmarks", benchmarks}}.dump(2) + "\n";
}

}  // namespace footprint::bench
