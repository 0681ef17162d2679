// The sqlite: store's online backup (sqlite_backup.h) and its restore (sqlite_restore.h): a copy
// taken while jobs are pushed, fetched and acked holds every job pushed before it started, is
// private (0600) and opens as a store; a job reserved at backup time is reserved in the copy until
// its reservation ends; bad targets and bad backups are refused naming the problem.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "bulkhead/store/embedded_store.h"
#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/sqlite_restore.h"
#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/make_job.h"
#include "bulkhead/store/testing/test_loop.h"

namespace bulkhead {
namespace {

namespace fs = std::filesystem;

const TimePoint kNow = FromUnixMicros(1'800'000'000'000'000);

// ~5 KiB each, so that a thousand jobs take several backup steps.
JobRecord BigJob(const std::string& jid, const std::string& queue) {
  JobRecord j = MakeJob(jid, queue);
  auto payload = nlohmann::json::parse(j.payload);
  payload["args"] = {std::string(5000, 'x')};
  j.payload = payload.dump();
  return j;
}

class SqliteBackupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bulkhead_backup_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "store.db").string();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  std::unique_ptr<Store> Open(const std::string& path) {
    auto s = OpenStoreFromUrl("sqlite:" + path, loop_.poster(), StoreOptions{});
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  // Pushes `jids` into `queue` in one group commit and waits until all are durable.
  void Push(const std::vector<std::string>& jids, const std::string& queue) {
    size_t done = 0;
    for (const auto& jid : jids) {
      store_->Push(BigJob(jid, queue), [&](Status s) {
        EXPECT_TRUE(s.ok()) << s.ToString();
        ++done;
      });
    }
    loop_.RunUntil([&] { return done == jids.size(); });
  }
  std::optional<JobRecord> Fetch(const std::string& queue) {
    std::optional<Result<std::optional<JobRecord>>> got;
    store_->Fetch({queue}, kNow, [&](Result<std::optional<JobRecord>> r) { got = std::move(r); });
    loop_.RunUntil([&] { return got.has_value(); });
    return got->ok() ? **got : std::nullopt;
  }
  // Starts a backup of store_ to `path`; the result lands in `result`.
  void StartBackup(const std::string& path, std::optional<Result<BackupResult>>& result) {
    ASSERT_NE(store_->backup(), nullptr);
    store_->backup()->Backup(
        path, [this](const BackupProgress& p) { progress_.push_back(p); },
        [&result](Result<BackupResult> r) { result = std::move(r); });
  }
  Status BackupError(const std::string& path) {
    std::optional<Result<BackupResult>> result;
    StartBackup(path, result);
    EXPECT_TRUE(result.has_value()) << "a refused backup answers at once: " << path;
    return result ? result->status() : Status::Internal("no answer");
  }
  std::optional<JobRecord> Find(Store& store, const std::string& jid) {
    std::optional<JobRecord> job;
    bool answered = false;
    store.FindJob(jid, [&](Result<std::optional<JobRecord>> r) {
      answered = true;
      if (r.ok()) job = *r;
    });
    loop_.RunUntil([&] { return answered; });
    return job;
  }

  TestLoop loop_;
  fs::path dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
  std::vector<BackupProgress> progress_;
};

std::vector<std::string> Jids(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

// How many 5 KiB jobs the load of CopyTakenUnderLoadHoldsEveryJobPushedBeforeIt pushes at most
// while the copy runs (about 250 MB; the copy finished after 3,000-5,600 in four runs here): a
// copy that falls behind fails the test there, not the disk.
constexpr int kMaxLoad = 50'000;

TEST_F(SqliteBackupTest, CopyTakenUnderLoadHoldsEveryJobPushedBeforeIt) {
  store_ = Open(path_);
  ASSERT_NE(store_, nullptr);
  const auto kept = Jids("kept-", 1200);  // ~6 MiB: several steps of kPagesPerStep pages
  Push(kept, "kept");
  const std::string copy = (dir_ / "copy.db").string();
  std::optional<Result<BackupResult>> result;
  StartBackup(copy, result);
  // Load while the copy runs: pushes and fetches, answered from the redo log without waiting
  // for their commits, so the store grows faster than a fixed number of pages a step copies; the
  // copy still finishes (each step copies what the store grew by, and more).
  int pushed = 0;
  while (!result.has_value() && pushed < kMaxLoad) {
    Push({"load-" + std::to_string(pushed++)}, "load");
    Fetch("load");
  }
  ASSERT_TRUE(result.has_value()) << "the backup had not finished after " << pushed
                                  << " pushes of 5 KiB under it (the copy falls behind)";
  ASSERT_TRUE(result->ok()) << result->status().ToString();
  EXPECT_EQ((*result)->path, copy);
  EXPECT_GT((*result)->pages, SqliteBackup::kPagesPerStep) << "the copy took a single step";
  EXPECT_FALSE(progress_.empty()) << "no progress reported";
  EXPECT_GT(pushed, 1) << "no PUSH was served while the backup ran";
  struct stat st {};
  ASSERT_EQ(::stat(copy.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ((*result)->bytes, static_cast<int64_t>(st.st_size));
  EXPECT_FALSE(fs::exists(copy + ".tmp"));

  auto restored = Open(copy);
  ASSERT_NE(restored, nullptr);
  for (const auto& jid : kept) {
    auto job = Find(*restored, jid);
    ASSERT_TRUE(job.has_value()) << jid << " pushed before the backup is missing from it";
    EXPECT_EQ(job->state, JobState::kQueued);
  }
}

TEST_F(SqliteBackupTest, JobReservedAtBackupTimeStaysReservedUntilItsReservationEnds) {
  store_ = Open(path_);
  ASSERT_NE(store_, nullptr);
  Push({"held"}, "default");
  auto held = Fetch("default");
  ASSERT_TRUE(held.has_value());
  std::optional<Result<BackupResult>> result;
  const std::string copy = (dir_ / "copy.db").string();
  StartBackup(copy, result);
  loop_.RunUntil([&] { return result.has_value(); });
  ASSERT_TRUE(result->ok()) << result->status().ToString();
  store_.reset();

  auto restored = Open(copy);
  ASSERT_NE(restored, nullptr);
  auto job = Find(*restored, "held");
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->state, JobState::kWorking);
  auto expired = [&](TimePoint at) {
    std::vector<JobRecord> jobs;
    bool answered = false;
    restored->ExpiredReservations(at, 10, [&](Result<std::vector<JobRecord>> r) {
      answered = true;
      if (r.ok()) jobs = *r;
    });
    loop_.RunUntil([&] { return answered; });
    return jobs;
  };
  // What the reservation reaper asks: nothing before reserve_for has passed, the job after.
  EXPECT_TRUE(expired(kNow + std::chrono::seconds(59)).empty());
  auto back = expired(kNow + std::chrono::seconds(61));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].jid, "held");
}

TEST_F(SqliteBackupTest, BadTargetsAreRefusedNamingTheProblem) {
  store_ = Open(path_);
  ASSERT_NE(store_, nullptr);
  auto expect = [&](const std::string& path, const std::string& part) {
    Status s = BackupError(path);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
    if (!path.empty()) {
      EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    }
  };
  expect("", "empty");
  expect("relative/copy.db", "not an absolute path");
  expect((dir_ / "missing" / "copy.db").string(), "No such file or directory");
  expect(dir_.string(), "is a directory");
  expect(path_, "the store's own file");
  expect(path_ + "-wal", "the store's own file");
  std::ofstream(dir_ / "plain") << "x";
  expect((dir_ / "plain" / "copy.db").string(), "plain");
  expect((dir_ / "plain").string(), "is not an SQLite database: refusing to replace it");

  std::optional<Result<BackupResult>> first;
  StartBackup((dir_ / "a.db").string(), first);
  Status second = BackupError((dir_ / "b.db").string());
  EXPECT_EQ(second.code(), StatusCode::kFailedPrecondition) << second.ToString();
  loop_.RunUntil([&] { return first.has_value(); });
  EXPECT_TRUE(first->ok()) << first->status().ToString();
}

TEST_F(SqliteBackupTest, MemoryStoreHasNoBackup) {
  auto memory = OpenStoreFromUrl("memory:", loop_.poster(), StoreOptions{});
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ((*memory)->backup(), nullptr);
}

TEST_F(SqliteBackupTest, RestoreChecksTheBackupAndKeepsTheStoreItReplaces) {
  store_ = Open(path_);
  ASSERT_NE(store_, nullptr);
  Push(Jids("a-", 3), "default");
  Fetch("default");
  std::optional<Result<BackupResult>> result;
  const std::string copy = (dir_ / "copy.db").string();
  StartBackup(copy, result);
  loop_.RunUntil([&] { return result.has_value(); });
  ASSERT_TRUE(result->ok()) << result->status().ToString();
  Push(Jids("after-", 5), "default");  // only in the store the restore replaces
  store_.reset();

  Result<RestoreReport> report = RestoreSqliteStore(copy, path_);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->schema_version, SqliteChangeLog::kSchemaVersion);
  EXPECT_EQ(report->jobs["queued"], 2);
  EXPECT_EQ(report->jobs["working"], 1);
  EXPECT_EQ(report->kept, path_ + ".before-restore");
  EXPECT_TRUE(fs::exists(path_ + ".before-restore"));
  EXPECT_FALSE(fs::exists(path_ + "-commits")) << "the old commit number would refuse the restore";
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  store_ = Open(path_);
  ASSERT_NE(store_, nullptr);
  EXPECT_TRUE(Find(*store_, "a-2").has_value());
  EXPECT_FALSE(Find(*store_, "after-0").has_value());
  store_.reset();
  auto old = Open(path_ + ".before-restore");
  ASSERT_NE(old, nullptr) << "the replaced store no longer opens";
  EXPECT_TRUE(Find(*old, "after-4").has_value());
}

TEST_F(SqliteBackupTest, RestoreRefusesBadBackupsAndLeavesTheStoreAlone) {
  store_ = Open(path_);
  ASSERT_NE(store_, nullptr);
  Push({"only"}, "default");
  store_.reset();
  auto size_before = fs::file_size(path_);
  auto expect = [&](const std::string& backup, StatusCode code, const std::string& part) {
    Result<RestoreReport> r = RestoreSqliteStore(backup, path_);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
    EXPECT_NE(r.status().message().find(part), std::string::npos) << r.status().message();
    EXPECT_EQ(fs::file_size(path_), size_before);
    EXPECT_FALSE(fs::exists(path_ + ".restore"));
    EXPECT_FALSE(fs::exists(path_ + ".before-restore"));
  };
  expect((dir_ / "missing.db").string(), StatusCode::kInvalidArgument, "cannot be read");
  expect(dir_.string(), StatusCode::kInvalidArgument, "is not a file");
  expect(path_, StatusCode::kInvalidArgument, "the store's own file");
  std::ofstream(dir_ / "garbage.db") << std::string(8192, 'g');
  expect((dir_ / "garbage.db").string(), StatusCode::kFailedPrecondition, "garbage.db");
  // A newer bulkhead's store: a schema version this one does not know.
  fs::copy_file(path_, dir_ / "newer.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "newer.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value='99' WHERE key='schema_version'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  expect((dir_ / "newer.db").string(), StatusCode::kFailedPrecondition, "schema version 99");
  EXPECT_EQ(*StoreLockHolder(path_), 0) << "no process holds a closed store";
}

}  // namespace
}  // namespace bulkhead
