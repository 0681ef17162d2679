// SqliteChangeWriter (sqlite_change_writer.h) on a database of the store's schema: row deletes by
// runs of ids. Its use inside the store's transactions is covered by the store suite.
#include "bulkhead/store/sqlite_change_writer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <vector>

#include "bulkhead/store/sqlite_db.h"
#include "bulkhead/store/sqlite_schema.h"
#include "bulkhead/store/testing/make_job.h"

namespace bulkhead {
namespace {

class SqliteChangeWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    ASSERT_TRUE(SqliteExec(db_, path_, kSqliteSchema).ok());
    ASSERT_TRUE(stmts_.Prepare(db_).ok());
  }
  void TearDown() override {
    stmts_.Finalize();
    sqlite3_close(db_);
  }

  void InsertRows(int64_t from, int64_t to) {
    for (int64_t id = from; id <= to; ++id) {
      Change c(Change::Kind::kInsertJob);
      c.id = id;
      c.job = MakeJob("job-" + std::to_string(id));
      ASSERT_TRUE(Writer().Write(c).ok());
    }
  }
  SqliteChangeWriter Writer() { return SqliteChangeWriter(db_, path_, stmts_); }
  std::vector<int64_t> Ids() {
    std::vector<int64_t> ids;
    Status s =
        SqliteForEachRow(db_, path_, "SELECT id FROM jobs ORDER BY id",
                         [&](sqlite3_stmt* st) { ids.push_back(sqlite3_column_int64(st, 0)); });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return ids;
  }

  std::string path_ = ":memory:";
  sqlite3* db_ = nullptr;
  SqliteStatements stmts_;
};

TEST_F(SqliteChangeWriterTest, DeleteJobsDeletesExactlyTheGivenRowsInAnyOrder) {
  InsertRows(1, 12);
  SqliteChangeWriter writer = Writer();
  std::vector<int64_t> ids = {9, 2, 4, 3, 12, 7, 10};  // runs 2-4 and 9-10, then 7 and 12 alone
  ASSERT_TRUE(writer.DeleteJobs(ids).ok());
  EXPECT_TRUE(ids.empty()) << "cleared for the next batch";
  EXPECT_EQ(Ids(), (std::vector<int64_t>{1, 5, 6, 8, 11}));
  std::vector<int64_t> gone = {2, 3, 100};  // deleted already, never inserted
  EXPECT_TRUE(writer.DeleteJobs(gone).ok());
  EXPECT_EQ(Ids(), (std::vector<int64_t>{1, 5, 6, 8, 11}));
  std::vector<int64_t> none;
  EXPECT_TRUE(writer.DeleteJobs(none).ok());
}

}  // namespace
}  // namespace bulkhead
