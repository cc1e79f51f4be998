// Reads runs back from JSONL or Google Benchmark JSON (ours or Google Benchmark's own).
#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "footprint/bench/record_io.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"
#include "record_json.hpp"

namespace footprint::bench {
namespace {

using nlohmann::json;

// Google Benchmark's units; any other is an error, not a guess that would pass a time check.
double to_ms(double value, const std::string& unit, const std::string& benchmark) {
  if (unit == "ns") return value / 1e6;
  if (unit == "us") return value / 1e3;
  if (unit == "ms") return value;
  if (unit == "s") return value * 1e3;
  throw Error("benchmark " + in_quotes(benchmark) + ": unknown time_unit " + in_quotes(unit) +
              " (ns, us, ms or s)");
}

// A repetition's time: required, since a missing one read as 0 is a "-100 %" that passes; and so
// is its unit, which Google Benchmark always writes (a guess would scale every time).
double time_of(const json& e, const char* key, const std::string& benchmark) {
  if (!e.contains(key) || !e[key].is_number()) {
    throw Error("benchmark " + in_quotes(benchmark) + ": an iteration without a numeric \"" + key +
                "\"");
  }
  if (!e.contains("time_unit") || !e["time_unit"].is_string()) {
    throw Error("benchmark " + in_quotes(benchmark) + ": an iteration without a \"time_unit\"");
  }
  return to_ms(read_duration(e[key], key), e["time_unit"].get<std::string>(), benchmark);
}

// The figures no iteration of a record carried stay in Record::absent.
template <class T, class Merge>
void merge_figure(const std::optional<T>& value, const char* metric, T& field, Record& r,
                  Merge merge) {
  if (!value) return;
  field = r.absent.erase(metric) > 0 ? *value : merge(field, *value);
}

void read_memory(const json& e, Record& r) {
  const auto larger = [](auto a, auto b) { return std::max(a, b); };
  const auto latest = [](auto, auto b) { return b; };
  merge_figure(read_count(e, "max_bytes_used"), "peak_heap", r.peak_heap_bytes, r, larger);
  merge_figure(read_count(e, "allocs_per_iter"), "allocations", r.allocations, r, larger);
  merge_figure(read_signed_count(e, "net_heap_growth"), "net_heap", r.net_heap_bytes, r, latest);
  merge_figure(read_count(e, "peak_rss_bytes"), "peak_rss", r.peak_rss_bytes, r, larger);
  merge_figure(read_count(e, "predicted_peak_bytes"), "predicted_peak", r.predicted_peak_bytes, r,
               latest);
}

// One record per run_name: the "iteration" entries are its repetitions.
RunRecords gbench_run(const json& doc) {
  RunRecords run;
  const json ctx = doc.value("context", json::object());
  run.context = context_from_json(ctx.value("footprint", json::object()));
  if (run.context.date.empty()) run.context.date = ctx.value("date", "");
  if (run.context.host.empty()) run.context.host = ctx.value("host_name", "");
  std::map<std::string, size_t> index;
  for (const json& e : doc.at("benchmarks")) {
    if (e.value("run_type", "iteration") != "iteration") continue;
    const std::string name = e.value("run_name", e.value("name", ""));
    auto [it, fresh] = index.emplace(name, run.records.size());
    if (fresh) {
      Record r;
      r.name = name;
      r.family = name;
      r.absent = {"peak_heap", "allocations", "net_heap", "peak_rss", "predicted_peak"};
      if (e.contains("params"))
        for (const json& p : e["params"]) r.params.push_back(param_from_json(p));
      run.records.push_back(std::move(r));
    }
    Record& r = run.records[it->second];
    if (e.value("error_occurred", false)) {
      r.error = e.value("error_message", "error");
      continue;
    }
    r.wall_ms.push_back(time_of(e, "real_time", name));
    r.cpu_ms.push_back(time_of(e, "cpu_time", name));
    try {
      read_memory(e, r);
    } catch (const Error& err) {
      throw Error("benchmark " + in_quotes(name) + ": " + err.what());
    }
  }
  for (Record& r : run.records) {
    r.wall = summarize(r.wall_ms);
    r.cpu = summarize(r.cpu_ms);
  }
  return run;
}

std::vector<RunRecords> jsonl_runs(std::istream& in, const std::string& file) {
  std::vector<RunRecords> runs;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw Error(file + ": line " + std::to_string(line_no) + ": expected a JSON object");
    const std::string type = j.value("type", "");
    try {
      if (type == "context") {
        runs.emplace_back();
        runs.back().context = context_from_json(j);
        runs.back().peak_rss_bytes = j.value("peak_rss_bytes", uint64_t{0});
      } else if (type == "benchmark") {
        if (runs.empty()) runs.emplace_back();  // records without a context line
        runs.back().records.push_back(record_from_json(j));
      } else {
        throw Error("expected \"type\" to be \"context\" or \"benchmark\"");
      }
    } catch (const json::exception& e) {
      throw Error(file + ": line " + std::to_string(line_no) + ": " + e.what());
    } catch (const Error& e) {
      throw Error(file + ": line " + std::to_string(line_no) + ": " + e.what());
    }
  }
  return runs;
}

}  // namespace

std::vector<RunRecords> read_runs(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  // A whole-file object with "benchmarks" is Google Benchmark's format; anything else is JSONL.
  const json doc = json::parse(text, nullptr, false);
  if (!doc.is_discarded() && doc.is_object() && doc.contains("benchmarks")) {
    RunRecords run;
    try {
      run = gbench_run(doc);
    } catch (const json::exception& e) {
      throw Error(path.string() + ": " + e.what());
    } catch (const Error& e) {
      throw Error(path.string() + ": " + e.what());
    }
    if (run.records.empty()) throw Error(path.string() + ": no benchmark records");
    return {run};
  }
  std::istringstream lines(text);
  std::vector<RunRecords> runs = jsonl_runs(lines, path.string());
  if (runs.empty()) throw Error(path.string() + ": no benchmark records");
  return runs;
}

}  // namespace footprint::bench
