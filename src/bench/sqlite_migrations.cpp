#include "sqlite_migrations.hpp"

namespace footprint::bench {

const std::vector<std::string_view>& sqlite_migrations() {
  static const std::vector<std::string_view> m = {
      // 0 -> 1: runs, their benchmarks, the benchmarks' parameter representations and samples.
      R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  date TEXT NOT NULL,
  host TEXT, cpu TEXT, num_cpus INTEGER, memory_bytes INTEGER, os TEXT, compiler TEXT,
  build_type TEXT, git_commit TEXT, footprint_version TEXT, executable TEXT,
  peak_rss_bytes INTEGER
);
CREATE TABLE benchmarks (
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  family TEXT NOT NULL,
  tags TEXT NOT NULL,
  repetitions INTEGER NOT NULL,
  wall_min_ms REAL, wall_median_ms REAL, wall_mean_ms REAL, wall_stddev_ms REAL,
  cpu_min_ms REAL, cpu_median_ms REAL, cpu_mean_ms REAL, cpu_stddev_ms REAL,
  peak_heap_bytes INTEGER, net_heap_bytes INTEGER, allocations INTEGER,
  peak_rss_bytes INTEGER, predicted_peak_bytes INTEGER,
  counters TEXT NOT NULL,
  error TEXT
);
CREATE TABLE params (
  benchmark INTEGER NOT NULL REFERENCES benchmarks(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  value TEXT, dtype TEXT, shape TEXT, bytes INTEGER, hash TEXT, source TEXT,
  PRIMARY KEY (benchmark, position)
);
CREATE TABLE samples (
  benchmark INTEGER NOT NULL REFERENCES benchmarks(id) ON DELETE CASCADE,
  repetition INTEGER NOT NULL,
  wall_ms REAL NOT NULL,
  cpu_ms REAL NOT NULL,
  PRIMARY KEY (benchmark, repetition)
);
CREATE INDEX benchmarks_by_name ON benchmarks(name);
)sql",
      // 1 -> 2: history by model and "which runs saw this exact tensor" need these.
      R"sql(
CREATE INDEX params_by_source ON params(source);
CREATE INDEX params_by_hash ON params(hash);
)sql",
  };
  return m;
}

}  // namespace footprint::bench
