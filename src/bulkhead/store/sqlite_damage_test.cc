// A damaged sqlite: store is refused at open, naming the file and what to do, and left as it was;
// a healthy one opens after a clean or an unclean stop with all its committed jobs.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "bulkhead/store/embedded_store.h"
#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/test_loop.h"

namespace bulkhead {
namespace {

namespace fs = std::filesystem;

std::string Jid(int i) {
  char jid[32];
  std::snprintf(jid, sizeof(jid), "job-damage-%05d", i);
  return jid;
}

JobRecord NumberedJob(int i) {
  JobRecord j;
  j.jid = Jid(i);
  j.queue = "default";
  j.jobtype = "noop";
  j.payload = nlohmann::json{{"jid", j.jid},
                             {"jobtype", "noop"},
                             {"queue", "default"},
                             {"args", {i, std::string(200, 'a' + i % 26)}}}
                  .dump();
  j.reserve_for_s = 60;
  return j;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAt(const fs::path& p, uint64_t offset, const std::string& bytes) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f) << p;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

class SqliteDamageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bulkhead_damage_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "store.db").string();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  Result<std::unique_ptr<Store>> Open(const std::string& path, bool salvage = false) {
    StoreOptions options;
    options.salvage_damaged_jobs = salvage;
    return OpenStoreFromUrl("sqlite:" + path, loop_.poster(), options);
  }
  // Opens path_ as store_; fails the test when it is refused.
  void OpenStore() {
    auto s = Open(path_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  // Pushes jobs [from, to), one commit each.
  void Push(int from, int to) {
    for (int i = from; i < to; ++i) {
      std::optional<Status> done;
      store_->Push(NumberedJob(i), [&](Status s) { done = s; });
      loop_.RunUntil([&] { return done.has_value(); });
      ASSERT_TRUE(done->ok()) << done->ToString();
    }
  }
  size_t Enqueued() {
    StoreStats stats;
    store_->Stats([&](Result<StoreStats> r) { stats = *r; });
    return stats.enqueued;
  }
  // Waits until every change answered so far is committed to the database (and not only in the
  // redo log): a signing key is never logged, so its answer comes after the writer's commit of
  // it and of everything before it.
  void AwaitCommitted() {
    std::optional<Status> done;
    store_->signing_keys().Put("test-sync-key", "not a real PEM", [&](Status s) { done = s; });
    loop_.RunUntil([&] { return done.has_value(); });
    ASSERT_TRUE(done->ok()) << done->ToString();
  }
  // The files of the open store as a kill -9 would leave them (everything answered so far is in
  // the database, its WAL or the redo log), copied to `to`.
  void CopyAsKilled(const std::string& to) {
    for (const char* suffix : {"", "-wal", "-commits", "-redo"}) {
      if (fs::exists(path_ + suffix)) fs::copy_file(path_ + suffix, to + suffix);
    }
  }
  // A store at `to` with jobs [0, n), one commit each, that was killed (never closed).
  void MakeKilledStore(const std::string& to, int n) {
    OpenStore();
    for (int i = 0; i < n; ++i) {
      Push(i, i + 1);
      AwaitCommitted();
    }
    CopyAsKilled(to);
    store_.reset();
  }
  // Checks that opening `path` is refused with a message naming it and every piece of `expected`,
  // and that the files are left byte for byte as they were.
  void ExpectRefused(const std::string& path, const std::vector<std::string>& expected,
                     bool salvage = false) {
    std::map<std::string, std::string> before;
    for (const char* suffix : {"", "-wal", "-commits", "-redo"}) {
      if (fs::exists(path + suffix)) before[suffix] = ReadFile(path + suffix);
    }
    auto s = Open(path, salvage);
    ASSERT_FALSE(s.ok()) << "opened a damaged store";
    EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition) << s.status().ToString();
    const std::string m = s.status().message();
    EXPECT_EQ(m.rfind("store file " + path + " ", 0), 0u) << m;
    for (const auto& e : expected) EXPECT_NE(m.find(e), std::string::npos) << e << " in " << m;
    std::map<std::string, std::string> after;
    for (const char* suffix : {"", "-wal", "-commits", "-redo"}) {
      if (fs::exists(path + suffix)) after[suffix] = ReadFile(path + suffix);
    }
    for (const auto& [suffix, bytes] : after) {
      EXPECT_TRUE(before.contains(suffix) && before[suffix] == bytes)
          << "a refused store was changed: " << path << suffix;
    }
    EXPECT_EQ(before.size(), after.size()) << "a refused store lost a file";
  }
  void Sql(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  // The rows `sql` selects from the file at `path`, their columns joined by spaces.
  std::vector<std::string> Rows(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::vector<std::string> rows;
    while (st != nullptr && sqlite3_step(st) == SQLITE_ROW) {
      std::string row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
        row += (c ? " " : "") + std::string(text ? text : "NULL");
      }
      rows.push_back(row);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rows;
  }
  // FETCHes from "default" until it is empty; returns the jobs handed out.
  std::vector<JobRecord> FetchAll() {
    std::vector<JobRecord> jobs;
    for (;;) {
      std::optional<Result<std::optional<JobRecord>>> answer;
      store_->Fetch({"default"}, TimePoint{},
                    [&](Result<std::optional<JobRecord>> r) { answer = std::move(r); });
      // A queued job's payload is read back from the file (queue_slot.h): answered later.
      loop_.RunUntil([&] { return answer.has_value(); });
      EXPECT_TRUE(answer->ok()) << answer->status().ToString();
      if (!answer->ok() || !**answer) return jobs;
      jobs.push_back(***answer);
    }
  }

  TestLoop loop_;
  fs::path dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(SqliteDamageTest, APathThatDoesNotExistIsANewStoreWithItsSchemaInPlace) {
  OpenStore();
  EXPECT_EQ(Enqueued(), 0u);
  // The file holds the schema before anything is committed: bulkhead leaves no empty file.
  EXPECT_GT(fs::file_size(path_), 0u);
  EXPECT_FALSE(fs::exists(path_ + ".new"));
  Push(0, 3);
  store_.reset();
  OpenStore();
  EXPECT_EQ(Enqueued(), 3u);
}

TEST_F(SqliteDamageTest, AnExistingEmptyFileIsRefused) {
  std::ofstream(path_).close();
  ExpectRefused(path_, {"is empty (0 bytes)", "restore it from a backup",
                        "delete " + path_ + " and start again"});
  EXPECT_EQ(fs::file_size(path_), 0u);
}

TEST_F(SqliteDamageTest, AFileThatIsNotADatabaseIsRefused) {
  std::ofstream(path_) << std::string(8192, 'x');
  ExpectRefused(path_,
                {"is not a bulkhead store", "file is not a database", "restore it from a backup"});
}

TEST_F(SqliteDamageTest, ADatabaseWithoutBulkheadsSchemaIsRefused) {
  Sql(path_, "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES('mine')");
  ExpectRefused(path_, {"without bulkhead's tables", "another path"});
}

TEST_F(SqliteDamageTest, AWriteAheadLogWithoutItsStoreIsRefused) {
  MakeKilledStore((dir_ / "killed.db").string(), 3);
  std::string orphan = (dir_ / "killed.db").string();
  ASSERT_GT(fs::file_size(orphan + "-wal"), 0u);
  fs::remove(orphan);
  auto s = Open(orphan);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("does not exist but its write-ahead log " + orphan + "-wal"),
            std::string::npos)
      << s.status().message();
  EXPECT_FALSE(fs::exists(orphan)) << "a new store was created beside the old log";
}

TEST_F(SqliteDamageTest, AfterKillAHealthyStoreOpensWithEveryCommittedJob) {
  std::string killed = (dir_ / "killed.db").string();
  MakeKilledStore(killed, 50);
  ASSERT_GT(fs::file_size(killed + "-wal"), 0u);
  auto s = Open(killed);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  StoreStats stats;
  (*s)->Stats([&](Result<StoreStats> r) { stats = *r; });
  EXPECT_EQ(stats.enqueued, 50u);
}

// Damage that loading does not read (a page of a table bulkhead does not use) is found by the
// integrity check, which runs after an unclean stop only.
TEST_F(SqliteDamageTest, AnUncleanStopRunsTheIntegrityCheckAndACleanOneDoesNot) {
  OpenStore();
  Push(0, 5);
  store_.reset();
  Sql(path_, "CREATE TABLE extra(x); INSERT INTO extra VALUES('a'), ('b');");
  int64_t page = 0;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_schema WHERE name='extra'", -1,
                                 &st, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    page = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  ASSERT_GT(page, 1);
  // Not a b-tree page type.
  WriteAt(path_, (page - 1) * 4096, std::string(1, '\x00'));

  Sql(path_, "UPDATE meta SET value='1' WHERE key='clean_shutdown'");
  OpenStore();  // a clean stop: no check, starts at once
  EXPECT_EQ(Enqueued(), 5u);
  store_.reset();

  Sql(path_, "UPDATE meta SET value='0' WHERE key='clean_shutdown'");
  ExpectRefused(path_, {"is damaged", "quick_check after an unclean stop",
                        "Restore it from a backup", ".recover"});
}

TEST_F(SqliteDamageTest, ACleanStopIsRecordedAndAKillIsNot) {
  OpenStore();
  Push(0, 1);
  std::string killed = (dir_ / "killed.db").string();
  CopyAsKilled(killed);
  store_.reset();  // a clean stop
  auto flag = [](const std::string& path) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='clean_shutdown'", -1, &st, nullptr);
    std::string value = sqlite3_step(st) == SQLITE_ROW
                            ? reinterpret_cast<const char*>(sqlite3_column_text(st, 0))
                            : "";
    sqlite3_finalize(st);
    sqlite3_close(db);
    return value;
  };
  EXPECT_EQ(flag(path_), "1");
  EXPECT_EQ(flag(killed), "0");
}

TEST_F(SqliteDamageTest, ADamagedWriteAheadLogThatLostCommitsIsRefused) {
  std::string killed = (dir_ / "killed.db").string();
  MakeKilledStore(killed, 60);
  // Garbage inside a frame in the middle of the WAL: SQLite's replay stops at the frame whose
  // checksum fails and drops every later commit.
  uint64_t wal_size = fs::file_size(killed + "-wal");
  ASSERT_GT(wal_size, 32u + 20 * (4096 + 24));
  WriteAt(killed + "-wal", 32 + 10 * (4096 + 24) + 24 + 1000, std::string(100, '\x5a'));
  ExpectRefused(killed, {"lost", "acknowledged commits", killed + "-commits", "accept the loss",
                         "delete " + killed + "-commits"});
  // Accepting the loss: without the side file it opens with what SQLite could replay, and then
  // commits the redo log's records after it: this small redo log was never emptied (that waits
  // for kRedoResetBytes), so it still holds the changes of the lost commits. Without the redo
  // log (emptied), the lost commits are lost.
  fs::remove(killed + "-commits");
  std::string no_redo = (dir_ / "no-redo.db").string();
  for (const char* suffix : {"", "-wal"}) fs::copy_file(killed + suffix, no_redo + suffix);
  for (const auto& [path, expected] : {std::pair{killed, 60u}, std::pair{no_redo, 0u}}) {
    auto s = Open(path);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    StoreStats stats;
    (*s)->Stats([&](Result<StoreStats> r) { stats = *r; });
    if (expected > 0) {
      EXPECT_EQ(stats.enqueued, expected) << path;
    } else {
      EXPECT_LT(stats.enqueued, 60u) << path;
    }
  }
}

TEST_F(SqliteDamageTest, ARemovedWriteAheadLogIsLostCommits) {
  std::string killed = (dir_ / "killed.db").string();
  MakeKilledStore(killed, 10);
  fs::remove(killed + "-wal");
  ExpectRefused(killed, {"lost", "acknowledged commits"});
}

TEST_F(SqliteDamageTest, PayloadsThatAreNotJobsAreRefusedNamingTheRows) {
  OpenStore();
  Push(0, 10);
  store_.reset();
  Sql(path_, "UPDATE jobs SET payload = 'garbage{' WHERE jid = '" + Jid(2) +
                 "';"
                 "UPDATE jobs SET payload = '[1,2]' WHERE jid = '" +
                 Jid(4) +
                 "';"
                 "UPDATE jobs SET payload = '{\"jid\":\"someone-else\"}' WHERE jid = '" +
                 Jid(6) +
                 "';"
                 "UPDATE jobs SET state = 9 WHERE jid = '" +
                 Jid(8) + "';");
  ExpectRefused(path_, {"holds 4 damaged jobs", "jid \"" + Jid(2) + "\"): payload is not a JSON",
                        "jid \"" + Jid(4) + "\"): payload is not a JSON",
                        "jid \"" + Jid(6) + "\"): payload's jid is not the row's",
                        "jid \"" + Jid(8) + "\"): unknown state 9", "Restore the store",
                        "--salvage-damaged-jobs", "damaged_jobs"});
}

TEST_F(SqliteDamageTest, InvalidUtf8InAPayloadIsDamage) {
  OpenStore();
  Push(0, 2);
  store_.reset();
  Sql(path_,
      "UPDATE jobs SET payload = CAST(X'7B226A6964223A226A6F622D64616D6167652D30303030"
      "31222C2261223A22FF227D' AS TEXT) WHERE jid = '" +
          Jid(1) + "'");
  ExpectRefused(path_, {"holds 1 damaged jobs", Jid(1)});
}

TEST_F(SqliteDamageTest, SalvageMovesDamagedRowsAsideAndServesTheOthers) {
  OpenStore();
  Push(0, 10);
  store_.reset();
  Sql(path_,
      "UPDATE jobs SET payload = 'garbage{' WHERE jid IN ('" + Jid(3) + "', '" + Jid(7) + "')");
  auto s = Open(path_, /*salvage=*/true);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  store_ = std::move(*s);
  EXPECT_EQ(Enqueued(), 8u);
  // Every job served is the one pushed.
  for (int served = 0; served < 8; ++served) {
    std::optional<JobRecord> job;
    bool answered = false;
    store_->Fetch({"default"}, TimePoint{}, [&](Result<std::optional<JobRecord>> r) {
      answered = true;
      ASSERT_TRUE(r.ok());
      job = *r;
    });
    // A queued job's payload is read back from the file (queue_slot.h): answered later.
    loop_.RunUntil([&] { return answered; });
    ASSERT_TRUE(job.has_value());
    int i = std::stoi(job->jid.substr(job->jid.size() - 5));
    EXPECT_EQ(job->payload, NumberedJob(i).payload);
  }
  store_.reset();
  EXPECT_EQ(Rows(path_, "SELECT jid, payload, reason FROM damaged_jobs ORDER BY id"),
            (std::vector<std::string>{Jid(3) + " garbage{ payload is not a JSON object",
                                      Jid(7) + " garbage{ payload is not a JSON object"}));
  // The store opens normally from now on.
  OpenStore();
  EXPECT_EQ(Enqueued(), 0u);  // all eight were fetched (and are reserved)
}

// Past the payloads checked at start (the first few queued rows by id), a damaged queued payload
// is found when FETCH first reads it: moved to damaged_jobs then, never handed to a worker, and
// the FETCH answered with the next job.
TEST_F(SqliteDamageTest, ADamagedQueuedPayloadPastTheStartSampleIsSetAsideWhenRead) {
  OpenStore();
  Push(0, 20);
  store_.reset();
  Sql(path_, "UPDATE jobs SET payload = 'garbage{' WHERE jid = '" + Jid(15) +
                 "';"
                 "UPDATE jobs SET payload = '{\"jid\":\"someone-else\"}' WHERE jid = '" +
                 Jid(19) + "';");
  auto log = std::make_unique<SqliteChangeLog>(path_, loop_.poster(), "process");
  log->set_start_sample(10);  // rows 1..10 (jobs 0..9) are checked at start, the others when read
  // The writer's transaction stays open (the FETCHes' reservations in it) when a damaged row is
  // read: the row is moved aside in a transaction of its own, after that one's commit.
  log->set_redo_gather_delay(std::chrono::seconds(60));
  store_ = std::make_unique<EmbeddedStore>("sqlite", std::move(log));
  ASSERT_TRUE(store_->Open().ok()) << "refused for damage it does not check at start";
  EXPECT_EQ(Enqueued(), 20u);
  // A lookup by jid reads the row too: not found, and no longer counted.
  std::optional<Result<std::optional<JobRecord>>> found;
  store_->FindJob(Jid(15), [&](Result<std::optional<JobRecord>> r) { found = std::move(r); });
  loop_.RunUntil([&] { return found.has_value(); });
  ASSERT_TRUE(found->ok()) << found->status().ToString();
  EXPECT_FALSE(found->value().has_value());
  EXPECT_EQ(Enqueued(), 19u);
  std::vector<JobRecord> served = FetchAll();
  ASSERT_EQ(served.size(), 18u);
  for (size_t k = 0; k < served.size(); ++k) {
    int i = static_cast<int>(k < 15 ? k : k + 1);  // 15 and 19 are never handed out
    EXPECT_EQ(served[k].jid, Jid(i));
    EXPECT_EQ(served[k].payload, NumberedJob(i).payload) << served[k].jid;
  }
  EXPECT_EQ(Enqueued(), 0u);
  store_.reset();
  EXPECT_EQ(Rows(path_, "SELECT jid, payload, reason FROM damaged_jobs ORDER BY id"),
            (std::vector<std::string>{
                Jid(15) + " garbage{ payload is not a JSON object",
                Jid(19) + " {\"jid\":\"someone-else\"} payload's jid is not the row's"}));
  EXPECT_EQ(
      Rows(path_, ("SELECT count(*) FROM jobs WHERE jid IN ('" + Jid(15) + "', '" + Jid(19) + "')")
                      .c_str()),
      std::vector<std::string>{"0"});
  // Nothing damaged is left: the store opens with its 18 reservations.
  OpenStore();
  StoreStats stats;
  store_->Stats([&](Result<StoreStats> r) { stats = *r; });
  EXPECT_EQ(stats.working, 18u);
}

}  // namespace
}  // namespace bulkhead
