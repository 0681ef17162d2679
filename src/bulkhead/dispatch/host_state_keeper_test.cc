#include "bulkhead/dispatch/host_state_keeper.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/dispatch/testing/store_timing.h"

namespace bulkhead {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

// Each test runs with the store answering inline and deferred (dispatch/testing/store_timing.h).
class HostStateKeeperTest : public ::testing::TestWithParam<StoreTiming> {
 protected:
  HostStateKeeperTest() {
    store_ = OpenTimedStore(GetParam(), io_);
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
    compartments_config_.compartment.breaker.failure_threshold = 1;
    compartments_config_.compartment.unavailable_after = minutes(10);
    compartments_ = std::make_unique<HostCompartments>(compartments_config_, rng_);
    outcomes_ = std::make_unique<OutcomeJobs>(*engine_, clock_, "bulkhead", stats_);
    keeper_ = std::make_unique<HostStateKeeper>(*store_, *compartments_, *outcomes_, clock_);
  }

  // One failed (or healthy) attempt for `host`, reported as the dispatcher would.
  void Attempt(const std::string& host, bool ok) {
    std::vector<HostDemand> demand = {{host, 1}};
    auto grants = compartments_->Schedule(demand, clock_.Now());
    ASSERT_EQ(grants.size(), 1u);
    Outcome outcome = ok ? Outcome{OutcomeClass::kOk, HostSignal::kHealthy, "ok"}
                         : Outcome{OutcomeClass::kRetryable, HostSignal::kFailure, "refused"};
    compartments_->OnResult(grants[0], outcome, seconds(1), clock_.Now());
    keeper_->AfterResult(host, clock_.Now());
    Settle(io_);
  }
  // Saves `record` as a previous run left it.
  void Put(const HostStateRecord& record) {
    Status s = Await<Status>(io_, "a host state write", [&](std::function<void(Status)> done) {
      store_->host_states().Put(record, std::move(done));
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Restore, run until it is done.
  void Restore() {
    auto done = std::make_shared<bool>(false);
    keeper_->Restore([done] { *done = true; });
    RunHandlersUntil(
        io_, [&] { return *done; }, "Restore");
  }
  std::vector<HostStateRecord> Saved() {
    Settle(io_);
    return HostStatesOn(io_, *store_);
  }
  std::vector<std::string> OutcomeTypes() {
    std::vector<std::string> out;
    Settle(io_);
    for (const JobRecord& job : TakeAllOn(io_, *store_, "bulkhead", clock_.Now())) {
      out.push_back(job.jobtype);
    }
    return out;
  }

  Config config_;
  ManualClock clock_;
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  HostCompartmentsConfig compartments_config_;
  std::unique_ptr<HostCompartments> compartments_;
  DispatcherStats stats_;
  std::unique_ptr<OutcomeJobs> outcomes_;
  std::unique_ptr<HostStateKeeper> keeper_;
};

TEST(HostStateRowTest, RowAndCompartmentStateMapOneToOne) {
  CompartmentState state;
  state.breaker_open_until = FromUnixMicros(1'700'000'030'000'000);
  state.breaker_series_openings = 2;
  state.breaker_openings = 5;
  state.failing_since = FromUnixMicros(1'699'999'000'000'000);
  state.retry_after_until = FromUnixMicros(1'700'000'060'000'000);
  HostStateRecord row = ToHostStateRecord("h.example", state, /*unavailable=*/true);
  EXPECT_EQ(row.host, "h.example");
  EXPECT_EQ(row.breaker_open_until_us, 1'700'000'030'000'000);
  EXPECT_EQ(row.breaker_series_openings, 2);
  EXPECT_EQ(row.breaker_openings, 5);
  EXPECT_EQ(row.failing_since_us, 1'699'999'000'000'000);
  EXPECT_EQ(row.retry_after_until_us, 1'700'000'060'000'000);
  EXPECT_TRUE(row.unavailable);
  EXPECT_EQ(ToCompartmentState(row), state);
  HostStateRecord healthy = ToHostStateRecord("h.example", CompartmentState{}, false);
  EXPECT_EQ(healthy.breaker_open_until_us, 0) << "0 stands for none";
  EXPECT_TRUE(ToCompartmentState(healthy).healthy());
}

TEST_P(HostStateKeeperTest, FailingHostIsSavedOnceAndRemovedWhenHealthy) {
  Attempt("h.example", /*ok=*/false);
  auto saved = Saved();
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].host, "h.example");
  EXPECT_NE(saved[0].breaker_open_until_us, 0) << "threshold 1: the breaker opened";
  EXPECT_NE(saved[0].failing_since_us, 0);
  EXPECT_FALSE(saved[0].unavailable);
  EXPECT_EQ(keeper_->saved_count(), 1u);

  clock_.Advance(minutes(1));  // past the open interval: a probe may go
  Attempt("h.example", /*ok=*/true);
  EXPECT_TRUE(Saved().empty());
  EXPECT_EQ(keeper_->saved_count(), 0u);
  EXPECT_TRUE(OutcomeTypes().empty()) << "never unavailable: nothing announced";
}

TEST_P(HostStateKeeperTest, UnavailableIsAnnouncedSavedAndClearedByAHealthyAnswer) {
  Attempt("h.example", false);
  clock_.Advance(minutes(11));
  Attempt("h.example", false);
  EXPECT_TRUE(keeper_->announced_unavailable("h.example"));
  EXPECT_EQ(OutcomeTypes(), std::vector<std::string>{kHostUnavailableJobType});
  ASSERT_EQ(Saved().size(), 1u);
  EXPECT_TRUE(Saved()[0].unavailable);

  clock_.Advance(minutes(30));
  Attempt("h.example", true);
  EXPECT_FALSE(keeper_->announced_unavailable("h.example"));
  EXPECT_EQ(OutcomeTypes(), std::vector<std::string>{kHostAvailableJobType});
  EXPECT_TRUE(Saved().empty());
}

TEST_P(HostStateKeeperTest, RestoreReadsTheRowsBackIntoTheCompartments) {
  const TimePoint now = clock_.Now();
  CompartmentState open;
  open.breaker_open_until = now + minutes(5);
  open.breaker_series_openings = 1;
  open.breaker_openings = 1;
  open.failing_since = now - minutes(20);
  Put(ToHostStateRecord("dead.example", open, true));
  auto done = std::make_shared<bool>(false);
  keeper_->Restore([done] { *done = true; });
  ASSERT_TRUE(RunHandlersUntil(
      io_, [&] { return *done; }, "Restore"))
      << "Restore runs `done`";
  const Compartment* c = compartments_->Find("dead.example");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->breaker().state(now), BreakerState::kOpen);
  EXPECT_EQ(c->State(now).failing_since, open.failing_since);
  EXPECT_TRUE(keeper_->announced_unavailable("dead.example"));
  EXPECT_EQ(keeper_->saved_count(), 1u);
}

TEST_P(HostStateKeeperTest, EvictedHostsThatWereNotAnnouncedAreRemoved) {
  const TimePoint now = clock_.Now();
  CompartmentState failing;
  failing.failing_since = now - minutes(1);
  Put(ToHostStateRecord("gone.example", failing, false));
  Restore();
  ASSERT_NE(compartments_->Find("gone.example"), nullptr);
  keeper_->SaveEvicted(now);
  Settle(io_);
  EXPECT_EQ(Saved().size(), 1u) << "its compartment is still there";
  compartments_->EvictIdle(now + compartments_config_.failing_retention + minutes(1));
  ASSERT_EQ(compartments_->Find("gone.example"), nullptr);
  keeper_->SaveEvicted(now + compartments_config_.failing_retention + minutes(1));
  EXPECT_TRUE(Saved().empty());
}

INSTANTIATE_TEST_SUITE_P(StoreTimings, HostStateKeeperTest, kBothTimings, StoreTimingName);

}  // namespace
}  // namespace bulkhead
