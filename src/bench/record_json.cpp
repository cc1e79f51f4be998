#include "record_json.hpp"

namespace footprint::bench {

using nlohmann::json;

json to_json(const ParamRepr& p) {
  json j = {{"name", p.name}, {"type", p.type}};
  // Only what the type has: a scalar's value, a payload's description.
  if (!p.value.empty() || p.type == "string") j["value"] = p.value;
  if (!p.dtype.empty()) j["dtype"] = p.dtype;
  if (!p.shape.empty() || p.type == "tensor") j["shape"] = p.shape;
  if (p.bytes != 0 || !p.hash.empty()) j["bytes"] = p.bytes;
  if (!p.hash.empty()) j["hash"] = p.hash;
  if (!p.source.empty()) j["source"] = p.source;
  return j;
}

json to_json(const Summary& s, const std::vector<double>& samples) {
  return {{"min", s.min},
          {"median", s.median},
          {"mean", s.mean},
          {"stddev", s.stddev},
          {"samples", samples}};
}

json to_json(const Record& r) {
  json params = json::array();
  for (const ParamRepr& p : r.params) params.push_back(to_json(p));
  json j = {{"type", "benchmark"},
            {"name", r.name},
            {"family", r.family},
            {"tags", r.tags},
            {"params", params},
            {"repetitions", r.wall_ms.size()},
            {"wall_ms", to_json(r.wall, r.wall_ms)},
            {"cpu_ms", to_json(r.cpu, r.cpu_ms)},
            {"memory",
             {{"peak_heap_bytes", r.peak_heap_bytes},
              {"net_heap_bytes", r.net_heap_bytes},
              {"allocations", r.allocations},
              {"peak_rss_bytes", r.peak_rss_bytes},
              {"predicted_peak_bytes", r.predicted_peak_bytes}}},
            {"counters", r.counters}};
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

json to_json(const RunContext& c) {
  return {{"type", "context"},
          {"run_id", c.run_id},
          {"date", c.date},
          {"host", c.host},
          {"cpu", c.cpu},
          {"num_cpus", c.num_cpus},
          {"memory_bytes", c.memory_bytes},
          {"os", c.os},
          {"compiler", c.compiler},
          {"build_type", c.build_type},
          {"git_commit", c.git_commit},
          {"footprint_version", c.footprint_version},
          {"executable", c.executable}};
}

ParamRepr param_from_json(const json& j) {
  ParamRepr p;
  p.name = j.value("name", "");
  p.type = j.value("type", "");
  p.value = j.value("value", "");
  p.dtype = j.value("dtype", "");
  if (j.contains("shape")) p.shape = j["shape"].get<std::vector<int64_t>>();
  p.bytes = j.value("bytes", uint64_t{0});
  p.hash = j.value("hash", "");
  p.source = j.value("source", "");
  return p;
}

namespace {
void read_times(const json& j, std::vector<double>& samples, Summary& s) {
  if (!j.is_object()) return;
  if (j.contains("samples")) samples = j["samples"].get<std::vector<double>>();
  s = summarize(samples);
}
}  // namespace

Record record_from_json(const json& j) {
  Record r;
  r.name = j.at("name").get<std::string>();
  r.family = j.value("family", r.name);
  if (j.contains("tags")) r.tags = j["tags"].get<std::vector<std::string>>();
  if (j.contains("params"))
    for (const json& p : j["params"]) r.params.push_back(param_from_json(p));
  if (j.contains("wall_ms")) read_times(j["wall_ms"], r.wall_ms, r.wall);
  if (j.contains("cpu_ms")) read_times(j["cpu_ms"], r.cpu_ms, r.cpu);
  const json m = j.value("memory", json::object());
  r.peak_heap_bytes = m.value("peak_heap_bytes", uint64_t{0});
  r.net_heap_bytes = m.value("net_heap_bytes", int64_t{0});
  r.allocations = m.value("allocations", uint64_t{0});
  r.peak_rss_bytes = m.value("peak_rss_bytes", uint64_t{0});
  r.predicted_peak_bytes = m.value("predicted_peak_bytes", uint64_t{0});
  if (j.contains("counters")) r.counters = j["counters"].get<std::map<std::string, double>>();
  r.error = j.value("error", "");
  return r;
}

RunContext context_from_json(const json& j) {
  RunContext c;
  c.run_id = j.value("run_id", "");
  c.date = j.value("date", "");
  c.host = j.value("host", "");
  c.cpu = j.value("cpu", "");
  c.num_cpus = j.value("num_cpus", 0);
  c.memory_bytes = j.value("memory_bytes", uint64_t{0});
  c.os = j.value("os", "");
  c.compiler = j.value("compiler", "");
  c.build_type = j.value("build_type", "");
  c.git_commit = j.value("git_commit", "");
  c.footprint_version = j.value("footprint_version", "");
  c.executable = j.value("executable", "");
  return c;
}

}  // namespace footprint::bench
