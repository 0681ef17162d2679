#include "bulkhead/compartment/host_compartments.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "bulkhead/compartment/testing/outcomes.h"

namespace bulkhead {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::ElementsAre;

// Fixed per-host cap of `per_host`, so fairness is tested apart from adaptation.
HostCompartmentsConfig Config(int global, int per_host) {
  HostCompartmentsConfig c;
  c.global_max_in_flight = global;
  c.compartment.limit.initial_limit = per_host;
  c.compartment.limit.max_limit = per_host;
  c.compartment.limit.min_limit = per_host;
  c.compartment.breaker.failure_threshold = 2;
  c.compartment.breaker.base_open_interval = seconds(30);
  c.compartment.breaker.jitter_fraction = 0;
  c.idle_eviction = minutes(15);
  c.failing_retention = hours(24 * 8);
  return c;
}

std::map<std::string, int> CountByHost(const std::vector<Grant>& grants) {
  std::map<std::string, int> out;
  for (const Grant& g : grants) ++out[g.host];
  return out;
}

std::vector<std::string> Hosts(const std::vector<Grant>& grants) {
  std::vector<std::string> out;
  for (const Grant& g : grants) out.push_back(g.host);
  return out;
}

class RegistryTest : public ::testing::Test {
 protected:
  void Make(int global, int per_host) {
    reg_ = std::make_unique<HostCompartments>(Config(global, per_host), rng_);
  }
  std::vector<Grant> Schedule(std::vector<HostDemand> demand) {
    return reg_->Schedule(demand, clock_.Now());
  }
  void Finish(const Grant& g, const Outcome& o = kOk) {
    reg_->OnResult(g, o, milliseconds(100), clock_.Now());
  }
  TimePoint Now() const { return clock_.Now(); }

  ManualClock clock_;
  ScriptedRng rng_;
  std::unique_ptr<HostCompartments> reg_;
};

TEST_F(RegistryTest, GetCreatesOnceAndFindDoesNotCreate) {
  Make(10, 4);
  EXPECT_EQ(reg_->Find("a.example"), nullptr);
  Compartment& a = reg_->Get("a.example", Now());
  EXPECT_EQ(&reg_->Get("a.example", Now()), &a);
  EXPECT_EQ(reg_->Find("a.example"), &a);
  EXPECT_EQ(reg_->size(), 1u);
}

TEST_F(RegistryTest, ACapOverrideAppliesToItsPrefixOnly) {
  HostCompartmentsConfig c = Config(100, 4);
  AdaptiveLimitConfig relay = c.compartment.limit;
  relay.initial_limit = relay.min_limit = relay.max_limit = 50;
  c.cap_overrides.push_back({"apns:", relay});
  reg_ = std::make_unique<HostCompartments>(c, rng_);
  auto g = CountByHost(Schedule({{"apns:toot", 80}, {"a.example", 80}}));
  EXPECT_EQ(g["apns:toot"], 50);
  EXPECT_EQ(g["a.example"], 4);
}

TEST_F(RegistryTest, UncontendedDemandIsGrantedUpToEachHostsCap) {
  Make(100, 4);
  std::vector<Grant> g = Schedule({{"a.example", 10}, {"b.example", 2}});
  EXPECT_EQ(CountByHost(g), (std::map<std::string, int>{{"a.example", 4}, {"b.example", 2}}));
  EXPECT_EQ(reg_->global_in_flight(), 6);
  EXPECT_EQ(reg_->Find("a.example")->in_flight(), 4);
  for (const Grant& x : g) EXPECT_FALSE(x.parked_job_id.has_value());
}

TEST_F(RegistryTest, GrantsAreRoundRobinAcrossHosts) {
  Make(100, 4);
  std::vector<Grant> g = Schedule({{"a", 3}, {"b", 3}, {"c", 1}});
  EXPECT_THAT(Hosts(g), ElementsAre("a", "b", "c", "a", "b", "a", "b"));
  // The next call starts after the host served first last time.
  for (const Grant& x : g) Finish(x);
  g = Schedule({{"a", 1}, {"b", 1}, {"c", 1}});
  EXPECT_THAT(Hosts(g), ElementsAre("b", "c", "a"));
}

TEST_F(RegistryTest, GlobalCapIsNeverExceeded) {
  Make(5, 4);
  std::vector<Grant> g = Schedule({{"a", 10}, {"b", 10}, {"c", 10}});
  EXPECT_EQ(g.size(), 5u);
  EXPECT_EQ(reg_->global_in_flight(), 5);
  EXPECT_TRUE(Schedule({{"d", 1}}).empty());
  Finish(g[0]);
  EXPECT_EQ(reg_->global_in_flight(), 4);
  EXPECT_EQ(Schedule({{"d", 1}}).size(), 1u);
}

TEST_F(RegistryTest, AloneAHostMayUseMoreThanAFairShare) {
  Make(4, 8);
  std::vector<Grant> g = Schedule({{"a", 10}});
  EXPECT_EQ(g.size(), 4u);
}

TEST_F(RegistryTest, HostAboveFairShareGetsNoSlotWhileOthersWait) {
  Make(4, 8);
  std::vector<Grant> a = Schedule({{"a", 10}});
  ASSERT_EQ(a.size(), 4u);
  // b arrives: nothing free.
  EXPECT_TRUE(Schedule({{"a", 6}, {"b", 5}}).empty());
  // Each slot a frees goes to b until both hold the fair share of 4 / 2 = 2.
  Finish(a[0]);
  EXPECT_THAT(Hosts(Schedule({{"a", 6}, {"b", 5}})), ElementsAre("b"));
  Finish(a[1]);
  EXPECT_THAT(Hosts(Schedule({{"a", 6}, {"b", 4}})), ElementsAre("b"));
  // Now a is at its share: the next freed slot is shared round robin again.
  Finish(a[2]);
  std::vector<Grant> g = Schedule({{"a", 6}, {"b", 3}});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(reg_->Find("a")->in_flight() + reg_->Find("b")->in_flight(), 4);
  EXPECT_LE(std::abs(reg_->Find("a")->in_flight() - reg_->Find("b")->in_flight()), 2);
}

TEST_F(RegistryTest, SpareSlotsGoToHostsThatCanUseThem) {
  // Max-min fairness: b only wants 1, so a gets the rest above its share of 3.
  Make(6, 8);
  std::vector<Grant> g = Schedule({{"a", 10}, {"b", 1}});
  EXPECT_EQ(CountByHost(g), (std::map<std::string, int>{{"a", 5}, {"b", 1}}));
}

TEST_F(RegistryTest, HostLimitedByItsOwnCapLeavesTheRestToOthers) {
  Make(8, 2);  // per-host cap 2
  std::vector<Grant> g = Schedule({{"a", 10}, {"b", 10}, {"c", 10}});
  EXPECT_EQ(CountByHost(g), (std::map<std::string, int>{{"a", 2}, {"b", 2}, {"c", 2}}));
}

TEST_F(RegistryTest, ParkedJobsAreGrantedFirstAndInOrder) {
  Make(100, 2);
  ASSERT_TRUE(reg_->Park("a", "j1", Now()).ok());
  ASSERT_TRUE(reg_->Park("a", "j2", Now()).ok());
  ASSERT_TRUE(reg_->Park("a", "j3", Now()).ok());
  // Parked hosts take part without being listed; fresh work waits behind parked.
  std::vector<Grant> g = Schedule({{"a", 5}});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].parked_job_id, "j1");
  EXPECT_EQ(g[1].parked_job_id, "j2");
  Finish(g[0]);
  g = Schedule({});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].parked_job_id, "j3");
  Finish(g[0]);
  g = Schedule({{"a", 5}});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_FALSE(g[0].parked_job_id.has_value());
}

TEST_F(RegistryTest, HostWithOpenBreakerDoesNotReduceOthersShare) {
  Make(4, 8);
  // Open a's breaker: two timeouts.
  for (int i = 0; i < 2; ++i) {
    std::vector<Grant> g = Schedule({{"a", 1}});
    ASSERT_EQ(g.size(), 1u);
    reg_->OnResult(g[0], kTimeout, seconds(30), Now());
  }
  ASSERT_EQ(reg_->Find("a")->breaker().state(Now()), BreakerState::kOpen);
  ASSERT_TRUE(reg_->Park("a", "ja", Now()).ok());
  std::vector<Grant> g = Schedule({{"a", 10}, {"b", 10}});
  EXPECT_EQ(CountByHost(g), (std::map<std::string, int>{{"b", 4}}));
  EXPECT_EQ(reg_->Find("a")->parked_count(), 1u);
  EXPECT_EQ(reg_->NextWakeup(Now()), Now() + seconds(30));
}

TEST_F(RegistryTest, HalfOpenHostGetsExactlyOneProbe) {
  Make(10, 4);
  for (int i = 0; i < 2; ++i) {
    std::vector<Grant> g = Schedule({{"a", 1}});
    ASSERT_EQ(g.size(), 1u);
    reg_->OnResult(g[0], kTimeout, seconds(30), Now());
  }
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(reg_->Park("a", JobId(i), Now()).ok());
  EXPECT_TRUE(Schedule({}).empty());
  clock_.Advance(seconds(30));
  EXPECT_EQ(reg_->NextWakeup(Now()), std::nullopt);  // startable now
  std::vector<Grant> g = Schedule({{"a", 3}});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(g[0].permit.breaker.probe);
  EXPECT_EQ(g[0].parked_job_id, "j0");
  EXPECT_TRUE(Schedule({{"a", 3}}).empty());
  Finish(g[0]);  // probe succeeds: closed, the cap of 4 applies again
  g = Schedule({});
  EXPECT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].parked_job_id, "j1");
}

TEST_F(RegistryTest, RetryAfterReachesTheCompartment) {
  Make(10, 4);
  std::vector<Grant> g = Schedule({{"a", 1}});
  reg_->OnResult(g[0], {OutcomeClass::kRetryable, HostSignal::kOverloaded, "http 429"},
                 milliseconds(10), Now(), Now() + seconds(20));
  EXPECT_TRUE(Schedule({{"a", 1}, {"b", 1}}).size() == 1u);
  ASSERT_TRUE(reg_->Park("a", "j", Now()).ok());
  EXPECT_EQ(reg_->NextWakeup(Now()), Now() + seconds(20));
  clock_.Advance(seconds(20));
  g = Schedule({});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].parked_job_id, "j");
}

TEST_F(RegistryTest, OnResultUpdatesBothCounts) {
  Make(10, 4);
  std::vector<Grant> g = Schedule({{"a", 2}});
  Finish(g[0]);
  EXPECT_EQ(reg_->global_in_flight(), 1);
  EXPECT_EQ(reg_->Find("a")->in_flight(), 1);
  EXPECT_EQ(reg_->Find("a")->Snapshot(Now()).successes, 1);
}

TEST_F(RegistryTest, EvictsIdleHealthyHostsButKeepsFailingOnes) {
  Make(10, 4);
  Finish(Schedule({{"healthy", 1}})[0]);
  std::vector<Grant> g = Schedule({{"dead", 1}});
  reg_->OnResult(g[0], kTimeout, seconds(30), Now());
  Schedule({{"busy", 1}});  // stays in flight
  ASSERT_TRUE(reg_->Park("parked", "j", Now()).ok());
  EXPECT_EQ(reg_->EvictIdle(Now()), 0u);
  clock_.Advance(minutes(15));
  EXPECT_EQ(reg_->EvictIdle(Now()), 1u);
  EXPECT_EQ(reg_->Find("healthy"), nullptr);
  EXPECT_NE(reg_->Find("dead"), nullptr);
  EXPECT_NE(reg_->Find("busy"), nullptr);
  EXPECT_NE(reg_->Find("parked"), nullptr);
  clock_.Advance(hours(24 * 8));
  EXPECT_EQ(reg_->EvictIdle(Now()), 1u);
  EXPECT_EQ(reg_->Find("dead"), nullptr);
  EXPECT_EQ(reg_->size(), 2u);
}

TEST_F(RegistryTest, IsUnavailable) {
  Make(10, 4);
  EXPECT_FALSE(reg_->IsUnavailable("never.example", Now()));
  std::vector<Grant> g = Schedule({{"dead", 1}});
  reg_->OnResult(g[0], kTimeout, seconds(30), Now());
  EXPECT_FALSE(reg_->IsUnavailable("dead", Now()));
  clock_.Advance(hours(24 * 7));
  EXPECT_TRUE(reg_->IsUnavailable("dead", Now()));
  EXPECT_EQ(reg_->Find("never.example"), nullptr);  // asking does not create
}

TEST_F(RegistryTest, RestoredHostParksItsJobsUntilTheProbe) {
  Make(10, 4);
  CompartmentState saved;
  saved.breaker_open_until = Now() + seconds(30);
  saved.breaker_series_openings = 1;
  saved.breaker_openings = 1;
  saved.failing_since = Now() - hours(1);
  reg_->Restore("dead", saved, Now());
  EXPECT_EQ(reg_->Find("dead")->State(Now()), saved);
  EXPECT_THAT(Hosts(Schedule({{"dead", 3}, {"ok", 1}})), ElementsAre("ok"));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reg_->Park("dead", JobId(i), Now()).ok());
  EXPECT_EQ(reg_->NextWakeup(Now()), Now() + seconds(30));
  clock_.Advance(seconds(30));
  std::vector<Grant> g = Schedule({});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(g[0].permit.breaker.probe);
  EXPECT_EQ(g[0].parked_job_id, "j0");
}

TEST_F(RegistryTest, SnapshotIsOrderedByHost) {
  Make(10, 4);
  Schedule({{"b", 1}, {"a", 2}});
  std::vector<CompartmentSnapshot> s = reg_->Snapshot(Now());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].host, "a");
  EXPECT_EQ(s[0].in_flight, 2);
  EXPECT_EQ(s[1].host, "b");
}

TEST_F(RegistryTest, DemandForTheSameHostListedTwiceAdds) {
  Make(100, 8);
  ASSERT_TRUE(reg_->Park("b", "p1", Now()).ok());
  std::vector<Grant> g = Schedule({{"c", 1}, {"b", 2}, {"a", 1}, {"b", 1}});
  EXPECT_EQ(CountByHost(g), (std::map<std::string, int>{{"a", 1}, {"b", 4}, {"c", 1}}));
}

TEST_F(RegistryTest, ZeroOrNegativeDemandIsIgnored) {
  Make(10, 4);
  EXPECT_TRUE(Schedule({{"a", 0}, {"b", -3}}).empty());
  EXPECT_EQ(reg_->size(), 0u);
}

TEST_F(RegistryTest, NonsenseGlobalCapActsAsOne) {
  HostCompartmentsConfig c = Config(0, 4);
  HostCompartments reg(c, rng_);
  std::vector<HostDemand> d = {{"a", 5}};
  EXPECT_EQ(reg.Schedule(d, Now()).size(), 1u);
  EXPECT_EQ(reg.global_max_in_flight(), 1);
}

// Cluster share: with N nodes, this node's global cap and every host's cap bounds are
// divided by N (floor, at least 1), for compartments made before and after; a smaller share
// cancels nothing in flight, it only holds new grants back until under it.
TEST_F(RegistryTest, NodesDivideTheGlobalAndHostCaps) {
  Make(10, 6);
  reg_->Get("a", Now());
  reg_->SetNodes(3);
  EXPECT_EQ(reg_->global_max_in_flight(), 3);
  EXPECT_EQ(reg_->host_cap_max(), 2);
  EXPECT_EQ(reg_->Find("a")->limit(), 2) << "a compartment made before";
  EXPECT_EQ(reg_->Get("b", Now()).limit(), 2) << "and one made after";
  std::vector<Grant> first = Schedule({{"a", 5}, {"b", 5}});
  EXPECT_EQ(first.size(), 3u) << "the node's share of the global cap";

  reg_->SetNodes(1);
  std::vector<Grant> more = Schedule({{"a", 5}, {"b", 5}});
  EXPECT_EQ(CountByHost(more), (std::map<std::string, int>{{"a", 3}, {"b", 4}}))
      << "the whole cap once alone: 10 in all, 5 per host (under 6), round robin";
  EXPECT_EQ(reg_->global_in_flight(), 10);

  reg_->SetNodes(5);
  EXPECT_EQ(reg_->global_max_in_flight(), 2);
  EXPECT_EQ(reg_->global_in_flight(), 10) << "nothing in flight is cancelled";
  for (const Grant& g : more) Finish(g);
  EXPECT_TRUE(Schedule({{"a", 5}, {"b", 5}}).empty()) << "3 still in flight, above the share of 2";
  Finish(first[0]);
  Finish(first[1]);
  EXPECT_EQ(Schedule({{"a", 5}, {"b", 5}}).size(), 1u) << "under the share again: one at a time";

  reg_->SetNodes(20);
  EXPECT_EQ(reg_->global_max_in_flight(), 1) << "never below 1";
  EXPECT_EQ(reg_->host_cap_max(), 1);
}

}  // namespace
}  // namespace bulkhead
