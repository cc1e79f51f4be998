#pragma once
// Records on disk. JSONL: one {"type":"context",...} line per run, then one
// {"type":"benchmark",...} line per case; runs append. Google Benchmark JSON: the fields its
// tools read (context; benchmarks with run_type, iterations, real_time, cpu_time, time_unit, one
// "iteration" entry per repetition plus mean/median/stddev aggregates; its memory manager's
// allocs_per_iter, max_bytes_used, net_heap_growth) and ours beside
// them (params, peak_rss_bytes, predicted_peak_bytes).
#include <filesystem>
#include <string>
#include <vector>

#include "footprint/bench/record.hpp"

namespace footprint::bench {

std::string to_jsonl(const RunRecords& run);
// Appends the run to the file (created when missing).
void append_jsonl(const std::filesystem::path& path, const RunRecords& run);
std::string to_gbench_json(const RunRecords& run);

// Reads every run in a JSONL file, or the one run of a Google Benchmark JSON file (detected by
// its "benchmarks" array). Throws footprint::Error naming the file and line on bad input.
std::vector<RunRecords> read_runs(const std::filesystem::path& path);

}  // namespace footprint::bench
