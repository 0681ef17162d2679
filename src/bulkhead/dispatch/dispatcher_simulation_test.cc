// The point of the delivery module, as a deterministic simulation: one destination host never
// answers (every attempt runs into the 30 s deadline) while another answers in 200 ms. With
// compartments the healthy host keeps its full rate and the dead host's jobs wait parked, spending
// neither slots nor retries. A counterfactual run with the breaker off and a flat per-host cap
// shows what the compartments prevent.
//
// Everything runs on ManualClock and ScriptedRng: no sleeps, no sockets, no threads.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "bulkhead/compartment/host_compartments.h"
#include "bulkhead/compartment/outcome.h"
#include "bulkhead/compartment/retry_after.h"

namespace bulkhead {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr char kGood[] = "good.example";
constexpr char kBad[] = "dead.example";
constexpr char kSlow[] = "slow-relay.example";
constexpr Duration kDeadline = seconds(30);  // the transport's total deadline

// Test-only transport: each host has a scripted behaviour; a request "completes" at
// start + latency, or times out at start + deadline if the host never answers in time.
class FakeTransport {
 public:
  struct Behaviour {
    Duration latency = milliseconds(200);
    AttemptResult result{TransportError::kNone, 202};
    std::string retry_after;  // Retry-After header value sent with the answer, if any
  };
  struct Completion {
    TimePoint at;
    Grant grant;
    std::string job_id;
    TimePoint started;
    AttemptResult result;
    std::string retry_after;
  };

  void Script(const std::string& host, Behaviour b) { behaviour_[host] = std::move(b); }

  void Start(Grant grant, std::string job_id, TimePoint now) {
    const Behaviour& b = behaviour_.at(grant.host);
    Completion c{now + b.latency, std::move(grant), std::move(job_id), now,
                 b.result,        b.retry_after};
    if (b.latency >= kDeadline) {
      c.at = now + kDeadline;
      c.result = {TransportError::kTimeoutTotal, 0};
      c.retry_after.clear();
    }
    ++started_[c.grant.host];
    in_flight_[c.grant.host]++;
    max_in_flight_[c.grant.host] = std::max(max_in_flight_[c.grant.host], in_flight_[c.grant.host]);
    pending_.push(std::move(c));
  }

  std::optional<TimePoint> NextCompletion() const {
    if (pending_.empty()) return std::nullopt;
    return pending_.top().at;
  }

  std::vector<Completion> TakeDue(TimePoint now) {
    std::vector<Completion> out;
    while (!pending_.empty() && pending_.top().at <= now) {
      out.push_back(pending_.top());
      pending_.pop();
      in_flight_[out.back().grant.host]--;
    }
    return out;
  }

  int started(const std::string& host) const {
    auto it = started_.find(host);
    return it == started_.end() ? 0 : it->second;
  }
  int max_in_flight(const std::string& host) const {
    auto it = max_in_flight_.find(host);
    return it == max_in_flight_.end() ? 0 : it->second;
  }
  int in_flight_total() const {
    int n = 0;
    for (const auto& [h, v] : in_flight_) n += v;
    return n;
  }

 private:
  struct Later {
    bool operator()(const Completion& a, const Completion& b) const { return a.at > b.at; }
  };
  std::map<std::string, Behaviour> behaviour_;
  std::priority_queue<Completion, std::vector<Completion>, Later> pending_;
  std::map<std::string, int> started_, in_flight_, max_in_flight_;
};

struct JobState {
  std::string host;
  TimePoint enqueued;
  std::optional<TimePoint> first_start;
  int attempts = 0;
  bool done = false;
  bool dead = false;
};

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

// The dispatcher loop the engine will run: jobs arrive and are parked in their host's compartment,
// the registry decides which may start, results go back through Classify and the registry, and
// retryable jobs come back after a fixed backoff (the engine's retry policy, outside this module).
class Simulation {
 public:
  Simulation(const HostCompartmentsConfig& config, int max_attempts)
      : registry_(config, rng_),
        global_max_(config.global_max_in_flight),
        max_attempts_(max_attempts) {}

  FakeTransport& transport() { return transport_; }
  ManualClock& clock() { return clock_; }

  // Adds a periodic job source for `host`.
  void Arrivals(const std::string& host, Duration every) { sources_.push_back({host, every, {}}); }

  SimResult Run(Duration length) {
    const TimePoint start = clock_.Now();
    const TimePoint end = start + length;
    for (Source& s : sources_) s.next = start;
    SimResult out;
    while (true) {
      const TimePoint now = clock_.Now();
      for (auto& c : transport_.TakeDue(now)) Complete(c, now);
      while (!retries_.empty() && retries_.top().first <= now) {
        Park(retries_.top().second, now);
        retries_.pop();
      }
      for (Source& s : sources_) {
        while (s.next <= now && s.next < end) {
          const std::string id = s.host + "#" + std::to_string(next_id_++);
          JobState job;
          job.host = s.host;
          job.enqueued = s.next;
          jobs_[id] = std::move(job);
          ++stats_[s.host].arrived;
          Park(id, now);
          s.next += s.every;
        }
      }
      for (Grant& g : registry_.Schedule({}, now)) {
        EXPECT_TRUE(g.parked_job_id.has_value());
        const std::string id = *g.parked_job_id;
        JobState& job = jobs_.at(id);
        if (!job.first_start) job.first_start = now;
        ++job.attempts;
        transport_.Start(std::move(g), id, now);
      }
      out.max_global_in_flight = std::max(out.max_global_in_flight, transport_.in_flight_total());
      EXPECT_EQ(registry_.global_in_flight(), transport_.in_flight_total());

      // Next event: a completion, a retry coming due, an arrival, or a compartment waking up.
      std::optional<TimePoint> next = transport_.NextCompletion();
      auto consider = [&](TimePoint t) {
        if (!next || t < *next) next = t;
      };
      if (!retries_.empty()) consider(retries_.top().first);
      for (const Source& s : sources_) {
        if (s.next < end) consider(s.next);
      }
      if (auto w = registry_.NextWakeup(now)) consider(*w);
      if (!next || *next >= end) break;
      EXPECT_GT(*next, now) << "simulation would spin";
      clock_.Set(*next);
    }
    for (auto& [id, job] : jobs_) {
      HostStats& h = stats_[job.host];
      if (job.attempts == 0) ++h.never_attempted;
      h.retries_spent += std::max(0, job.attempts - 1);
      h.max_attempts = std::max(h.max_attempts, job.attempts);
      if (job.first_start) h.max_wait = std::max(h.max_wait, *job.first_start - job.enqueued);
    }
    out.hosts = stats_;
    out.snapshot = registry_.Snapshot(clock_.Now());
    return out;
  }

 private:
  struct Source {
    std::string host;
    Duration every;
    TimePoint next;
  };
  using Retry = std::pair<TimePoint, std::string>;

  void Park(const std::string& id, TimePoint now) {
    ASSERT_TRUE(registry_.Park(jobs_.at(id).host, id, now).ok());
  }

  void Complete(const FakeTransport::Completion& c, TimePoint now) {
    JobState& job = jobs_.at(c.job_id);
    const Outcome o = Classify(JobKind::kActivityPub, c.result);
    std::optional<TimePoint> retry_after;
    if (!c.retry_after.empty()) retry_after = ParseRetryAfter(c.retry_after, now, minutes(10));
    registry_.OnResult(c.grant, o, now - c.started, now, retry_after);
    HostStats& h = stats_[job.host];
    switch (o.cls) {
      case OutcomeClass::kOk:
        job.done = true;
        ++h.completed;
        break;
      case OutcomeClass::kRetryable:
        if (job.attempts >= max_attempts_) {
          job.dead = true;
          ++h.dead;
        } else {
          retries_.push({now + seconds(15), c.job_id});
        }
        break;
      case OutcomeClass::kGone:
      case OutcomeClass::kPermanent:
        job.dead = true;
        ++h.dead;
        break;
    }
  }

  ManualClock clock_;
  ScriptedRng rng_;  // empty: no jitter, every run identical
  HostCompartments registry_;
  FakeTransport transport_;
  const int global_max_;
  const int max_attempts_;
  std::vector<Source> sources_;
  std::map<std::string, JobState> jobs_;
  std::map<std::string, HostStats> stats_;
  std::priority_queue<Retry, std::vector<Retry>, std::greater<>> retries_;
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

const FakeTransport::Behaviour kHealthy{milliseconds(200), {TransportError::kNone, 202}, ""};
const FakeTransport::Behaviour kNeverAnswers{minutes(5), {TransportError::kNone, 202}, ""};

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

SimResult RunScenario(const HostCompartmentsConfig& config, bool with_bad_host) {
  Simulation sim(config, /*max_attempts=*/5);
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

TEST(DispatcherSimulationTest, HealthyHostKeepsFullRateBesideADeadHost) {
  const SimResult alone = RunScenario(BulkheadConfig(), /*with_bad_host=*/false);
  const SimResult mixed = RunScenario(BulkheadConfig(), /*with_bad_host=*/true);

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

TEST(DispatcherSimulationTest, DeadHostsJobsWaitParkedWithoutSpendingRetries) {
  const SimResult r = RunScenario(BulkheadConfig(), /*with_bad_host=*/true);
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

TEST(DispatcherSimulationTest, WithoutCompartmentsTheDeadHostEatsSlotsAndRetries) {
  const SimResult r = RunScenario(NoCompartmentsConfig(), /*with_bad_host=*/true);
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
TEST(DispatcherSimulationTest, SlowRelayIsSqueezedWhileTheHealthyHostKeepsItsRate) {
  const SimResult alone = RunScenario(BulkheadConfig(), /*with_bad_host=*/false);
  Simulation sim(BulkheadConfig(), /*max_attempts=*/5);
  sim.transport().Script(kGood, kHealthy);
  sim.transport().Script(kSlow, {seconds(25), {TransportError::kNone, 201}, ""});
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

TEST(DispatcherSimulationTest, RateLimitedHostIsLeftAloneUntilRetryAfter) {
  HostCompartmentsConfig config = BulkheadConfig();
  Simulation sim(config, /*max_attempts=*/25);
  sim.transport().Script(kGood, kHealthy);
  sim.transport().Script(kBad, {milliseconds(50), {TransportError::kNone, 429}, "120"});
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

}  // namespace
}  // namespace bulkhead
