// HolderBook (holder_book.h): which holder puts are marked as creating their record, the mark
// that lets the sqlite: writer skip a hold put and dropped in one transaction.
#include "bulkhead/store/holder_book.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

// Sets the holder of `jid` and returns the one change made.
Change SetOne(HolderBook& book, const std::string& jid, const std::string& wid) {
  std::vector<Change> out;
  book.Set(jid, wid, out);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Change(Change::Kind::kDeleteAll) : out[0];
}

TEST(HolderBookTest, APutOfANewHoldIsMarkedAsCreatingItsRecord) {
  HolderBook book;
  Change first = SetOne(book, "jid-1", "wid-a");
  EXPECT_EQ(first.kind, Change::Kind::kPutRecord);
  EXPECT_EQ(first.name, kHolderSpace);
  EXPECT_EQ(first.key, "jid-1");
  EXPECT_EQ(first.value, "wid-a");
  EXPECT_TRUE(first.flag);
  EXPECT_FALSE(SetOne(book, "jid-1", "wid-b").flag) << "a hold replaced: the record exists";
  std::vector<Change> out;
  book.Drop("jid-1", out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Change::Kind::kDeleteRecord);
  EXPECT_TRUE(SetOne(book, "jid-1", "wid-c").flag) << "dropped, then held again";
}

TEST(HolderBookTest, AHoldLoadedFromTheFileIsNeverCreatedAgain) {
  HolderBook book;
  book.Load("jid-1", "wid-a");
  EXPECT_FALSE(SetOne(book, "jid-1", "wid-b").flag);
}

TEST(HolderBookTest, ARowIgnoredAtLoadIsReplacedByAnUnmarkedPut) {
  HolderBook book;
  book.Load("stale", "wid-a");
  book.Load("held", "wid-b");
  book.Retain([](const std::string& jid) { return jid == "held"; });
  EXPECT_EQ(book.entries().size(), 1u);
  EXPECT_FALSE(SetOne(book, "stale", "wid-c").flag) << "the file still holds the ignored row";
  std::vector<Change> out;
  book.Drop("stale", out);
  EXPECT_TRUE(SetOne(book, "stale", "wid-d").flag) << "its delete was written: stored nowhere";
}

TEST(HolderBookTest, AfterAFlushEveryHoldIsNew) {
  HolderBook book;
  book.Load("stale", "wid-a");
  book.Retain([](const std::string&) { return false; });
  book.Clear();  // FLUSH deletes every record
  EXPECT_TRUE(SetOne(book, "stale", "wid-b").flag);
}

}  // namespace
}  // namespace bulkhead
