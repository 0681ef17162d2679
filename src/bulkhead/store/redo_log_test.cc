// The redo log (redo_log.h, change_codec.h) and the sqlite store's use of it: what a kill -9
// leaves in it is committed at the next open, and a damaged one refuses the start.
#include "bulkhead/store/redo_log.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "bulkhead/store/change_codec.h"
#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/testing/make_job.h"
#include "bulkhead/store/testing/test_loop.h"
#include "bulkhead/store/testing/writer_post_gate.h"

namespace bulkhead {
namespace {

namespace fs = std::filesystem;

// One change of every kind, every field its kind uses set.
std::vector<Change> EveryKind() {
  using K = Change::Kind;
  std::vector<Change> out;
  Change insert(K::kInsertJob);
  insert.id = 7;
  insert.job = MakeJob("job-codec-1", "mail");
  insert.job.state = JobState::kScheduled;
  insert.job.score = -5;
  insert.job.enqueued_us = 1'700'000'000'000'000;
  insert.job.reserve_for_s = 600;
  out.push_back(insert);
  Change update(K::kUpdateJob);
  update.id = 7;
  update.job = insert.job;
  update.job.jid.clear();  // not encoded for an update
  update.job.jobtype.clear();
  update.job.reserve_for_s = JobRecord{}.reserve_for_s;
  update.job.state = JobState::kRetry;
  out.push_back(update);
  Change state(K::kUpdateState);
  state.id = 7;
  state.job.state = JobState::kWorking;
  state.job.score = 99;
  out.push_back(state);
  for (K k : {K::kDeleteJob, K::kDeleteAll}) {
    out.emplace_back(k);
    out.back().id = 8;
  }
  for (K k : {K::kAddCounter, K::kPutUniqueLock, K::kSetCronFiring}) {
    out.emplace_back(k);
    out.back().name = "name";
    out.back().delta = -42;
    if (k == K::kPutUniqueLock) out.back().value = "holder";
  }
  out.emplace_back(K::kSetPaused);
  out.back().name = "queue";
  out.back().flag = true;
  for (K k : {K::kPutSigningKey, K::kPutRecord, K::kDeleteRecord}) {
    out.emplace_back(k);
    out.back().name = "space";
    if (k != K::kPutSigningKey) out.back().key = "key";
    if (k != K::kDeleteRecord) out.back().value = std::string("va\0lue", 6);
  }
  for (K k : {K::kDeleteSigningKey, K::kDeleteHostState, K::kDeleteUniqueLock}) {
    out.emplace_back(k);
    out.back().name = "gone";
  }
  Change host(K::kPutHostState);
  host.host_state = {"example.org", 1, 2, 3, 4, true, 5};
  out.push_back(host);
  return out;
}

void ExpectSame(const std::vector<Change>& a, const std::vector<Change>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].job.jid, b[i].job.jid);
    EXPECT_EQ(a[i].job.queue, b[i].job.queue);
    EXPECT_EQ(a[i].job.jobtype, b[i].job.jobtype);
    EXPECT_EQ(a[i].job.payload, b[i].job.payload);
    EXPECT_EQ(a[i].job.state, b[i].job.state);
    EXPECT_EQ(a[i].job.score, b[i].job.score);
    EXPECT_EQ(a[i].job.enqueued_us, b[i].job.enqueued_us);
    EXPECT_EQ(a[i].job.reserve_for_s, b[i].job.reserve_for_s);
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].key, b[i].key);
    EXPECT_EQ(a[i].value, b[i].value);
    EXPECT_EQ(a[i].host_state, b[i].host_state);
    EXPECT_EQ(a[i].delta, b[i].delta);
    EXPECT_EQ(a[i].flag, b[i].flag);
  }
}

TEST(ChangeCodecTest, EveryKindRoundTripsAndEncodingsBackToBackReadAsOneList) {
  std::vector<Change> changes = EveryKind();
  std::string bytes;
  EncodeChanges(changes, bytes);
  EncodeChanges(changes, bytes);
  auto decoded = DecodeChanges(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  std::vector<Change> twice = changes;
  twice.insert(twice.end(), changes.begin(), changes.end());
  ExpectSame(*decoded, twice);
}

TEST(ChangeCodecTest, EveryCutAndAnUnknownKindAreErrorsThatSayWhere) {
  std::string bytes;
  EncodeChanges(EveryKind(), bytes);
  for (size_t n = 1; n < bytes.size(); ++n) {
    auto cut = DecodeChanges(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(cut.ok()) << "a cut at " << n << " decoded";
    EXPECT_NE(cut.status().message().find("undecodable changes: "), std::string::npos);
  }
  std::string unknown = bytes;
  unknown[4] = static_cast<char>(200);  // the first change's kind
  auto bad = DecodeChanges(unknown);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown change kind 200"), std::string::npos)
      << bad.status().message();
  std::string huge(4, '\xff');  // a count of 4 billion changes in 4 bytes
  auto count = DecodeChanges(huge);
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("a change count of 4294967295"), std::string::npos);
}

class RedoLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bulkhead_redo_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "store.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::vector<Change> Insert(int64_t id) {
    std::vector<Change> changes(1, Change(Change::Kind::kInsertJob));
    changes[0].id = id;
    changes[0].job = MakeJob("job-redo-" + std::to_string(id));
    return changes;
  }
  // FETCH's changes: row `id` reserved until `until`, its holder recorded (a record stored nowhere
  // before, marked so as HolderBook marks it).
  static std::vector<Change> Reserve(int64_t id, int64_t until) {
    std::vector<Change> changes(2, Change(Change::Kind::kUpdateState));
    changes[0].id = id;
    changes[0].job.state = JobState::kWorking;
    changes[0].job.score = until;
    changes[1] = Change(Change::Kind::kPutRecord);
    changes[1].name = "holder";
    changes[1].key = "job-redo-" + std::to_string(id);
    changes[1].value = "wid-" + std::to_string(id);
    changes[1].flag = true;
    return changes;
  }
  // ACK's changes: row `id` deleted, its holder too, one more processed.
  static std::vector<Change> Ack(int64_t id) {
    std::vector<Change> changes(3, Change(Change::Kind::kDeleteJob));
    changes[0].id = id;
    changes[1] = Change(Change::Kind::kDeleteRecord);
    changes[1].name = "holder";
    changes[1].key = "job-redo-" + std::to_string(id);
    changes[2] = Change(Change::Kind::kAddCounter);
    changes[2].name = "processed";
    changes[2].delta = 1;
    return changes;
  }
  // Appends records `from`..`to` (record n inserts row n).
  static void AppendRecords(RedoLog& log, int64_t from, int64_t to) {
    for (int64_t n = from; n <= to; ++n) {
      auto changes = Insert(n);
      ASSERT_TRUE(log.Append(n, {&changes}).ok());
    }
  }
  static std::vector<int64_t> Seqs(const RedoLog::Contents& c) {
    std::vector<int64_t> out;
    for (const auto& r : c.records) out.push_back(r.seq);
    return out;
  }
  static void Overwrite(const std::string& path, uint64_t at, const std::string& bytes) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(RedoLogTest, RecordsReadBackUntilTheFirstPlaceWithoutOne) {
  std::string redo = path_ + "-redo";
  auto none = RedoLog::Read(redo);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->records.empty()) << "a missing file has no records";
  auto log = RedoLog::Open(redo, 1 << 16, 1 << 16);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(fs::file_size(redo), RedoLog::kHeaderBytes + 2 * (1 << 16));
  EXPECT_EQ(fs::status(redo).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  AppendRecords(**log, 1, 3);
  auto every = EveryKind();
  ASSERT_TRUE((*log)->Append(4, {&every, &every}).ok());
  // Read while the log is open and mapped: what a kill -9 leaves.
  auto read = RedoLog::Read(redo);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Seqs(*read), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(read->records[0].changes[0].job.jid, "job-redo-1");
  std::vector<Change> twice = every;
  twice.insert(twice.end(), every.begin(), every.end());
  ExpectSame(read->records[3].changes, twice);

  // A record cut short by a kill during its copy ends the log there.
  uint64_t end = RedoLog::kHeaderBytes + (*log)->bytes();
  AppendRecords(**log, 5, 5);
  Overwrite(redo, end + 30, std::string(8, '\0'));
  read = RedoLog::Read(redo);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Seqs(*read), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST_F(RedoLogTest, ADamagedRecordWithLaterRecordsIsDamage) {
  std::string redo = path_ + "-redo";
  auto log = RedoLog::Open(redo, 1 << 16, 1 << 16);
  ASSERT_TRUE(log.ok());
  AppendRecords(**log, 1, 5);
  uint64_t second = RedoLog::kHeaderBytes + (*log)->bytes() / 5;  // records are the same size
  Overwrite(redo, second + 40, "garbage");
  auto read = RedoLog::Read(redo);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("the record at byte " + std::to_string(second) +
                                         " is damaged: record 3 follows it"),
            std::string::npos)
      << read.status().message();
}

TEST_F(RedoLogTest, AResetForgetsTheRecordsAndAFullLogRefusesARecord) {
  std::string redo = path_ + "-redo";
  auto log = RedoLog::Open(redo, 1000, 1000);
  ASSERT_TRUE(log.ok());
  AppendRecords(**log, 1, 3);
  (*log)->Reset();
  EXPECT_EQ((*log)->bytes(), 0u);
  AppendRecords(**log, 4, 4);  // shorter than the three it overwrites part of
  auto read = RedoLog::Read(redo);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Seqs(*read), (std::vector<int64_t>{4}));
  Status full;
  for (int64_t n = 5; full.ok() && n < 100; ++n) {
    auto changes = Insert(n);
    full = (*log)->Append(n, {&changes});
  }
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted) << full.ToString();
  // Reopening starts new epochs: the records the file held are no longer read.
  log = RedoLog::Open(redo, 1000, 1000);
  ASSERT_TRUE(log.ok());
  read = RedoLog::Read(redo);
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->records.empty());
}

// Appends rows 1..`n` to a log at `path` whose writer gathers for a minute (so they are answered
// from the redo log and not committed), and copies the files as a kill -9 leaves them to `to`
// (its redo log too when `with_redo`).
void AppendThenCopyAsKilled(const std::string& path, int64_t n, const std::string& to,
                            bool with_redo, size_t payload_bytes = 0) {
  TestLoop loop;
  SqliteChangeLog log(path, loop.poster(), "process");
  log.set_redo_gather_delay(std::chrono::seconds(60));
  MemoryState empty;
  ASSERT_TRUE(log.Load(empty).ok());
  for (int64_t id = 1; id <= n; ++id) {
    std::optional<Status> done;
    std::vector<Change> changes(1, Change(Change::Kind::kInsertJob));
    changes[0].id = id;
    changes[0].job = MakeJob("job-redo-" + std::to_string(id));
    if (payload_bytes > 0) {
      changes[0].job.payload = R"({"jid":"job-redo-)" + std::to_string(id) + R"(","args":[")" +
                               std::string(payload_bytes, 'x') + R"("]})";
    }
    log.Append(std::move(changes), [&](Status s) { done = s; });
    loop.RunUntil([&] { return done.has_value(); });
    ASSERT_TRUE(done->ok()) << done->ToString();
  }
  for (const char* suffix : {"", "-wal", "-commits", "-redo"}) {
    if (!with_redo && std::string(suffix) == "-redo") continue;
    if (fs::exists(path + suffix)) fs::copy_file(path + suffix, to + suffix);
  }
}

// Opens the store at `path` twice (the first open commits its redo log, the second finds the
// jobs in the database), each time with `queued` jobs queued.
void ExpectOpenedTwiceWithQueued(const std::string& path, size_t queued) {
  TestLoop loop;
  for (int open = 0; open < 2; ++open) {
    SqliteChangeLog log(path, loop.poster(), "process");
    MemoryState state;
    Status s = log.Load(state);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(state.Stats().enqueued, queued) << "open " << open;
  }
}

TEST_F(RedoLogTest, AKilledStoreCommitsItsRedoLogAtOpen) {
  std::string killed = (dir_ / "killed.db").string();
  AppendThenCopyAsKilled(path_, 50, killed, /*with_redo=*/true);
  ExpectOpenedTwiceWithQueued(killed, 50);
}

TEST_F(RedoLogTest, AKilledStoreCommitsTheRecordsOfBothRegionsAtOpen) {
  std::string killed = (dir_ / "killed.db").string();
  // 300 jobs of 4 KiB, a record each: past the point where the loop moves to the second region.
  AppendThenCopyAsKilled(path_, 300, killed, /*with_redo=*/true, 4000);
  std::ifstream in(killed + "-redo", std::ios::binary);
  in.seekg(static_cast<std::streamoff>(RedoLog::kHeaderBytes + SqliteChangeLog::kRedoRegionBytes));
  std::string magic(4, '\0');
  in.read(magic.data(), 4);
  EXPECT_EQ(magic, "BHR1") << "the second region holds records";
  ExpectOpenedTwiceWithQueued(killed, 300);
}

// The number of the last commit, from the store's side file `path`-commits.
int64_t LastCommit(const std::string& path) {
  std::ifstream in(path + "-commits");
  int64_t n = -1;
  in >> n;
  return n;
}

// What another connection finds committed in the database at `path` (a closed store: a running
// one holds it exclusively): a count from `sql`.
int64_t CommittedCount(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

TEST_F(RedoLogTest, ReadsAndHeldAnswersComeInOrderWithoutWaitingForACommit) {
  TestLoop loop;
  SqliteChangeLog log(path_, loop.poster(), "process");
  log.set_redo_gather_delay(std::chrono::seconds(60));  // the writer's transaction stays open
  MemoryState empty;
  ASSERT_TRUE(log.Load(empty).ok());
  const int64_t at_start = LastCommit(path_);
  std::vector<std::string> answered;
  auto insert = [&](int64_t id) {
    log.Append(Insert(id), [&answered, id](Status s) {
      answered.push_back("insert " + std::to_string(id) + (s.ok() ? "" : " " + s.ToString()));
    });
  };
  auto read = [&](int64_t id) {
    log.ReadJobs({id}, [&answered, id](Result<std::vector<std::optional<JobRecord>>> rows) {
      std::string jid = rows.ok() && rows->size() == 1 && (*rows)[0] ? (*rows)[0]->jid : "none";
      answered.push_back("read " + std::to_string(id) + " " + jid);
    });
  };
  // A change appended behind a read is logged at once but held: its answer comes after the
  // read's, and neither waits for the writer's commit (a minute away).
  insert(1);
  read(1);
  insert(2);
  read(2);
  insert(3);
  loop.RunUntil([&] { return answered.size() >= 5; });
  EXPECT_EQ(answered, (std::vector<std::string>{"insert 1", "read 1 job-redo-1", "insert 2",
                                                "read 2 job-redo-2", "insert 3"}));
  EXPECT_EQ(LastCommit(path_), at_start)
      << "the reads were answered from the writer's open transaction, not after a commit";

  // A change the loop never logs (a signing key) is answered once committed, with everything
  // the open transaction holds before it.
  std::vector<Change> key(1, Change(Change::Kind::kPutSigningKey));
  key[0].name = "key-1";
  key[0].value = "-----BEGIN PRIVATE KEY-----";
  std::optional<Status> key_done;
  log.Append(std::move(key), [&](Status s) { key_done = s; });
  loop.RunUntil([&] { return key_done.has_value(); });
  ASSERT_TRUE(key_done->ok()) << key_done->ToString();
  EXPECT_EQ(LastCommit(path_), at_start + 1) << "one commit: the jobs and the key together";
  log.Close();
  EXPECT_EQ(CommittedCount(path_, "SELECT count(*) FROM jobs"), 3);
  EXPECT_EQ(CommittedCount(path_, "SELECT count(*) FROM signing_keys"), 1);
}

TEST_F(RedoLogTest, StateUpdatesAndRecordsWaitForTheCommitAndReadsSeeThem) {
  TestLoop loop;
  SqliteChangeLog log(path_, loop.poster(), "process");
  log.set_redo_gather_delay(std::chrono::seconds(60));  // the writer's transaction stays open
  MemoryState empty;
  ASSERT_TRUE(log.Load(empty).ok());
  int answered = 0;
  auto append = [&](std::vector<Change> changes) {
    log.Append(std::move(changes), [&answered](Status s) {
      EXPECT_TRUE(s.ok()) << s.ToString();
      ++answered;
    });
  };
  // Job 1 is reserved, job 2 reserved and acknowledged, in the same open transaction (as a
  // FETCH and its ACK a few milliseconds apart are).
  append(Insert(1));
  append(Insert(2));
  append(Reserve(1, 111));
  append(Reserve(2, 222));
  append(Ack(2));
  std::optional<JobRecord> read;
  bool read_done = false;
  log.ReadJobs({1}, [&](Result<std::vector<std::optional<JobRecord>>> rows) {
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    read = (*rows)[0];
    read_done = true;
  });
  loop.RunUntil([&] { return read_done && answered == 5; });
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->state, JobState::kWorking) << "a read sees the reservation kept for the commit";
  EXPECT_EQ(read->score, 111);
  append(Ack(1));
  loop.RunUntil([&] { return answered == 6; });
  append(Insert(3));
  append(Reserve(3, 333));
  loop.RunUntil([&] { return answered == 8; });
  log.Close();  // commits what the open transaction holds and keeps
  EXPECT_EQ(CommittedCount(path_, "SELECT count(*) FROM jobs"), 1);
  EXPECT_EQ(CommittedCount(path_, "SELECT score FROM jobs WHERE id = 3 AND state = 4"), 333);
  EXPECT_EQ(CommittedCount(path_, "SELECT count(*) FROM records WHERE space = 'holder'"), 1);
  EXPECT_EQ(CommittedCount(path_, "SELECT count(*) FROM records WHERE key = 'job-redo-3'"), 1);
  EXPECT_EQ(CommittedCount(path_, "SELECT value FROM counters WHERE name = 'processed'"), 2);
}

// A read ahead of FETCH holds up no answer: a change appended after it is answered while its
// rows are still on their way; a read asked after it still comes after it.
TEST_F(RedoLogTest, AReadAheadHoldsUpNoAnswerOfTheChangesAfterIt) {
  TestLoop loop;
  WriterPostGate gate(loop);
  SqliteChangeLog log(path_, gate.poster(), "process");
  MemoryState empty;
  ASSERT_TRUE(log.Load(empty).ok());
  std::vector<std::string> answered;
  auto insert = [&](int64_t id) {
    log.Append(Insert(id), [&answered, id](Status s) {
      answered.push_back("insert " + std::to_string(id) + (s.ok() ? "" : " " + s.ToString()));
    });
  };
  auto read = [&answered](std::string name) {
    return [&answered, name](Result<std::vector<std::optional<JobRecord>>> rows) {
      std::string jid = rows.ok() && rows->size() == 1 && (*rows)[0] ? (*rows)[0]->jid : "none";
      answered.push_back(name + " " + jid);
    };
  };
  insert(1);
  gate.RunReady();
  ASSERT_EQ(answered, std::vector<std::string>{"insert 1"});
  log.ReadAhead({1}, read("ahead"));
  gate.WaitForWriter();  // its answer is held back here
  insert(2);
  log.ReadJobs({2}, read("read"));
  insert(3);
  gate.RunReady();
  EXPECT_EQ(answered, (std::vector<std::string>{"insert 1", "insert 2"}))
      << "the change after the read ahead is answered at once; the one after the read is held";
  for (int turn = 0; turn < 100 && answered.size() < 5; ++turn) {
    gate.Release();
    gate.RunReady();
    if (answered.size() < 5) gate.WaitForWriter();
  }
  EXPECT_EQ(answered, (std::vector<std::string>{"insert 1", "insert 2", "ahead job-redo-1",
                                                "read job-redo-2", "insert 3"}));
  log.Close();
}

// A row this run wrote is read without parsing its payload again (it was checked when pushed);
// the same row read by a later run, from the file, is checked and set aside.
TEST_F(RedoLogTest, OnlyRowsFromTheFileHaveTheirPayloadCheckedWhenRead) {
  TestLoop loop;
  auto read_row = [&](SqliteChangeLog& log) {
    std::optional<std::optional<JobRecord>> row;
    log.ReadJobs({1}, [&](Result<std::vector<std::optional<JobRecord>>> rows) {
      ASSERT_TRUE(rows.ok()) << rows.status().ToString();
      row = (*rows)[0];
    });
    loop.RunUntil([&] { return row.has_value(); });
    return *row;
  };
  {
    SqliteChangeLog log(path_, loop.poster(), "process");
    MemoryState empty;
    ASSERT_TRUE(log.Load(empty).ok());
    auto changes = Insert(1);
    changes[0].job.payload = "garbage{";  // only a damaged file holds one: the test writes it
    log.Append(std::move(changes), nullptr);
    auto row = read_row(log);
    ASSERT_TRUE(row.has_value()) << "written by this run: not parsed again";
    EXPECT_EQ(row->payload, "garbage{");
  }
  SqliteChangeLog log(path_, loop.poster(), "process");
  log.set_start_sample(0);  // queued payloads are checked when read, not at start
  MemoryState state;
  state.EnableCompaction();  // queued rows load cold, their payloads left in the file
  Status loaded = log.Load(state);
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  EXPECT_FALSE(read_row(log).has_value()) << "from the file: checked, and set aside";
  log.Close();
  EXPECT_EQ(CommittedCount(path_, "SELECT count(*) FROM damaged_jobs"), 1);
}

// Rows read in runs of consecutive ids (one statement each), in any order, some not stored: each
// answer in its place.
TEST_F(RedoLogTest, ReadsAnswerEachRowInItsPlaceWhateverTheIdsOrder) {
  TestLoop loop;
  SqliteChangeLog log(path_, loop.poster(), "process");
  MemoryState empty;
  ASSERT_TRUE(log.Load(empty).ok());
  for (int64_t id = 1; id <= 6; ++id) log.Append(Insert(id), nullptr);
  std::vector<Change> gone(1, Change(Change::Kind::kDeleteJob));
  gone[0].id = 3;
  log.Append(std::move(gone), nullptr);
  std::vector<std::string> got;
  log.ReadJobs({1, 2, 3, 4, 6, 5, 9, 2}, [&](Result<std::vector<std::optional<JobRecord>>> rows) {
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    for (const auto& row : *rows) got.push_back(row ? row->jid : "none");
  });
  loop.RunUntil([&] { return !got.empty(); });
  EXPECT_EQ(got, (std::vector<std::string>{"job-redo-1", "job-redo-2", "none", "job-redo-4",
                                           "job-redo-6", "job-redo-5", "none", "job-redo-2"}));
  log.Close();
}

TEST_F(RedoLogTest, AFullRedoLogFallsBackToCommitsAndIsResetAfterThem) {
  TestLoop loop;
  SqliteChangeLog log(path_, loop.poster(), "process");
  log.set_redo_gather_delay(std::chrono::seconds(60));  // only a full log makes the writer commit
  MemoryState empty;
  ASSERT_TRUE(log.Load(empty).ok());
  const int64_t at_start = LastCommit(path_);
  // Three regions' size in 4 KiB payloads, 64 jobs a turn: more than both regions hold.
  const int64_t jobs = 3 * static_cast<int64_t>(SqliteChangeLog::kRedoRegionBytes) / 4096;
  int64_t answered = 0, failed = 0;
  for (int64_t id = 1; id <= jobs;) {
    for (int64_t end = std::min(jobs, id + 63); id <= end; ++id) {
      auto changes = Insert(id);
      changes[0].job.payload = R"({"jid":"job-redo-)" + std::to_string(id) + R"(","args":[")" +
                               std::string(4000, 'x') + R"("]})";
      log.Append(std::move(changes), [&](Status s) {
        ++answered;
        failed += s.ok() ? 0 : 1;
      });
    }
    loop.RunUntil([&] { return answered == id - 1; });
  }
  EXPECT_EQ(failed, 0);
  EXPECT_GT(LastCommit(path_), at_start) << "a full redo log is committed without the delay";
  EXPECT_GE(log.redo_fills(), 1u);
  auto redo = RedoLog::Read(path_ + "-redo");
  ASSERT_TRUE(redo.ok()) << redo.status().ToString();
  ASSERT_FALSE(redo->records.empty()) << "the log took records again after the commit";
  EXPECT_GT(redo->records.front().seq, 1) << "the committed records' region was reset";
  EXPECT_EQ(redo->records.back().changes.back().id, jobs) << "the last turn was logged";
  log.Close();
  EXPECT_EQ(CommittedCount(path_, "SELECT count(*) FROM jobs"), jobs);
}

TEST_F(RedoLogTest, AGapInTheNumbersRefusesTheStart) {
  std::string killed = (dir_ / "killed.db").string();
  AppendThenCopyAsKilled(path_, 1, killed, /*with_redo=*/false);
  TestLoop loop;
  // A redo log whose first record is not the one after the database's meta.redo_seq.
  auto redo = RedoLog::Open(killed + "-redo", 1 << 16, 1 << 16);
  ASSERT_TRUE(redo.ok());
  AppendRecords(**redo, 3, 4);
  SqliteChangeLog log(killed, loop.poster(), "process");
  MemoryState state;
  Status s = log.Load(state);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("jumps from record 0 to 3"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("move it away"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace bulkhead
