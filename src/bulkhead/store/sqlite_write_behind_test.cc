// SqliteWriteBehind (sqlite_write_behind.h): which changes wait for the commit, the last one per
// row or key, and what a change written at once makes moot. Its use by the sqlite store (reads
// in the open transaction, what a reopen finds) is tested in redo_log_test.cc.
#include "bulkhead/store/sqlite_write_behind.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

Change State(int64_t id, JobState state, int64_t score) {
  Change c(Change::Kind::kUpdateState);
  c.id = id;
  c.job.state = state;
  c.job.score = score;
  return c;
}

Change Record(Change::Kind kind, const std::string& space, const std::string& key) {
  Change c(kind);
  c.name = space;
  c.key = key;
  c.value = kind == Change::Kind::kPutRecord ? "wid-1" : "";
  return c;
}

Change OfJob(Change::Kind kind, int64_t id) {
  Change c(kind);
  c.id = id;
  return c;
}

TEST(SqliteWriteBehindTest, KeepsTheLastStateUpdatePerRowAndOverlaysIt) {
  SqliteWriteBehind wb;
  Change first = State(7, JobState::kWorking, 100);
  Change second = State(7, JobState::kQueued, 5);
  EXPECT_TRUE(wb.Take(first));
  EXPECT_TRUE(wb.Take(second));
  EXPECT_EQ(wb.size(), 1u);
  JobRecord row;
  row.state = JobState::kDead;
  row.score = 1;
  EXPECT_TRUE(wb.Overlay(7, row));
  EXPECT_EQ(row.state, JobState::kQueued);
  EXPECT_EQ(row.score, 5);
  JobRecord other;
  other.state = JobState::kRetry;
  EXPECT_FALSE(wb.Overlay(8, other));
  EXPECT_EQ(other.state, JobState::kRetry) << "a row without a kept update is left as read";
}

TEST(SqliteWriteBehindTest, AnUpdateOrDeleteOfTheRowIsWrittenAtOnceAndDropsItsKeptState) {
  SqliteWriteBehind wb;
  for (Change::Kind kind : {Change::Kind::kUpdateJob, Change::Kind::kDeleteJob}) {
    Change update = State(7, JobState::kWorking, 100);
    ASSERT_TRUE(wb.Take(update));
    Change now = OfJob(kind, 7);
    EXPECT_FALSE(wb.Take(now)) << "written by the caller, in order";
    JobRecord row;
    EXPECT_FALSE(wb.Overlay(7, row)) << "the row's own write sets its state";
    EXPECT_EQ(wb.size(), 0u);
  }
  Change insert = OfJob(Change::Kind::kInsertJob, 9);
  EXPECT_FALSE(wb.Take(insert)) << "inserts are written at once: reads need them";
}

TEST(SqliteWriteBehindTest, KeepsTheLastChangePerRecordKeyAndSumsCounters) {
  SqliteWriteBehind wb;
  Change put = Record(Change::Kind::kPutRecord, "holder", "jid-1");
  Change del = Record(Change::Kind::kDeleteRecord, "holder", "jid-1");
  Change other = Record(Change::Kind::kPutRecord, "holder", "jid-2");
  Change same_key_other_space = Record(Change::Kind::kPutRecord, "batch", "jid-1");
  EXPECT_TRUE(wb.Take(put));
  EXPECT_TRUE(wb.Take(del));
  EXPECT_TRUE(wb.Take(other));
  EXPECT_TRUE(wb.Take(same_key_other_space));
  for (int i = 0; i < 3; ++i) {
    Change processed(Change::Kind::kAddCounter);
    processed.name = "processed";
    processed.delta = 1;
    EXPECT_TRUE(wb.Take(processed));
  }
  EXPECT_EQ(wb.size(), 4u) << "jid-1's delete, jid-2's put, the batch record, one counter";
}

// A worker's hold: put at FETCH and deleted at ACK. When the put created the record (no earlier
// transaction stored it), both land in the same transaction and nothing needs writing.
TEST(SqliteWriteBehindTest, APutOfARecordStoredNowhereAndItsDeleteWriteNothing) {
  SqliteWriteBehind wb;
  Change put = Record(Change::Kind::kPutRecord, "holder", "jid-1");
  put.flag = true;
  Change del = Record(Change::Kind::kDeleteRecord, "holder", "jid-1");
  ASSERT_TRUE(wb.Take(put) && wb.Take(del));
  EXPECT_EQ(wb.size(), 0u);

  Change created = Record(Change::Kind::kPutRecord, "holder", "jid-2");
  created.flag = true;
  Change replaced = Record(Change::Kind::kPutRecord, "holder", "jid-2");  // another worker
  Change dropped = Record(Change::Kind::kDeleteRecord, "holder", "jid-2");
  ASSERT_TRUE(wb.Take(created) && wb.Take(replaced) && wb.Take(dropped));
  EXPECT_EQ(wb.size(), 0u) << "a put over a kept put of a new record still puts a new record";
}

TEST(SqliteWriteBehindTest, ADeleteOfARecordTheFileMayHoldIsKeptWhateverFollows) {
  SqliteWriteBehind wb;
  Change earlier = Record(Change::Kind::kDeleteRecord, "holder", "jid-1");  // stored before
  Change put = Record(Change::Kind::kPutRecord, "holder", "jid-1");
  put.flag = true;
  Change del = Record(Change::Kind::kDeleteRecord, "holder", "jid-1");
  ASSERT_TRUE(wb.Take(earlier) && wb.Take(put) && wb.Take(del));
  EXPECT_EQ(wb.size(), 1u) << "the delete of the stored record is still written";

  Change unmarked = Record(Change::Kind::kPutRecord, "batch", "b-1");  // flag false: may exist
  Change removed = Record(Change::Kind::kDeleteRecord, "batch", "b-1");
  ASSERT_TRUE(wb.Take(unmarked) && wb.Take(removed));
  EXPECT_EQ(wb.size(), 2u) << "an unmarked put's delete is written";
}

TEST(SqliteWriteBehindTest, FlushDropsEverythingKeptBeforeIt) {
  SqliteWriteBehind wb;
  Change update = State(7, JobState::kWorking, 100);
  Change put = Record(Change::Kind::kPutRecord, "holder", "jid-1");
  Change counter(Change::Kind::kAddCounter);
  counter.name = "processed";
  counter.delta = 1;
  ASSERT_TRUE(wb.Take(update) && wb.Take(put) && wb.Take(counter));
  Change flush(Change::Kind::kDeleteAll);
  EXPECT_FALSE(wb.Take(flush));
  EXPECT_EQ(wb.size(), 0u);
  Change after = State(8, JobState::kWorking, 100);
  EXPECT_TRUE(wb.Take(after));
  EXPECT_EQ(wb.size(), 1u) << "what comes after the flush is kept again";
}

}  // namespace
}  // namespace bulkhead
