// The point of the delivery module, as a deterministic simulation of the real Dispatcher: one
// destination host never answers (every attempt runs into the 30 s deadline) while another
// answers in 200 ms. With compartments the healthy host keeps its full rate and the dead host's
// jobs wait parked, spending neither slots nor retries. A counterfactual run with the breaker off
// and a flat per-host cap shows what the compartments prevent.
//
// The real Dispatcher and Engine run on the memory store, a ManualClock and ScriptedRng, over the
// ScriptedTransport answering each host as scripted: no sleeps, no sockets, no threads. Jobs are
// webhooks (https://HOST/N) carrying `retry` = max_attempts - 1; retries come back through the
// engine's own retry schedule (count^4 + 15 s, no jitter) and scheduler. Every scenario runs with
// the store answering inline and with its answers deferred (dispatch/testing/store_timing.h); the
// simulation settles the loop after each step, so both runs see the same events.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bulkhead/dispatch/dispatcher.h"
#include "bulkhead/dispatch/testing/store_timing.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/transport/testing/scripted_transport.h"

namespace bulkhead {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr char kGood[] = "good.example";
constexpr char kBad[] = "dead.example";
constexpr char kSlow[] = "slow-relay.example";

struct HostStats {
  int arrived = 0;
  int completed = 0;
  int dead = 0;
  int retries_spent = 0;    // attempts beyond the first
  int never_attempted = 0;  // at the end of the run
  int max_attempts = 0;     // of any single job
  Duration max_wait{};      // enqueue → first attempt, over jobs that started
};

struct SimResult {
  std::map<std::string, HostStats> hosts;
  std::vector<CompartmentSnapshot> snapshot;
  int max_global_in_flight = 0;
};

class Simulation {
 public:
  Simulation(StoreTiming timing, const HostCompartmentsConfig& compartments, int max_attempts)
      : max_attempts_(max_attempts) {
    store_ = OpenTimedStore(timing, io_);
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
    engine_->SetJobDoneHandler([this](const JobRecord& job, Duration, bool failed) {
      if (!failed) ++stats_[HostOfJid(job.jid)].completed;
    });
    DispatcherConfig dc;
    dc.compartments = compartments;
    dc.max_retry_after = minutes(10);
    dispatcher_ = std::make_unique<Dispatcher>(io_, *engine_, transport_, /*signer=*/nullptr, keys_,
                                               clock_, rng_, dc);
    engine_->SetBuiltinJobs(dispatcher_.get());
    transport_.AfterEachAnswer([this] { Settle(io_); });
    dispatcher_->Start();
    Settle(io_);
  }
  ~Simulation() { engine_->SetBuiltinJobs(nullptr); }

  ScriptedTransport& transport() { return transport_; }

  // Adds a periodic job source for `host`.
  void Arrivals(const std::string& host, Duration every) { sources_.push_back({host, every, {}}); }

  SimResult Run(Duration length) {
    const TimePoint start = clock_.Now();
    const TimePoint end = start + length;
    for (Source& s : sources_) s.next = start;
    SimResult out;
    while (true) {
      const TimePoint now = clock_.Now();
      transport_.AnswerDue(now);    // results: ACK / FAIL / dead, and the pumps they cause
      engine_->RunScheduledOnce();  // retries due go back to the delivery queue
      Settle(io_);
      for (Source& s : sources_) {
        while (s.next <= now && s.next < end) {
          Push(s.host, s.next);
          s.next += s.every;
        }
      }
      dispatcher_->Pump();  // what the dispatcher's timer does: probes, Retry-After ends
      Settle(io_);
      const int in_flight = static_cast<int>(transport_.InFlight());
      out.max_global_in_flight = std::max(out.max_global_in_flight, in_flight);
      EXPECT_EQ(dispatcher_->compartments().global_in_flight(), in_flight);

      // Next event: an answer, a retry coming due, an arrival, or the dispatcher's timer.
      std::optional<TimePoint> next = transport_.NextAnswerAt();
      auto consider = [&](std::optional<TimePoint> t) {
        if (t && (!next || *t < *next)) next = t;
      };
      consider(NextRetry());
      for (const Source& s : sources_) {
        if (s.next < end) consider(s.next);
      }
      consider(dispatcher_->next_wakeup());
      if (!next || *next >= end) break;
      EXPECT_GT(*next, now) << "simulation would spin";
      clock_.Set(*next);
    }
    Tally();
    out.hosts = stats_;
    out.snapshot = dispatcher_->Snapshot().hosts;
    return out;
  }

 private:
  struct Source {
    std::string host;
    Duration every;
    TimePoint next;
  };

  static std::string HostOfJid(const std::string& jid) { return jid.substr(0, jid.find('#')); }

  void Push(const std::string& host, TimePoint enqueued) {
    const std::string n = std::to_string(next_id_++);
    const std::string url = "https://" + host + "/" + n;
    nlohmann::json doc = {{"jid", host + "#" + n},
                          {"jobtype", "webhook"},
                          {"retry", max_attempts_ - 1},
                          {"args", nlohmann::json::array({nlohmann::json{{"url", url}}})}};
    auto job = ParseJobDocument(doc, clock_.Now());
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    Status pushed = Await<Status>(io_, "PUSH", [&](std::function<void(Status)> done) {
      engine_->Push(std::move(*job), std::move(done));
    });
    ASSERT_TRUE(pushed.ok()) << pushed.ToString();
    Settle(io_);  // the dispatcher takes and sends what it may
    enqueued_[url] = enqueued;
    ++stats_[host].arrived;
  }

  std::optional<TimePoint> NextRetry() {
    auto r = Await<Result<std::vector<JobRecord>>>(
        io_, "the first retry", [&](std::function<void(Result<std::vector<JobRecord>>)> cb) {
          store_->List(JobState::kRetry, 0, 1, std::move(cb));
        });
    if (!r.ok() || r->empty()) return std::nullopt;
    return FromUnixMicros(r->front().score);
  }

  // Per job: attempts and first attempt from the transport's record, dead from the store.
  void Tally() {
    struct Attempts {
      int n = 0;
      TimePoint first{};
    };
    std::map<std::string, Attempts> by_url;
    for (const auto& call : transport_.calls) {
      Attempts& a = by_url[call.request.url];
      if (a.n++ == 0) a.first = call.sent;
    }
    for (const auto& [url, enqueued] : enqueued_) {
      HostStats& h = stats_[ScriptedTransport::HostOf(url)];
      auto it = by_url.find(url);
      if (it == by_url.end()) {
        ++h.never_attempted;
        continue;
      }
      h.retries_spent += it->second.n - 1;
      h.max_attempts = std::max(h.max_attempts, it->second.n);
      h.max_wait = std::max(h.max_wait, it->second.first - enqueued);
    }
    for (const auto& job : ListOn(io_, *store_, JobState::kDead)) ++stats_[HostOfJid(job.jid)].dead;
  }

  const int max_attempts_;
  Config config_;
  ManualClock clock_;
  ScriptedRng rng_;  // empty: no jitter, every run identical
  boost::asio::io_context io_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  InMemoryKeyRing keys_;
  ScriptedTransport transport_{clock_};
  std::unique_ptr<Dispatcher> dispatcher_;
  std::vector<Source> sources_;
  std::map<std::string, TimePoint> enqueued_;  // by URL
  std::map<std::string, HostStats> stats_;
  uint64_t next_id_ = 0;
};

// Mastodon-like: 15 slots in all (the incident's 15 worker threads), breaker and AIMD defaults.
HostCompartmentsConfig BulkheadConfig() {
  HostCompartmentsConfig c;
  c.global_max_in_flight = 15;
  c.compartment.limit.max_limit = 15;
  return c;
}

// No compartments to speak of: a flat per-host cap equal to the pool and a breaker that never
// opens. Fair share still applies.
HostCompartmentsConfig NoCompartmentsConfig() {
  HostCompartmentsConfig c = BulkheadConfig();
  c.compartment.limit.initial_limit = c.compartment.limit.min_limit = 15;
  c.compartment.breaker.failure_threshold = 1'000'000'000;
  c.compartment.slow_call_threshold = Duration::zero();
  return c;
}

// The webhook deadline (30 s total) cuts kNeverAnswers' attempts with kTimeoutTotal.
const ScriptedTransport::Behaviour kHealthy{milliseconds(200), ScriptedTransport::Status(202)};
const ScriptedTransport::Behaviour kNeverAnswers{minutes(5), ScriptedTransport::Status(202)};

void Print(const char* name, const SimResult& r) {
  if (getenv("SIM_VERBOSE") == nullptr) return;
  for (const auto& [host, h] : r.hosts) {
    printf(
        "%s %s arrived=%d completed=%d dead=%d retries=%d never=%d max_attempts=%d wait=%lldms\n",
        name, host.c_str(), h.arrived, h.completed, h.dead, h.retries_spent, h.never_attempted,
        h.max_attempts, (long long)std::chrono::duration_cast<milliseconds>(h.max_wait).count());
  }
  for (const auto& s : r.snapshot) {
    printf("%s snap %s inflight=%d limit=%d breaker=%s openings=%lld parked=%zu fail=%lld\n", name,
           s.host.c_str(), s.in_flight, s.limit, BreakerStateName(s.breaker),
           (long long)s.breaker_openings, s.parked, (long long)s.failures);
  }
}

SimResult RunScenario(StoreTiming timing, const HostCompartmentsConfig& config,
                      bool with_bad_host) {
  Simulation sim(timing, config, /*max_attempts=*/5);
  sim.transport().Script(kGood, kHealthy);
  sim.transport().Script(kBad, kNeverAnswers);
  sim.Arrivals(kGood, milliseconds(20));                     // 50 jobs/s × 200 ms: needs 10 slots
  if (with_bad_host) sim.Arrivals(kBad, milliseconds(100));  // 10 jobs/s
  SimResult r = sim.Run(minutes(10));
  Print(with_bad_host ? "mixed" : "alone", r);
  return r;
}

const CompartmentSnapshot& SnapshotOf(const SimResult& r, const std::string& host) {
  auto it = std::find_if(r.snapshot.begin(), r.snapshot.end(),
                         [&](const CompartmentSnapshot& s) { return s.host == host; });
  EXPECT_NE(it, r.snapshot.end());
  return *it;
}

class DispatcherSimulationTest : public ::testing::TestWithParam<StoreTiming> {};

TEST_P(DispatcherSimulationTest, HealthyHostKeepsFullRateBesideADeadHost) {
  const SimResult alone = RunScenario(GetParam(), BulkheadConfig(), /*with_bad_host=*/false);
  const SimResult mixed = RunScenario(GetParam(), BulkheadConfig(), /*with_bad_host=*/true);

  const HostStats& good_alone = alone.hosts.at(kGood);
  const HostStats& good = mixed.hosts.at(kGood);
  EXPECT_EQ(good_alone.arrived, 30'000);
  EXPECT_EQ(good.arrived, 30'000);
  // Every healthy job that could finish within the run did, exactly as without the dead host.
  EXPECT_GE(good.completed, good.arrived - 10);
  EXPECT_EQ(good.completed, good_alone.completed);
  EXPECT_EQ(good.dead, 0);
  EXPECT_EQ(good.retries_spent, 0);
  // Slots were granted as fast as without the dead host. The only waits are the first seconds while
  // the healthy host's cap grows from 4 to the 10 it needs (AIMD ramp), the same in both runs.
  EXPECT_EQ(good.max_wait, good_alone.max_wait);
  EXPECT_LT(good.max_wait, seconds(1));
  EXPECT_LE(mixed.max_global_in_flight, 15);
}

TEST_P(DispatcherSimulationTest, DeadHostsJobsWaitParkedWithoutSpendingRetries) {
  const SimResult r = RunScenario(GetParam(), BulkheadConfig(), /*with_bad_host=*/true);
  const HostStats& bad = r.hosts.at(kBad);
  const CompartmentSnapshot& snap = SnapshotOf(r, kBad);

  EXPECT_EQ(bad.arrived, 6'000);
  EXPECT_EQ(bad.completed, 0);
  // The breaker opened and stays open (or is between probes); the cap fell to the floor.
  EXPECT_GE(snap.breaker_openings, 4);
  EXPECT_NE(snap.breaker, BreakerState::kClosed);
  EXPECT_EQ(snap.limit, 1);
  // Only a handful of attempts in 10 minutes (9 with the defaults): the first window of 4 (all time
  // out at 30 s and halve the cap), 2 more (the 5th failure opens the breaker at 60 s), then one
  // probe per open interval of 30 s, 60 s, 120 s; the next probe is due at 600 s.
  const int attempts = bad.retries_spent + (bad.arrived - bad.never_attempted);
  EXPECT_LE(attempts, 15);
  EXPECT_GE(bad.never_attempted, bad.arrived - 15);
  // No job was pushed towards death by the outage: nobody exhausted retries, nobody even retried
  // twice. The rest wait parked.
  EXPECT_EQ(bad.dead, 0);
  EXPECT_LE(bad.max_attempts, 2);
  EXPECT_GE(snap.parked, static_cast<size_t>(bad.arrived - 20));
  EXPECT_EQ(snap.failures, attempts - snap.in_flight);
  EXPECT_TRUE(snap.failing_since.has_value());
  EXPECT_FALSE(snap.unavailable);  // 10 minutes is far from 7 days
}

TEST_P(DispatcherSimulationTest, WithoutCompartmentsTheDeadHostEatsSlotsAndRetries) {
  const SimResult r = RunScenario(GetParam(), NoCompartmentsConfig(), /*with_bad_host=*/true);
  const HostStats& good = r.hosts.at(kGood);
  const HostStats& bad = r.hosts.at(kBad);
  // The dead host holds its fair share of slots for 30 s at a time, so the healthy host, which
  // needs 10 of 15, gets 7 or 8: its queue grows without bound.
  EXPECT_GT(good.max_wait, minutes(1));
  EXPECT_LT(good.completed, good.arrived * 9 / 10);
  // And the dead host's jobs burn attempts (each one a retry spent, 30 s of a slot) on timeouts.
  const int attempts = bad.retries_spent + (bad.arrived - bad.never_attempted);
  EXPECT_GT(attempts, 100);
  EXPECT_GT(bad.arrived - bad.never_attempted, 100);
}

// The incident itself: a push relay that answers, but only after 25 s. Every answer is a success,
// so a breaker counting only errors never trips (Mastodon's stoplight); here the slow answers
// shrink the host's cap to 1 and the slow-call rule opens the breaker.
TEST_P(DispatcherSimulationTest, SlowRelayIsSqueezedWhileTheHealthyHostKeepsItsRate) {
  const SimResult alone = RunScenario(GetParam(), BulkheadConfig(), /*with_bad_host=*/false);
  Simulation sim(GetParam(), BulkheadConfig(), /*max_attempts=*/5);
  sim.transport().Script(kGood, kHealthy);
  sim.transport().Script(kSlow, {seconds(25), ScriptedTransport::Status(201)});
  sim.Arrivals(kGood, milliseconds(20));
  sim.Arrivals(kSlow, milliseconds(100));
  const SimResult r = sim.Run(minutes(10));
  Print("slow", r);
  const HostStats& slow = r.hosts.at(kSlow);
  const CompartmentSnapshot& snap = SnapshotOf(r, kSlow);
  EXPECT_EQ(snap.limit, 1);
  EXPECT_GE(snap.breaker_openings, 1);
  EXPECT_GE(slow.completed, 5);  // it does deliver, slowly
  EXPECT_EQ(slow.dead, 0);
  EXPECT_EQ(slow.retries_spent, 0);
  EXPECT_FALSE(snap.failing_since.has_value());        // answering, so never "unavailable"
  EXPECT_LE(sim.transport().max_in_flight(kSlow), 4);  // the initial cap, never more
  EXPECT_EQ(r.hosts.at(kGood).completed, alone.hosts.at(kGood).completed);
  EXPECT_EQ(r.hosts.at(kGood).max_wait, alone.hosts.at(kGood).max_wait);
}

TEST_P(DispatcherSimulationTest, RateLimitedHostIsLeftAloneUntilRetryAfter) {
  HostCompartmentsConfig config = BulkheadConfig();
  Simulation sim(GetParam(), config, /*max_attempts=*/25);
  sim.transport().Script(kGood, kHealthy);
  sim.transport().Script(
      kBad, {milliseconds(50), ScriptedTransport::Status(429, {{"Retry-After", "120"}})});
  sim.Arrivals(kGood, milliseconds(20));
  sim.Arrivals(kBad, seconds(1));
  const SimResult r = sim.Run(minutes(10));
  const HostStats& limited = r.hosts.at(kBad);
  // One window of attempts (the initial cap of 4) per 120 s Retry-After: five windows in 10 min.
  EXPECT_LE(sim.transport().started(kBad), 5 * 4);
  EXPECT_GE(sim.transport().started(kBad), 5);
  EXPECT_EQ(limited.dead, 0);
  EXPECT_FALSE(SnapshotOf(r, kBad).failing_since.has_value());  // alive, just busy
  EXPECT_LT(r.hosts.at(kGood).max_wait, seconds(1));
}

INSTANTIATE_TEST_SUITE_P(StoreTimings, DispatcherSimulationTest, kBothTimings, StoreTimingName);

}  // namespace
}  // namespace bulkhead
