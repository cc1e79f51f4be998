#include "record_json.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include "footprint/core/error.hpp"

namespace footprint::bench {

using nlohmann::json;

namespace {

[[noreturn]] void bad_figure(const json& v, const char* key, const char* expected) {
  throw Error(std::string("\"") + key + "\" is " + v.dump() + ", not " + expected);
}

// JSON has one number type; a writer may print a whole count as 2.0 (Google Benchmark's doubles).
double whole_number(const json& v, const char* key, const char* expected) {
  if (!v.is_number()) bad_figure(v, key, expected);
  const double d = v.get<double>();
  if (!std::isfinite(d) || d != std::floor(d)) bad_figure(v, key, expected);
  return d;
}

}  // namespace

std::optional<uint64_t> read_count(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return std::nullopt;
  const json& v = j[key];
  constexpr const char* kExpected = "a count in 0 .. 2^64-1";
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) bad_figure(v, key, kExpected);  // negative
  const double d = whole_number(v, key, kExpected);
  if (d < 0 || d >= 0x1p64) bad_figure(v, key, kExpected);
  return static_cast<uint64_t>(d);
}

std::optional<int64_t> read_signed_count(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return std::nullopt;
  const json& v = j[key];
  constexpr const char* kExpected = "a whole number in int64";
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      bad_figure(v, key, kExpected);
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  const double d = whole_number(v, key, kExpected);
  if (d < -0x1p63 || d >= 0x1p63) bad_figure(v, key, kExpected);
  return static_cast<int64_t>(d);
}

double read_duration(const json& v, const char* key) {
  constexpr const char* kExpected = "a duration (a finite number >= 0)";
  if (!v.is_number()) bad_figure(v, key, kExpected);
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) bad_figure(v, key, kExpected);
  return d;
}

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
  // A figure the record never had (read from a file without it) stays out, rather than coming
  // back as a 0 that compare would take as measured.
  for (const auto& [metric, key] : {std::pair{"peak_heap", "peak_heap_bytes"},
                                    {"net_heap", "net_heap_bytes"},
                                    {"allocations", "allocations"},
                                    {"peak_rss", "peak_rss_bytes"},
                                    {"predicted_peak", "predicted_peak_bytes"}}) {
    if (r.absent.contains(metric)) j["memory"].erase(key);
  }
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

void read_times(const json& j, const char* key, std::vector<double>& samples, Summary& s) {
  if (!j.is_object()) return;
  if (j.contains("samples")) {
    const json& all = j["samples"];
    if (!all.is_array()) bad_figure(all, key, "a list of samples");
    for (const json& v : all) samples.push_back(read_duration(v, key));
  }
  s = summarize(samples);
}

template <class T>
void read_figure(const std::optional<T>& value, const char* metric, T& field, Record& r) {
  if (value) {
    field = *value;
  } else {
    r.absent.insert(metric);
  }
}

}  // namespace

Record record_from_json(const json& j) {
  Record r;
  r.name = j.at("name").get<std::string>();
  r.family = j.value("family", r.name);
  if (j.contains("tags")) r.tags = j["tags"].get<std::vector<std::string>>();
  if (j.contains("params"))
    for (const json& p : j["params"]) r.params.push_back(param_from_json(p));
  if (j.contains("wall_ms")) read_times(j["wall_ms"], "wall_ms", r.wall_ms, r.wall);
  if (j.contains("cpu_ms")) read_times(j["cpu_ms"], "cpu_ms", r.cpu_ms, r.cpu);
  const json m = j.value("memory", json::object());
  read_figure(read_count(m, "peak_heap_bytes"), "peak_heap", r.peak_heap_bytes, r);
  read_figure(read_signed_count(m, "net_heap_bytes"), "net_heap", r.net_heap_bytes, r);
  read_figure(read_count(m, "allocations"), "allocations", r.allocations, r);
  read_figure(read_count(m, "peak_rss_bytes"), "peak_rss", r.peak_rss_bytes, r);
  read_figure(read_count(m, "predicted_peak_bytes"), "predicted_peak", r.predicted_peak_bytes, r);
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
