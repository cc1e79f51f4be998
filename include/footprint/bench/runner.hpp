#pragma once
// Runs the registered benchmarks and returns records that keep only parameter representations.
//
// Order: cases that use the same memos run next to each other (grouped by their memo keys in
// order of first appearance; registration order otherwise), so each memo is created right before
// its first user and, unless evict is false, evicted right after its last. A case's own
// parameter values are released as soon as its record is made.
//
//   bench::RunRecords r = bench::run(registry, {.repetitions = 5});
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "footprint/bench/record.hpp"
#include "footprint/bench/registry.hpp"

namespace footprint::bench {

struct RunOptions {
  int repetitions = 5;  // timed body runs per case
  int warmup = 1;       // untimed body runs before them
  // A case runs when it has one of these tags (empty: every case).
  std::vector<std::string> tags;
  bool evict = true;               // evict each memo after its last user
  uint64_t memo_budget_bytes = 0;  // LRU bound on live memos (0: none)
  // Restart the kernel's RSS high-water mark (VmHWM) before each case, so each record's
  // peak_rss_bytes is that case's own. Off by default: the reset also clears what getrusage()
  // and /usr/bin/time report for the whole process; without it a record's peak_rss_bytes is
  // the process's high-water mark up to the end of that case.
  bool reset_peak_rss = false;
  // Called after each case (progress lines).
  std::function<void(const Record&)> on_record;
};

// A case as the runner will run it.
struct PlannedCase {
  const Benchmark* benchmark = nullptr;
  Params params;
  std::vector<std::string> memo_keys;
  std::string name;
};

// The cases in run order (tags applied). Exposed for tests and --list.
std::vector<PlannedCase> plan_cases(const Registry& registry, const RunOptions& options);

RunRecords run(const Registry& registry, const RunOptions& options = {});

}  // namespace footprint::bench
