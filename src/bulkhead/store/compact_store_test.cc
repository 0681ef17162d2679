// The sqlite: store's compact queues (queue_slot.h, jid_index.h): a durable queued job keeps only
// its slot in memory, and every store operation keeps its meaning on it.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "bulkhead/store/embedded_store.h"
#include "bulkhead/store/jid_index.h"
#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/testing/make_job.h"
#include "bulkhead/store/testing/store_v4_dump.h"
#include "bulkhead/store/testing/test_loop.h"

namespace bulkhead {
namespace {

TEST(JidIndexTest, FindsEveryJidThroughGrowthAndErases) {
  std::deque<QueueSlot> slots;
  JidIndex index;
  for (int i = 0; i < 5000; ++i) {
    slots.push_back(QueueSlot{.id = i, .jid = CompactJid("jid-" + std::to_string(i))});
    index.Insert(&slots.back());
  }
  // A long jid lives on the heap.
  std::string long_jid(80, 'j');
  slots.push_back(QueueSlot{.id = 5000, .jid = CompactJid(long_jid)});
  index.Insert(&slots.back());
  for (int i = 0; i < 5000; i += 3) index.Erase("jid-" + std::to_string(i));
  for (int i = 0; i < 5000; ++i) {
    QueueSlot* s = index.Find("jid-" + std::to_string(i));
    if (i % 3 == 0) {
      EXPECT_EQ(s, nullptr) << i;
    } else {
      ASSERT_NE(s, nullptr) << i;
      EXPECT_EQ(s->id, i);
    }
  }
  ASSERT_NE(index.Find(long_jid), nullptr);
  EXPECT_EQ(index.Find(long_jid)->id, 5000);
  EXPECT_EQ(index.Find("jid-5001"), nullptr);
  EXPECT_EQ(index.Find("jid-1"), &slots[1]);
  EXPECT_EQ(index.size(), 5001u - 1667u);
}

TEST(JidIndexTest, ReservedOnceAndInsertNewRefusesAKnownJid) {
  std::deque<QueueSlot> slots;
  JidIndex index;
  index.Reserve(3000);
  for (int i = 0; i < 3000; ++i) {
    slots.push_back(QueueSlot{.id = i + 1, .jid = CompactJid("jid-" + std::to_string(i))});
    ASSERT_TRUE(index.InsertNew(&slots.back())) << i;
  }
  slots.push_back(QueueSlot{.id = 9999, .jid = CompactJid("jid-1234")});
  EXPECT_FALSE(index.InsertNew(&slots.back()));
  EXPECT_EQ(index.size(), 3000u);
  EXPECT_EQ(index.Find("jid-1234")->id, 1235);
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(index.Find("jid-" + std::to_string(i))->id, i + 1);
}

// Entries keep their distance from home in 6 bits. One run: a jid of home H, 70 of home H+1,
// then 29 more of home H (distances 71 and up: kept as "far", their home found from the jid).
// Erasing the first leaves the 70 in place and shifts each far one back past them; more erases
// from the middle and the end; every jid is still found, with and without the hash bits.
TEST(JidIndexTest, ALongRunWithFarEntriesSurvivesErases) {
  for (bool drop_bits : {false, true}) {
    JidIndex index;
    index.Reserve(150);  // no growth below 150: the homes stay where they are found
    const size_t capacity = index.capacity();
    const size_t home = index.HomeOf("jid-0");
    std::vector<std::string> near, next;  // jids of home H, of home H+1
    for (int i = 0; near.size() < 30 || next.size() < 70; ++i) {
      std::string jid = "jid-" + std::to_string(i);
      size_t h = index.HomeOf(jid);
      if (h == home && near.size() < 30) near.push_back(jid);
      if (h == ((home + 1) & (capacity - 1)) && next.size() < 70) next.push_back(jid);
    }
    std::vector<std::string> run = {near[0]};
    run.insert(run.end(), next.begin(), next.end());
    run.insert(run.end(), near.begin() + 1, near.end());
    if (drop_bits) index.DropHashBits();
    std::deque<QueueSlot> slots;
    for (size_t k = 0; k < run.size(); ++k) {
      slots.push_back(QueueSlot{.id = static_cast<int64_t>(k), .jid = CompactJid(run[k])});
      ASSERT_TRUE(index.InsertNew(&slots.back())) << run[k];
    }
    ASSERT_EQ(index.capacity(), capacity);
    std::vector<bool> gone(run.size(), false);
    for (size_t k : {size_t{0}, size_t{75}, size_t{1}, size_t{40}, size_t{99}, size_t{71}}) {
      index.Erase(run[k]);
      gone[k] = true;
      for (size_t m = 0; m < run.size(); ++m) {
        QueueSlot* s = index.Find(run[m]);
        if (gone[m]) {
          EXPECT_EQ(s, nullptr) << run[m] << " after erasing " << run[k];
        } else {
          ASSERT_NE(s, nullptr) << run[m] << " after erasing " << run[k] << ", bits " << !drop_bits;
          EXPECT_EQ(s->id, static_cast<int64_t>(m));
        }
      }
    }
    EXPECT_EQ(index.size(), 94u);
  }
}

// Without the hash bits (a slot above 2^48), every entry's jid is compared: the same answers,
// through growth and erases, before and after the bits are dropped.
TEST(JidIndexTest, AnswersTheSameWithoutTheHashBits) {
  std::deque<QueueSlot> slots;
  JidIndex index;
  for (int i = 0; i < 2000; ++i) {
    slots.push_back(QueueSlot{.id = i, .jid = CompactJid("jid-" + std::to_string(i))});
    ASSERT_TRUE(index.InsertNew(&slots.back())) << i;
  }
  index.DropHashBits();
  for (int i = 2000; i < 6000; ++i) {
    slots.push_back(QueueSlot{.id = i, .jid = CompactJid("jid-" + std::to_string(i))});
    ASSERT_TRUE(index.InsertNew(&slots.back())) << i;
  }
  slots.push_back(QueueSlot{.id = -1, .jid = CompactJid("jid-17")});
  EXPECT_FALSE(index.InsertNew(&slots.back()));
  for (int i = 0; i < 6000; i += 2) index.Erase("jid-" + std::to_string(i));
  for (int i = 0; i < 6000; ++i) {
    QueueSlot* s = index.Find("jid-" + std::to_string(i));
    if (i % 2 == 0) {
      EXPECT_EQ(s, nullptr) << i;
    } else {
      ASSERT_NE(s, nullptr) << i;
      EXPECT_EQ(s->id, i);
    }
  }
  EXPECT_EQ(index.size(), 3000u);
}

class CompactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("bulkhead_compact_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  // With the store closed: a second, queued row for `jid` (a copy of its row, later in FIFO
  // order), as a damaged or hand-edited file may hold.
  void AddQueuedCopyOfRow(const std::string& jid) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "c.db").string().c_str(), &db), SQLITE_OK);
    const std::string sql =
        "INSERT INTO jobs(jid, state, queue, jobtype, score, enqueued, reserve_for, payload)"
        " SELECT jid, 0, queue, jobtype, score + 100, enqueued, reserve_for, payload FROM jobs"
        " WHERE jid = '" +
        jid + "'";
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  void Reopen() {
    store_.reset();
    store_ = std::make_unique<EmbeddedStore>(
        "sqlite",
        std::make_unique<SqliteChangeLog>((dir_ / "c.db").string(), loop_.poster(), "process"));
    Status s = store_->Open();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static JobRecord Job(int i) {
    JobRecord job = MakeJob("jid-" + std::to_string(i));
    job.jobtype = "Type" + std::to_string(i);
    job.payload = R"({"jid":")" + job.jid + R"(","jobtype":")" + job.jobtype + R"(","args":[)" +
                  std::to_string(i) + R"(],"queue":"default"})";
    return job;
  }
  // Fills the queue past MemoryState::kHotQueue, so that the jobs pushed after turn cold.
  void PushFillers() {
    for (size_t i = 0; i < MemoryState::kHotQueue; ++i) {
      JobRecord job = MakeJob("filler-" + std::to_string(i));
      ASSERT_TRUE(Push(job).ok());
    }
  }
  // Fetches (and so drops) the fillers.
  void FetchFillers() {
    for (size_t i = 0; i < MemoryState::kHotQueue; ++i) ASSERT_TRUE(Fetch().has_value());
  }
  Status Push(JobRecord job) {
    std::optional<Status> out;
    store_->Push(std::move(job), [&](Status s) { out = s; });
    loop_.RunUntil([&] { return out.has_value(); });
    return *out;
  }
  std::optional<JobRecord> Fetch() {
    std::optional<Result<std::optional<JobRecord>>> out;
    store_->Fetch({"default"}, now_, [&](Result<std::optional<JobRecord>> r) { out = r; });
    loop_.RunUntil([&] { return out.has_value(); });
    EXPECT_TRUE(out->ok()) << out->status().ToString();
    return out->ok() ? **out : std::nullopt;
  }
  std::optional<JobRecord> Find(const std::string& jid) {
    std::optional<Result<std::optional<JobRecord>>> out;
    store_->FindJob(jid, [&](Result<std::optional<JobRecord>> r) { out = r; });
    loop_.RunUntil([&] { return out.has_value(); });
    EXPECT_TRUE(out->ok()) << out->status().ToString();
    return out->ok() ? **out : std::nullopt;
  }

  TestLoop loop_;
  std::filesystem::path dir_;
  std::unique_ptr<EmbeddedStore> store_;
  TimePoint now_ = FromUnixMicros(1'700'000'000'000'000);
};

TEST_F(CompactStoreTest, DurableQueuedJobsGoColdAndComeBackWholeInFifoOrder) {
  PushFillers();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Push(Job(i)).ok());
  EXPECT_EQ(store_->cold_jobs(), 3u);
  // Two more, fetched before their commit could be durable: they stay hot meanwhile.
  int durable = 0;
  for (int i = 3; i < 5; ++i) store_->Push(Job(i), [&](Status s) { durable += s.ok(); });
  FetchFillers();
  for (int i = 0; i < 5; ++i) {
    auto job = Fetch();
    ASSERT_TRUE(job.has_value()) << i;
    EXPECT_EQ(job->jid, Job(i).jid);
    EXPECT_EQ(job->payload, Job(i).payload);
    EXPECT_EQ(job->jobtype, Job(i).jobtype);
    EXPECT_EQ(job->state, JobState::kWorking);
    EXPECT_EQ(job->score, ToUnixMicros(now_) + 60'000'000);
  }
  loop_.RunUntil([&] { return durable == 2; });
  EXPECT_FALSE(Fetch().has_value());
  EXPECT_EQ(store_->cold_jobs(), 0u);
}

TEST_F(CompactStoreTest, AColdJobIsRefusedAgainFoundRemovedAndMoved) {
  PushFillers();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Push(Job(i)).ok());
  ASSERT_EQ(store_->cold_jobs(), 4u);
  EXPECT_EQ(Push(Job(1)).code(), StatusCode::kAlreadyExists);
  auto found = Find("jid-2");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->state, JobState::kQueued);
  EXPECT_EQ(found->payload, Job(2).payload);
  EXPECT_FALSE(Find("jid-9").has_value());
  // Out of the middle of the queue: the others keep their order.
  std::optional<Status> removed;
  store_->Remove("jid-1", [&](Status s) { removed = s; });
  loop_.RunUntil([&] { return removed.has_value(); });
  JobRecord dead = Job(3);
  dead.state = JobState::kDead;
  dead.score = ToUnixMicros(now_) + 1;
  std::optional<Status> moved;
  store_->Move(dead, now_, [&](Status s) { moved = s; });
  loop_.RunUntil([&] { return moved.has_value(); });
  ASSERT_TRUE(moved->ok()) << moved->ToString();
  FetchFillers();
  std::optional<StoreStats> stats;
  store_->Stats([&](Result<StoreStats> r) { stats = *r; });
  loop_.RunUntil([&] { return stats.has_value(); });
  EXPECT_EQ(stats->enqueued, 2u) << "the hole left by jid-1 is not a job";
  EXPECT_EQ(stats->dead, 1u);
  EXPECT_EQ(Fetch()->jid, "jid-0");
  EXPECT_EQ(Fetch()->jid, "jid-2");
  EXPECT_FALSE(Fetch().has_value());
  auto in_dead = Find("jid-3");
  ASSERT_TRUE(in_dead.has_value());
  EXPECT_EQ(in_dead->state, JobState::kDead);
  EXPECT_EQ(in_dead->payload, Job(3).payload);
}

TEST_F(CompactStoreTest, ReadsAfterAFetchSeeItsPayload) {
  PushFillers();
  ASSERT_TRUE(Push(Job(7)).ok());
  FetchFillers();
  std::optional<JobRecord> fetched, working;
  store_->Fetch({"default"}, now_, [&](Result<std::optional<JobRecord>> r) { fetched = **r; });
  // Asked before the fetch's payload is back: answered after it, whole.
  store_->GetWorking("jid-7", [&](Result<std::optional<JobRecord>> r) {
    EXPECT_TRUE(fetched.has_value()) << "answered before the FETCH";
    working = **r;
  });
  loop_.RunUntil([&] { return working.has_value(); });
  EXPECT_EQ(working->payload, Job(7).payload);
  EXPECT_EQ(fetched->payload, Job(7).payload);
}

TEST_F(CompactStoreTest, AReopenedStoreLoadsQueuedJobsColdInOrder) {
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(Push(Job(i)).ok());
  Reopen();
  EXPECT_EQ(store_->cold_jobs(), 50u);
  EXPECT_EQ(Push(Job(10)).code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(Push(Job(50)).ok());
  for (int i = 0; i <= 50; ++i) {
    auto job = Fetch();
    ASSERT_TRUE(job.has_value()) << i;
    EXPECT_EQ(job->payload, Job(i).payload);
  }
}

// A job queued again keeps its row (a low id) with a later FIFO sequence: the load, which reads
// rows by id, puts it back at the end of its queue. A second row with a known jid is dropped.
TEST_F(CompactStoreTest, AReopenedStoreOrdersARequeuedJobByItsSequenceAndDropsDuplicateJids) {
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Push(Job(i)).ok());
  auto first = Fetch();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->jid, Job(0).jid);
  std::optional<Status> moved;
  store_->Move(Job(0), now_, [&](Status s) { moved = s; });
  loop_.RunUntil([&] { return moved.has_value(); });
  ASSERT_TRUE(moved->ok()) << moved->ToString();
  store_.reset();
  AddQueuedCopyOfRow("jid-4");
  Reopen();
  EXPECT_EQ(store_->cold_jobs(), 10u);
  for (int i : {1, 2, 3, 4, 5, 6, 7, 8, 9, 0}) {
    auto job = Fetch();
    ASSERT_TRUE(job.has_value()) << i;
    EXPECT_EQ(job->jid, Job(i).jid);  // (job 0's payload now has its enqueued_at)
  }
  EXPECT_FALSE(Fetch().has_value()) << "the duplicate row of jid-4 was served";
}

// A queued row whose jid a job held whole also has (here: reserved) is the one dropped.
TEST_F(CompactStoreTest, AReopenedStoreDropsAQueuedRowWhoseJidAReservedJobHolds) {
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Push(Job(i)).ok());
  auto first = Fetch();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->jid, Job(0).jid);
  store_.reset();
  AddQueuedCopyOfRow("jid-0");
  Reopen();
  EXPECT_EQ(store_->cold_jobs(), 9u);
  for (int i = 1; i < 10; ++i) {
    auto job = Fetch();
    ASSERT_TRUE(job.has_value()) << i;
    EXPECT_EQ(job->jid, Job(i).jid);
  }
  EXPECT_FALSE(Fetch().has_value()) << "the queued copy of the reserved jid-0 was served";
}

TEST_F(CompactStoreTest, FetchesWhileRowsAreReadAheadGetEachJobOnce) {
  const int n = 2 * static_cast<int>(MemoryState::kReadAhead) + 5;
  for (int i = 0; i < n; ++i) ASSERT_TRUE(Push(Job(i)).ok());
  ASSERT_EQ(store_->cold_jobs(), n - MemoryState::kHotQueue) << "a short queue stays whole";
  // All asked at once: the first reads the next rows ahead, the others wait for that read or
  // find their job warm.
  std::vector<std::optional<JobRecord>> got(n + 1);
  int answered = 0;
  for (int i = 0; i <= n; ++i) {
    store_->Fetch({"default"}, now_, [&, i](Result<std::optional<JobRecord>> r) {
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      got[i] = *r;
      ++answered;
    });
  }
  loop_.RunUntil([&] { return answered == n + 1; });
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(got[i].has_value()) << i;
    EXPECT_EQ(got[i]->jid, Job(i).jid);
    EXPECT_EQ(got[i]->payload, Job(i).payload);
  }
  EXPECT_FALSE(got[n].has_value());
}

// FETCH one job at a time, as one worker does: the rows are read ahead before the ones read
// run out, a bounded number of them.
TEST_F(CompactStoreTest, FetchReadsTheNextRowsBeforeTheRowsReadAheadRunOut) {
  PushFillers();
  const int n = 4 * static_cast<int>(MemoryState::kReadAheadDepth);
  for (int i = 0; i < n; ++i) ASSERT_TRUE(Push(Job(i)).ok());
  FetchFillers();
  loop_.RunUntil([&] { return store_->cold_jobs() == static_cast<size_t>(n); });
  const int fetched = static_cast<int>(MemoryState::kReadAhead) + 10;
  for (int i = 0; i < fetched; ++i) {
    auto job = Fetch();
    ASSERT_TRUE(job.has_value()) << i;
    ASSERT_EQ(job->payload, Job(i).payload) << i;
  }
  // Past the first read's rows, and still kReadAheadDepth rows or more read ahead of FETCH.
  const size_t ahead = MemoryState::kReadAheadDepth;
  loop_.RunUntil([&] { return store_->cold_jobs() <= n - fetched - ahead; });
  EXPECT_GE(store_->cold_jobs(), n - fetched - ahead - MemoryState::kReadAhead)
      << "at most one read more than the depth";
  for (int i = fetched; i < n; ++i) {
    auto job = Fetch();
    ASSERT_TRUE(job.has_value()) << i;
    ASSERT_EQ(job->payload, Job(i).payload) << i;
  }
  EXPECT_FALSE(Fetch().has_value());
  EXPECT_EQ(store_->cold_jobs(), 0u);
}

TEST_F(CompactStoreTest, AFileWrittenBeforeCompactQueuesIsServedAsItIs) {
  store_.reset();
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
  std::string path = (dir_ / "c.db").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, kStoreVersion4Dump, nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  Reopen();
  EXPECT_EQ(store_->cold_jobs(), 5u);
  std::optional<StoreStats> stats;
  store_->Stats([&](Result<StoreStats> r) { stats = *r; });
  loop_.RunUntil([&] { return stats.has_value(); });
  EXPECT_EQ(stats->enqueued, 5u);
  EXPECT_EQ(stats->working, 1u);
  const std::string first_queued = "00000000000000009e3779b1";
  auto found = Find(first_queued);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->jobtype, "Web::PushNotificationWorker");
  EXPECT_NE(found->payload.find("\"args\":[100001,"), std::string::npos) << found->payload;
  std::optional<Result<std::optional<JobRecord>>> fetched;
  store_->Fetch({"push"}, now_, [&](Result<std::optional<JobRecord>> r) { fetched = r; });
  loop_.RunUntil([&] { return fetched.has_value(); });
  ASSERT_TRUE(fetched->ok() && fetched->value().has_value());
  EXPECT_EQ((*fetched)->value().jid, first_queued);
  EXPECT_EQ((*fetched)->value().payload, found->payload);
}

}  // namespace
}  // namespace bulkhead
