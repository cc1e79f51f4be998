#pragma once
// What a benchmark run leaves behind: per case, the parameters' representations (never the
// objects), timing samples and their summary, and memory figures; per run, the context.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "footprint/bench/param.hpp"

namespace footprint::bench {

struct Summary {
  double min = 0;
  double median = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for one sample
};
Summary summarize(const std::vector<double>& samples);

struct Record {
  std::string name;    // family[param=value,...]
  std::string family;  // the registered benchmark's name
  std::vector<std::string> tags;
  std::vector<ParamRepr> params;
  std::vector<double> wall_ms;  // one sample per repetition
  std::vector<double> cpu_ms;
  Summary wall;
  Summary cpu;
  // Counting allocator, over setUp + repetitions + tearDown, above the heap before setUp.
  uint64_t peak_heap_bytes = 0;
  int64_t net_heap_bytes = 0;  // heap after tearDown minus heap before setUp
  uint64_t allocations = 0;
  // VmHWM at the end of the case, memo creation included: the process's high-water mark so
  // far, or the case's own with RunOptions::reset_peak_rss.
  uint64_t peak_rss_bytes = 0;
  uint64_t predicted_peak_bytes = 0;  // 0: no prediction (not a model benchmark)
  std::map<std::string, double> counters;
  std::string error;  // set when the case threw; timings are then empty
  // The figures (by compare's metric names: "peak_heap", "net_heap", "allocations", "peak_rss",
  // "predicted_peak") a record file did not carry. Their fields above are 0, which nobody
  // measured, so compare refuses a threshold on them. A record the runner makes has none.
  std::set<std::string> absent;
};

struct RunContext {
  std::string run_id;  // UTC start time plus pid: unique per run, orders runs
  std::string date;    // ISO 8601 UTC
  std::string host;
  std::string cpu;
  int num_cpus = 0;
  uint64_t memory_bytes = 0;
  std::string os;
  std::string compiler;
  std::string build_type;
  std::string git_commit;
  std::string footprint_version;
  std::string executable;
};

// Collects the context of this process (CPU model, memory, OS, compiler, build, git commit).
RunContext current_context();

struct RunRecords {
  RunContext context;
  std::vector<Record> records;
  // Highest VmHWM seen over the run's cases: the whole process's peak (also with per-case
  // resets, which would hide it from getrusage()).
  uint64_t peak_rss_bytes = 0;
  uint64_t memo_creations = 0;
  uint64_t memo_evictions = 0;
};

}  // namespace footprint::bench
