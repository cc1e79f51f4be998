#pragma once
// Benchmark history in SQLite (schema: docs/BENCH.md). Opening creates or migrates the file
// (PRAGMA user_version is the schema version; each migration runs in its own transaction), and
// turns on WAL so readers never block a run being saved. save() writes one run in one
// transaction: a run is in the file whole or not at all.
//
//   bench::SqliteStore db("runs.sqlite");
//   db.save(run);
//   for (const auto& row : db.history("vgg19")) ...
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "footprint/bench/record.hpp"

struct sqlite3;

namespace footprint::bench {

struct HistoryRow {
  std::string run_id;
  std::string date;
  std::string git_commit;
  std::string benchmark;
  std::string model;  // the model parameter's source path; empty for other benchmarks
  int repetitions = 0;
  double wall_median_ms = 0;
  double wall_min_ms = 0;
  uint64_t peak_heap_bytes = 0;
  uint64_t peak_rss_bytes = 0;
  uint64_t predicted_peak_bytes = 0;
  std::string error;
};

class SqliteStore {
 public:
  // The schema version this build writes.
  static int latest_version();

  // Throws footprint::Error naming the file when it cannot be opened, is not a footprint
  // database, or was written by a newer schema.
  explicit SqliteStore(const std::filesystem::path& path);
  ~SqliteStore();
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  int version() const;
  void save(const RunRecords& run);
  // Oldest first. `model` filters on the model parameter's path (a substring: "vgg19" matches
  // ../shared/models/light/vgg19/model.onnx); empty: every benchmark.
  std::vector<HistoryRow> history(const std::string& model = "") const;

  // Applies migrations up to `target` only (tests build old files with it).
  static void create_at_version(const std::filesystem::path& path, int target);

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

}  // namespace footprint::bench
