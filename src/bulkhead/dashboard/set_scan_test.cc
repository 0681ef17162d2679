#include "bulkhead/dashboard/set_scan.h"

#include <gtest/gtest.h>

#include "bulkhead/store/testing/make_job.h"

namespace bulkhead::dashboard {
namespace {

class SetScanTest : public ::testing::Test {
 protected:
  SetScanTest() {
    store_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    for (int i = 0; i < 1200; ++i) {
      JobRecord j = MakeJob("j" + std::to_string(i), i % 100 == 0 ? "rare" : "common",
                            JobState::kScheduled, 1000 + i);
      store_->Push(j, [](Status) {});
      j.state = JobState::kDead;
      store_->Move(j, TimePoint{}, [](Status) {});
    }
  }
  JobListResult Scan(ScanRequest req) {
    std::optional<Result<JobListResult>> out;
    ScanSet(*store_, std::move(req), alive_, [&](Result<JobListResult> r) { out = std::move(r); });
    EXPECT_TRUE(out && out->ok());
    return out && out->ok() ? **out : JobListResult{};
  }
  std::unique_ptr<Store> store_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

TEST_F(SetScanTest, UnfilteredPageIsOneListOfItsSize) {
  JobListResult r = Scan({.set = JobState::kDead, .offset = 1190, .want = 25});
  ASSERT_EQ(r.jobs.size(), 10u);
  EXPECT_EQ(r.jobs.front().jid, "j1190");
  EXPECT_EQ(r.positions.front(), 1190u);
  EXPECT_FALSE(r.more);
  EXPECT_EQ(r.scanned, 10u);
  EXPECT_TRUE(Scan({.set = JobState::kDead, .offset = 1175, .want = 24}).more);
}

TEST_F(SetScanTest, FilteredScanStopsAtThePageOrTheBound) {
  auto rare = [](const JobRecord& j) { return j.queue == "rare"; };
  JobListResult r = Scan({.set = JobState::kDead, .offset = 0, .want = 3, .match = rare});
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[2].jid, "j200");
  EXPECT_EQ(r.positions[2], 200u);
  EXPECT_EQ(r.next_offset, 201u);
  EXPECT_TRUE(r.more);
  JobListResult bounded =
      Scan({.set = JobState::kDead, .offset = 0, .want = 25, .max_scan = 350, .match = rare});
  EXPECT_EQ(bounded.jobs.size(), 4u);  // j0, j100, j200, j300
  EXPECT_EQ(bounded.scanned, 350u);
  EXPECT_EQ(bounded.next_offset, 350u);
  EXPECT_TRUE(bounded.more);
  JobListResult tail = Scan({.set = JobState::kDead, .offset = 1000, .want = 25, .match = rare});
  EXPECT_EQ(tail.jobs.size(), 2u);  // j1000, j1100
  EXPECT_FALSE(tail.more);
}

TEST_F(SetScanTest, AGoneOwnerNeverHearsBack) {
  bool called = false;
  std::weak_ptr<bool> gone;
  ScanSet(*store_, {.set = JobState::kDead}, gone, [&](auto) { called = true; });
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace bulkhead::dashboard
