// The SQLite store: created at the latest schema, old files migrated, newer ones refused, WAL on,
// a run saved whole in one transaction, history filtered by model.
#include "footprint/bench/sqlite_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "footprint/core/error.hpp"
#include "test_support.hpp"

namespace footprint::bench {
namespace {

RunRecords model_run(const std::string& run_id, double ms) {
  RunRecords run;
  run.context.run_id = run_id;
  run.context.date = "2026-11-30T00:00:0" + run_id;
  run.context.git_commit = "abc" + run_id;
  for (const char* m : {"light/vgg19", "light/zfnet512"}) {
    Record r;
    r.name = r.family = std::string("run/") + m;
    ParamRepr p;
    p.name = "model";
    p.type = "model";
    p.source = std::string("../shared/models/") + m + "/model.onnx";
    p.hash = "00112233445566778899aabbccddeeff";
    r.params.push_back(p);
    r.wall_ms = {ms, ms + 1};
    r.cpu_ms = {ms, ms};
    r.wall = summarize(r.wall_ms);
    r.peak_heap_bytes = 1000;
    r.predicted_peak_bytes = 2000;
    run.records.push_back(r);
  }
  return run;
}

std::string pragma(const std::filesystem::path& file, const char* sql) {
  sqlite3* db = nullptr;
  sqlite3_open(file.c_str(), &db);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
  std::string out;
  if (sqlite3_step(s) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

TEST(SqliteStore, SavesRunsAndFiltersHistoryByModel) {
  footprint::testing::TempDir dir;
  const auto file = dir.path() / "runs.sqlite";
  {
    SqliteStore db(file);
    EXPECT_EQ(db.version(), SqliteStore::latest_version());
    db.save(model_run("1", 10));
    db.save(model_run("2", 12));
    const auto all = db.history();
    EXPECT_EQ(all.size(), 4u);
    const auto vgg = db.history("vgg19");
    ASSERT_EQ(vgg.size(), 2u);
    EXPECT_EQ(vgg[0].run_id, "1");
    EXPECT_EQ(vgg[1].run_id, "2");
    EXPECT_DOUBLE_EQ(vgg[1].wall_median_ms, 12.5);
    EXPECT_EQ(vgg[1].git_commit, "abc2");
    EXPECT_EQ(vgg[1].predicted_peak_bytes, 2000u);
  }
  EXPECT_EQ(pragma(file, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(pragma(file, "SELECT count(*) FROM samples"), "8");
  EXPECT_EQ(pragma(file, "SELECT hash FROM params LIMIT 1"), "00112233445566778899aabbccddeeff");
}

TEST(SqliteStore, ARunIsSavedWholeOrNotAtAll) {
  footprint::testing::TempDir dir;
  SqliteStore db(dir.path() / "runs.sqlite");
  db.save(model_run("1", 10));
  // The same run_id again violates UNIQUE after nothing else was written: the transaction rolls
  // back and the file keeps exactly the first run.
  EXPECT_THROW(db.save(model_run("1", 10)), Error);
  EXPECT_EQ(db.history().size(), 2u);
}

TEST(SqliteStore, MigratesOldFilesAndRefusesNewerOnes) {
  footprint::testing::TempDir dir;
  const auto file = dir.path() / "old.sqlite";
  SqliteStore::create_at_version(file, 1);
  EXPECT_EQ(pragma(file, "PRAGMA user_version"), "1");
  {
    SqliteStore db(file);
    EXPECT_EQ(db.version(), SqliteStore::latest_version());
  }
  EXPECT_EQ(pragma(file, "SELECT count(*) FROM sqlite_master WHERE name = 'params_by_hash'"), "1");
  const auto newer = dir.path() / "newer.sqlite";
  SqliteStore::create_at_version(newer, SqliteStore::latest_version());
  {
    sqlite3* db = nullptr;
    sqlite3_open(newer.c_str(), &db);
    sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  EXPECT_THROW(SqliteStore{newer}, Error);
}

TEST(SqliteStore, NotADatabaseIsAnErrorNamingTheFile) {
  footprint::testing::TempDir dir;
  const auto file = dir.path() / "junk.sqlite";
  std::ofstream(file) << "this is not a database, just some text long enough to be a header";
  try {
    SqliteStore db(file);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("junk.sqlite"), std::string::npos) << e.what();
  }
}

// SQLite opens a FIFO read-write (which never blocks) and then waits in its first read forever.
TEST(SqliteStore, OnlyARegularFileIsADatabase) {
  footprint::testing::TempDir dir;
  const auto fifo = dir.path() / "runs.sqlite";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::filesystem::path& p : {fifo, std::filesystem::path("/dev/null"), dir.path()}) {
    try {
      SqliteStore db(p);
      ADD_FAILURE() << p << " was opened as a database";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(p.string() + ": a "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_FALSE(std::filesystem::exists("/dev/null-wal"));
}

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Somebody else's SQLite file (no footprint application_id) is refused and left byte for byte.
TEST(SqliteStore, ForeignDatabasesAreRefusedAndLeftUntouched) {
  footprint::testing::TempDir dir;
  const auto file = dir.path() / "theirs.sqlite";
  {
    sqlite3* db = nullptr;
    sqlite3_open(file.c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE notes (x); INSERT INTO notes VALUES (1)", nullptr, nullptr,
                 nullptr);
    sqlite3_close(db);
  }
  const std::string before = file_bytes(file);
  try {
    SqliteStore db(file);
    FAIL() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              file.string() +
                  ": not a footprint database (application_id 0x0, 1 schema objects, "
                  "user_version 0); footprint writes only to its own files or new ones");
  }
  EXPECT_EQ(file_bytes(file), before);
  EXPECT_EQ(pragma(file, "PRAGMA user_version"), "0");
  EXPECT_FALSE(std::filesystem::exists(file.string() + "-wal"));
  // A file footprint made carries its id.
  const auto ours = dir.path() / "ours.sqlite";
  { SqliteStore db(ours); }
  EXPECT_EQ(pragma(ours, "PRAGMA application_id"), std::to_string(0x46505254));
}

// First writers racing to create one file: the migration runs once, inside the write lock, and
// every connection succeeds (it used to fail with "table runs already exists").
TEST(SqliteStore, ConcurrentFirstWritersAllSucceed) {
  footprint::testing::TempDir dir;
  const auto file = dir.path() / "race.sqlite";
  constexpr int kWriters = 6;
  std::vector<std::string> errors(kWriters);
  std::vector<std::thread> threads;
  threads.reserve(kWriters);
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      try {
        SqliteStore db(file);
        db.save(model_run(std::to_string(i), 1.0 + i));
      } catch (const Error& e) {
        errors[static_cast<size_t>(i)] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(pragma(file, "SELECT count(*) FROM runs"), std::to_string(kWriters));
  EXPECT_EQ(pragma(file, "PRAGMA user_version"), std::to_string(SqliteStore::latest_version()));
}

}  // namespace
}  // namespace footprint::bench
