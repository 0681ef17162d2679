// The redo log's two regions (redo_log.h): appends move to the other region only once its
// records are committed, the log reads back in number order across both, a file of the first
// version (one region) is still read, and damage in either region refuses it.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "bulkhead/store/change_codec.h"
#include "bulkhead/store/redo_log.h"
#include "bulkhead/store/testing/make_job.h"

namespace bulkhead {
namespace {

namespace fs = std::filesystem;

class RedoLogRegionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bulkhead_redo_regions_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    redo_ = (dir_ / "store.db-redo").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Record n inserts row n; every record has the same size (a five-digit jid).
  static std::vector<Change> Insert(int64_t n) {
    std::vector<Change> changes(1, Change(Change::Kind::kInsertJob));
    changes[0].id = n;
    std::string digits = std::to_string(n);
    changes[0].job = MakeJob("job-" + std::string(5 - digits.size(), '0') + digits);
    return changes;
  }
  static Status Append(RedoLog& log, int64_t n) {
    auto changes = Insert(n);
    return log.Append(n, {&changes});
  }
  // The size of one record, measured in a log of its own.
  uint64_t RecordBytes() {
    auto log = RedoLog::Open((dir_ / "measure").string(), 1 << 16, 1 << 16);
    EXPECT_TRUE(log.ok());
    EXPECT_TRUE(Append(**log, 1).ok());
    return (*log)->bytes();
  }
  std::vector<int64_t> Seqs() {
    auto read = RedoLog::Read(redo_);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    std::vector<int64_t> out;
    if (read.ok()) {
      for (const auto& r : read->records) out.push_back(r.seq);
    }
    return out;
  }
  std::string File() {
    std::ifstream in(redo_, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  void Write(const std::string& bytes) {
    std::ofstream out(redo_, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // Overwrites bytes in place (the file may be mapped by an open log).
  void Overwrite(uint64_t at, const std::string& bytes) {
    std::fstream f(redo_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  template <typename T>
  static void Put(std::string& to, T v) {
    to.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }

  fs::path dir_;
  std::string redo_;
};

TEST_F(RedoLogRegionsTest, AppendsMoveToTheOtherRegionOnlyOnceItsRecordsAreCommitted) {
  const uint64_t rec = RecordBytes();
  auto opened = RedoLog::Open(redo_, 6 * rec, 2 * rec);  // six records a region, moves after two
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  RedoLog& log = **opened;
  for (int64_t n = 1; n <= 2; ++n) ASSERT_TRUE(Append(log, n).ok());
  EXPECT_EQ(log.active_region(), 0);
  ASSERT_TRUE(Append(log, 3).ok());
  EXPECT_EQ(log.active_region(), 1) << "the second region held nothing: free";
  // Records 1 and 2 are not committed: the second region fills up instead of moving back.
  for (int64_t n = 4; n <= 8; ++n) ASSERT_TRUE(Append(log, n).ok());
  EXPECT_EQ(log.active_region(), 1);
  EXPECT_EQ(Append(log, 9).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(Seqs(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));

  EXPECT_FALSE(log.Committed(1)) << "record 2 of the first region is not committed";
  EXPECT_EQ(Append(log, 9).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(log.Committed(2));
  ASSERT_TRUE(Append(log, 9).ok());
  EXPECT_EQ(log.active_region(), 0);
  EXPECT_EQ(Seqs(), (std::vector<int64_t>{3, 4, 5, 6, 7, 8, 9})) << "records 1 and 2 are gone";

  // Below the threshold appends stay where they are; past it, they move to a free region.
  EXPECT_TRUE(log.Committed(8));
  ASSERT_TRUE(Append(log, 10).ok());
  EXPECT_EQ(log.active_region(), 0);
  ASSERT_TRUE(Append(log, 11).ok());
  EXPECT_EQ(log.active_region(), 1);
  EXPECT_EQ(Seqs(), (std::vector<int64_t>{9, 10, 11}));

  // A record larger than a region is refused even with the other region free.
  auto big = Insert(12);
  big[0].job.payload.append(7 * rec, ' ');
  EXPECT_EQ(log.Append(12, {&big}).code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE(Append(log, 12).ok());
  EXPECT_EQ(Seqs(), (std::vector<int64_t>{9, 10, 11, 12}));
  // A reset empties both.
  log.Reset();
  EXPECT_TRUE(Seqs().empty());
}

TEST_F(RedoLogRegionsTest, AFileOfTheFirstVersionIsReadAndReopenedWithLaterEpochs) {
  // Version 1: "BHRL", version 1, the epoch (7), then records of that epoch; one of epoch 6 (an
  // earlier reset's remains) ends the log.
  std::string file("BHRL", 4);
  Put<uint32_t>(file, 1);
  Put<uint64_t>(file, 7);
  for (auto [epoch, n] : {std::pair<uint64_t, int64_t>{7, 1}, {7, 2}, {7, 3}, {6, 4}}) {
    std::string body;
    Put<uint64_t>(body, epoch);
    Put<int64_t>(body, n);
    EncodeChanges(Insert(n), body);
    file.append("BHR1", 4);
    Put<uint32_t>(file, static_cast<uint32_t>(body.size()));
    Put<uint32_t>(file, static_cast<uint32_t>(
                            crc32(0L, reinterpret_cast<const Bytef*>(body.data()), body.size())));
    file += body;
  }
  file.resize(4096, '\0');
  Write(file);
  auto read = RedoLog::Read(redo_);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->records.size(), 3u);
  EXPECT_EQ(read->records[2].changes[0].job.jid, "job-00003");

  // Reopened: version 2, both epochs after 7, so none of the old records is read again.
  auto log = RedoLog::Open(redo_, 4096, 4096);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  std::string now = File();
  uint32_t version;
  uint64_t epochs[2];
  std::memcpy(&version, now.data() + 4, 4);
  std::memcpy(epochs, now.data() + 8, 16);
  EXPECT_EQ(version, 2u);
  EXPECT_GT(epochs[0], 7u);
  EXPECT_GT(epochs[1], 7u);
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_TRUE(Seqs().empty());
  ASSERT_TRUE(Append(**log, 4).ok());
  EXPECT_EQ(Seqs(), (std::vector<int64_t>{4}));
}

TEST_F(RedoLogRegionsTest, DamageInTheSecondRegionAndANumberInBothRegionsAreRefused) {
  const uint64_t rec = RecordBytes();
  {
    auto log = RedoLog::Open(redo_, 6 * rec, 2 * rec);
    ASSERT_TRUE(log.ok());
    for (int64_t n = 1; n <= 5; ++n) ASSERT_TRUE(Append(**log, n).ok());
    ASSERT_EQ((*log)->active_region(), 1);
    const uint64_t second = (*log)->region_start(1) + rec;  // record 4
    Overwrite(second + 40, "garbage");
    auto read = RedoLog::Read(redo_);
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.status().message().find("the record at byte " + std::to_string(second) +
                                           " is damaged: record 5 follows it"),
              std::string::npos)
        << read.status().message();
  }
  // Record 1 copied to the second region's start, under that region's epoch.
  auto log = RedoLog::Open(redo_, 6 * rec, 2 * rec);
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE(Append(**log, 1).ok());
  const uint64_t start = (*log)->region_start(1);
  std::string file = File();
  Overwrite(start, file.substr((*log)->region_start(0), rec));
  Overwrite(16, file.substr(8, 8));
  auto read = RedoLog::Read(redo_);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("record 1 is in both regions"), std::string::npos)
      << read.status().message();
}

}  // namespace
}  // namespace bulkhead
