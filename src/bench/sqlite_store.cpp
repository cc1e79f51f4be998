#include "footprint/bench/sqlite_store.hpp"

#include <sqlite3.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"
#include "sqlite_migrations.hpp"

namespace footprint::bench {
namespace {

// A prepared statement, finalized with its scope; binds by position from 1.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::string& file) : db_(db), file_(file) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail();
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v) {
    check(sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& bind(int i, double v) {
    check(sqlite3_bind_double(stmt_, i, v));
    return *this;
  }
  Statement& bind(int i, int64_t v) {
    check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Statement& bind(int i, uint64_t v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  // True while rows come back.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail();
    return false;
  }
  void run() {
    while (step()) {
    }
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) fail();
  }
  [[noreturn]] void fail() const { throw Error(file_ + ": sqlite: " + sqlite3_errmsg(db_)); }
  sqlite3* db_;
  std::string file_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const std::string& sql, const std::string& file) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    const std::string m = msg ? msg : "unknown error";
    sqlite3_free(msg);
    throw Error(file + ": sqlite: " + m);
  }
}

int user_version(sqlite3* db, const std::string& file) {
  Statement s(db, "PRAGMA user_version", file);
  return s.step() ? static_cast<int>(s.integer(0)) : 0;
}

// PRAGMA application_id of every file footprint writes ("FPRT"): a SQLite file without it is
// somebody else's, and footprint adds no tables to it.
constexpr int64_t kApplicationId = 0x46505254;
constexpr int kBusyTimeoutMs = 5000;

int64_t application_id(sqlite3* db, const std::string& file) {
  Statement s(db, "PRAGMA application_id", file);
  return s.step() ? s.integer(0) : 0;
}

int64_t count_rows(sqlite3* db, const char* sql, const std::string& file) {
  Statement s(db, sql, file);
  return s.step() ? s.integer(0) : 0;
}

// Whether the file is footprint's: its application_id; or a new, empty file; or one written
// before footprint set the id (every table of the first migration there, a version it knows).
// Anything else is refused before a byte of it changes. Returns whether the id must be set.
bool check_ownership(sqlite3* db, const std::string& file) {
  const int64_t id = application_id(db, file);
  if (id == kApplicationId) return false;
  const int64_t objects = count_rows(db, "SELECT count(*) FROM sqlite_master", file);
  const int version = user_version(db, file);
  if (id == 0 && objects == 0 && version == 0) return true;
  const int64_t ours = count_rows(db,
                                  "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                                  "name IN ('runs', 'benchmarks', 'params', 'samples')",
                                  file);
  if (id == 0 && ours == 4 && version >= 1 &&
      version <= static_cast<int>(sqlite_migrations().size()))
    return true;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<long long>(id));
  throw Error(file + ": not a footprint database (application_id " + hex + ", " +
              std::to_string(objects) + " schema objects, user_version " + std::to_string(version) +
              "); footprint writes only to its own files or new ones");
}

// Each migration and its version bump commit together: a crash leaves the previous version. The
// version is read inside the write transaction, so concurrent first writers serialise: the
// first migrates, the others find the schema done.
void migrate(sqlite3* db, int target, const std::string& file) {
  const auto& steps = sqlite_migrations();
  while (true) {
    exec(db, "BEGIN IMMEDIATE", file);
    try {
      const bool claim = check_ownership(db, file);
      const int have = user_version(db, file);
      if (have > static_cast<int>(steps.size()))
        throw Error(file + ": schema version " + std::to_string(have) +
                    " was written by a newer footprint (this one knows up to " +
                    std::to_string(steps.size()) + ")");
      if (claim) exec(db, "PRAGMA application_id = " + std::to_string(kApplicationId), file);
      if (have >= target) {
        exec(db, "COMMIT", file);
        return;
      }
      exec(db, std::string(steps[static_cast<size_t>(have)]), file);
      exec(db, "PRAGMA user_version = " + std::to_string(have + 1), file);
      exec(db, "COMMIT", file);
    } catch (...) {
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
}

// Switching a new file to WAL takes an exclusive lock, and SQLite answers SQLITE_BUSY at once,
// without the busy handler, while another first writer is switching it too (the handler could
// deadlock there). So the switch is retried for as long as the busy timeout would wait.
void enable_wal(sqlite3* db, const std::string& file) {
  constexpr int kRetryMs = 10;
  for (int waited = 0;; waited += kRetryMs) {
    const int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || waited >= kBusyTimeoutMs)
      throw Error(file + ": sqlite: " + sqlite3_errmsg(db));
    sqlite3_sleep(kRetryMs);
  }
}

sqlite3* open_db(const std::filesystem::path& path) {
  // SQLite would open a FIFO and wait in its first read, or write its journal beside a device.
  (void)regular_file_exists(path);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    const std::string m = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw Error(path.string() + ": sqlite: " + m);
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);  // another run saving: wait rather than fail
  return db;
}

int64_t insert_run(sqlite3* db, const RunRecords& run, const std::string& file) {
  const RunContext& c = run.context;
  Statement s(db,
              "INSERT INTO runs (run_id, date, host, cpu, num_cpus, memory_bytes, os, compiler, "
              "build_type, git_commit, footprint_version, executable, peak_rss_bytes) "
              "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
              file);
  s.bind(1, c.run_id).bind(2, c.date).bind(3, c.host).bind(4, c.cpu).bind(5, c.num_cpus);
  s.bind(6, c.memory_bytes).bind(7, c.os).bind(8, c.compiler).bind(9, c.build_type);
  s.bind(10, c.git_commit).bind(11, c.footprint_version).bind(12, c.executable);
  s.bind(13, run.peak_rss_bytes).run();
  return sqlite3_last_insert_rowid(db);
}

int64_t insert_benchmark(sqlite3* db, int64_t run, const Record& r, const std::string& file) {
  Statement s(db,
              "INSERT INTO benchmarks (run, name, family, tags, repetitions, wall_min_ms, "
              "wall_median_ms, wall_mean_ms, wall_stddev_ms, cpu_min_ms, cpu_median_ms, "
              "cpu_mean_ms, cpu_stddev_ms, peak_heap_bytes, net_heap_bytes, allocations, "
              "peak_rss_bytes, predicted_peak_bytes, counters, error) "
              "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
              file);
  s.bind(1, run).bind(2, r.name).bind(3, r.family).bind(4, nlohmann::json(r.tags).dump());
  s.bind(5, static_cast<int64_t>(r.wall_ms.size()));
  s.bind(6, r.wall.min).bind(7, r.wall.median).bind(8, r.wall.mean).bind(9, r.wall.stddev);
  s.bind(10, r.cpu.min).bind(11, r.cpu.median).bind(12, r.cpu.mean).bind(13, r.cpu.stddev);
  s.bind(14, r.peak_heap_bytes).bind(15, r.net_heap_bytes).bind(16, r.allocations);
  s.bind(17, r.peak_rss_bytes).bind(18, r.predicted_peak_bytes);
  s.bind(19, nlohmann::json(r.counters).dump()).bind(20, r.error).run();
  return sqlite3_last_insert_rowid(db);
}

void insert_details(sqlite3* db, int64_t id, const Record& r, const std::string& file) {
  Statement p(db,
              "INSERT INTO params (benchmark, position, name, type, value, dtype, shape, bytes, "
              "hash, source) VALUES (?,?,?,?,?,?,?,?,?,?)",
              file);
  for (size_t i = 0; i < r.params.size(); ++i) {
    const ParamRepr& v = r.params[i];
    p.bind(1, id).bind(2, static_cast<int64_t>(i)).bind(3, v.name).bind(4, v.type);
    p.bind(5, v.value).bind(6, v.dtype).bind(7, nlohmann::json(v.shape).dump());
    p.bind(8, v.bytes).bind(9, v.hash).bind(10, v.source).run();
  }
  Statement s(db, "INSERT INTO samples (benchmark, repetition, wall_ms, cpu_ms) VALUES (?,?,?,?)",
              file);
  for (size_t i = 0; i < r.wall_ms.size(); ++i) {
    s.bind(1, id).bind(2, static_cast<int64_t>(i)).bind(3, r.wall_ms[i]);
    s.bind(4, i < r.cpu_ms.size() ? r.cpu_ms[i] : 0.0).run();
  }
}

}  // namespace

int SqliteStore::latest_version() {
  return static_cast<int>(sqlite_migrations().size());
}

SqliteStore::SqliteStore(const std::filesystem::path& path) : path_(path), db_(open_db(path)) {
  try {
    // Refused before WAL mode, which itself changes the file.
    check_ownership(db_, path_.string());
    // WAL: a reader (history) never blocks a run being saved, nor the other way round.
    enable_wal(db_, path_.string());
    exec(db_, "PRAGMA foreign_keys = ON", path_.string());
    migrate(db_, latest_version(), path_.string());
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

SqliteStore::~SqliteStore() {
  sqlite3_close(db_);
}

int SqliteStore::version() const {
  return user_version(db_, path_.string());
}

void SqliteStore::create_at_version(const std::filesystem::path& path, int target) {
  sqlite3* db = open_db(path);
  try {
    migrate(db, target, path.string());
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
  sqlite3_close(db);
}

void SqliteStore::save(const RunRecords& run) {
  const std::string file = path_.string();
  exec(db_, "BEGIN IMMEDIATE", file);
  try {
    const int64_t run_row = insert_run(db_, run, file);
    for (const Record& r : run.records)
      insert_details(db_, insert_benchmark(db_, run_row, r, file), r, file);
    exec(db_, "COMMIT", file);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<HistoryRow> SqliteStore::history(const std::string& model) const {
  Statement s(db_,
              "SELECT r.run_id, r.date, r.git_commit, b.name, COALESCE(p.source, ''), "
              "b.repetitions, b.wall_median_ms, b.wall_min_ms, b.peak_heap_bytes, "
              "b.peak_rss_bytes, b.predicted_peak_bytes, COALESCE(b.error, '') "
              "FROM benchmarks b JOIN runs r ON b.run = r.id "
              "LEFT JOIN params p ON p.benchmark = b.id AND p.type = 'model' "
              "WHERE ?1 = '' OR instr(p.source, ?1) > 0 "
              "ORDER BY r.date, r.id, b.id",
              path_.string());
  s.bind(1, model);
  std::vector<HistoryRow> rows;
  while (s.step()) {
    HistoryRow h;
    h.run_id = s.text(0);
    h.date = s.text(1);
    h.git_commit = s.text(2);
    h.benchmark = s.text(3);
    h.model = s.text(4);
    h.repetitions = static_cast<int>(s.integer(5));
    h.wall_median_ms = s.real(6);
    h.wall_min_ms = s.real(7);
    h.peak_heap_bytes = static_cast<uint64_t>(s.integer(8));
    h.peak_rss_bytes = static_cast<uint64_t>(s.integer(9));
    h.predicted_peak_bytes = static_cast<uint64_t>(s.integer(10));
    h.error = s.text(11);
    rows.push_back(std::move(h));
  }
  return rows;
}

}  // namespace footprint::bench
