// Engine tests on a memory store with a simulated clock: a blocking FETCH ends when the test moves
// the clock past its block time, never by waiting.
#include "bulkhead/engine/engine.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "bulkhead/engine/job_parser.h"
#include "bulkhead/store/single_node_link.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/simulated_clock.h"
#include "bulkhead/util/testing/log_capture.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

class FakeBuiltin : public BuiltinJobs {
 public:
  bool Handles(std::string_view jobtype) const override { return jobtype == "webpush"; }
  Status Validate(const JobRecord& job) const override {
    if (job.payload.find("bad-endpoint") != std::string::npos) {
      return Status::InvalidArgument("webpush: subscription.endpoint is not a URL");
    }
    return Status::Ok();
  }
  void OnJobsAvailable() override { ++available; }
  int available = 0;
};

// Runs every test twice: on the memory store answering inline ("Inline"), and on the same store
// behind DeferredStore, which answers every call on a later turn of the loop as a networked store
// does ("Deferred"). Tests drive the engine through store() and inspect the memory store (inner(),
// always inline) after RunReady() has let every answer arrive.
class EngineTest : public ::testing::TestWithParam<bool> {
 protected:
  EngineTest() {
    config_.fetch_block_ms = 50;
    inner_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    if (Deferred()) {
      deferred_ = std::make_unique<DeferredStore>(
          *inner_, [this](std::function<void()> f) { boost::asio::post(io_, std::move(f)); });
    }
    engine_ = std::make_unique<Engine>(io_, store(), config_, clock_, rng_);
  }
  bool Deferred() const { return GetParam(); }
  Store& store() { return deferred_ ? *deferred_ : *inner_; }
  Store& inner() { return *inner_; }

  Status Push(const std::string& json) {
    auto job = ParseJob(json, clock_.Now());
    if (!job.ok()) return job.status();
    std::optional<Status> out;
    engine_->Push(std::move(*job), [&](Status s) { out = s; });
    RunReady();
    EXPECT_TRUE(out.has_value()) << "PUSH never answered";
    return out.value_or(Status::Internal("no answer"));
  }
  // Starts a FETCH; its answer lands in `out`.
  uint64_t StartFetch(std::vector<std::string> queues,
                      std::optional<Result<std::optional<std::string>>>& out) {
    return engine_->Fetch(queues, "",
                          [&out](Result<std::optional<std::string>> r) { out = std::move(r); });
  }
  std::optional<std::string> Fetch(std::vector<std::string> queues) {
    std::optional<Result<std::optional<std::string>>> out;
    StartFetch(queues, out);
    RunReady();
    if (!out) {
      Duration block = std::chrono::milliseconds(config_.fetch_block_ms);
      clock_.Advance(block - 1ms);
      RunReady();
      EXPECT_FALSE(out.has_value()) << "answered before its block time";
      clock_.Advance(1ms);
      RunReady();
    }
    EXPECT_TRUE(out.has_value()) << "FETCH never answered";
    return out && out->ok() ? **out : std::nullopt;
  }
  EngineSnapshot Snapshot() {
    std::optional<Result<EngineSnapshot>> out;
    engine_->Snapshot([&](Result<EngineSnapshot> r) { out = std::move(r); });
    RunReady();
    EXPECT_TRUE(out.has_value() && out->ok());
    return out && out->ok() ? **out : EngineSnapshot{};
  }
  // Runs the handlers ready on the loop (store answers, and timers the clock fired) until none is
  // left.
  void RunReady() {
    io_.restart();
    io_.poll();
  }
  // The memory store's figures once every answer has arrived.
  StoreStats Stats() {
    RunReady();
    StoreStats s;
    inner().Stats([&](Result<StoreStats> r) { s = *r; });
    return s;
  }
  std::vector<JobRecord> List(JobState set) {
    RunReady();
    std::vector<JobRecord> out;
    inner().List(set, 0, 10, [&](auto r) { out = *r; });
    return out;
  }

  Config config_;
  SimulatedClock clock_;  // before io_ and engine_: outlives their timers
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> inner_;
  std::unique_ptr<DeferredStore> deferred_;
  std::unique_ptr<Engine> engine_;
};

INSTANTIATE_TEST_SUITE_P(Answers, EngineTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Deferred" : "Inline"; });

TEST_P(EngineTest, BuiltinJobsNeverReachFetchAndAreValidatedAtPush) {
  FakeBuiltin builtin;
  engine_->SetBuiltinJobs(&builtin);
  EXPECT_TRUE(Push(R"({"jid":"webpush01","jobtype":"webpush","args":[{}]})").ok());
  EXPECT_EQ(builtin.available, 1);
  Status bad = Push(R"({"jid":"webpush02","jobtype":"webpush","args":["bad-endpoint"]})");
  EXPECT_EQ(bad.message(), "webpush: subscription.endpoint is not a URL");
  EXPECT_TRUE(Push(R"({"jid":"mailjob01","jobtype":"mail","args":[]})").ok());
  EXPECT_NE(Fetch({"default"})->find("mailjob01"), std::string::npos);
  EXPECT_FALSE(Fetch({"default"}).has_value())
      << "a worker on default must not get the webpush job";
  StoreStats s = Stats();
  EXPECT_EQ(s.queues[kDeliveryQueue].size, 1u);
  // The dispatcher takes it from the delivery queue; the payload keeps the client's queue.
  std::optional<JobRecord> job;
  inner().Fetch({kDeliveryQueue}, clock_.Now(), [&](auto r) { job = **r; });
  ASSERT_TRUE(job);
  EXPECT_EQ(nlohmann::json::parse(job->payload)["queue"], "default");
}

TEST_P(EngineTest, FailOptionsDelayKillOrDiscard) {
  for (const char* jid : {"optjob001", "optjob002", "optjob003"}) {
    ASSERT_TRUE(Push(std::string(R"({"jobtype":"t","args":[],"jid":")") + jid + "\"}").ok());
    ASSERT_TRUE(Fetch({"default"}));
  }
  bool done = false;
  FailOptions later;
  later.not_before = clock_.Now() + 1h;
  engine_->Fail(
      "optjob001", {"http_429", "Retry-After 3600", {}}, [&](Status s) { done = s.ok(); }, later);
  RunReady();
  EXPECT_TRUE(done);
  std::vector<JobRecord> retries = List(JobState::kRetry);
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_EQ(retries[0].score, ToUnixMicros(clock_.Now() + 1h));
  FailOptions dead;
  dead.dead = true;
  engine_->Fail(
      "optjob002", {"http_400", "bad request", {}}, [](Status) {}, dead);
  FailOptions discard;
  discard.discard = true;
  engine_->Fail(
      "optjob003", {"gone", "subscription gone", {}}, [](Status) {}, discard);
  StoreStats s = Stats();
  EXPECT_EQ(s.dead, 1u);
  EXPECT_EQ(s.retries, 1u);
  EXPECT_EQ(s.working, 0u);
  EXPECT_EQ(s.processed, 3);
  EXPECT_EQ(s.failures, 2) << "a discarded delivery is finished, not failed";
}

TEST_P(EngineTest, ExpiredReservationFailsThroughTheRetryPolicy) {
  ASSERT_TRUE(Push(R"({"jid":"expire001","jobtype":"t","args":[],"reserve_for":60})").ok());
  ASSERT_TRUE(Fetch({"default"}));
  clock_.Advance(61s);
  engine_->RunReaperOnce();
  std::vector<JobRecord> retries = List(JobState::kRetry);
  ASSERT_EQ(retries.size(), 1u);
  auto failure = nlohmann::json::parse(retries[0].payload)["failure"];
  EXPECT_EQ(failure["errtype"], "ReservationExpired");
  EXPECT_EQ(failure["message"], "Faktory job reservation expired");
}

TEST_P(EngineTest, PushOfAHeldJidIsOkAndChangesNothing) {
  ASSERT_TRUE(Push(R"({"jid":"dupe00001","jobtype":"t","args":[1],"queue":"a"})").ok());
  EXPECT_EQ(engine_->push_duplicates(), 0u);
  // The same jid again, even with another payload and queue: OK, nothing changes.
  EXPECT_TRUE(Push(R"({"jid":"dupe00001","jobtype":"other","args":[2],"queue":"b"})").ok());
  EXPECT_EQ(engine_->push_duplicates(), 1u);
  EXPECT_EQ(Stats().queues["a"].size, 1u);
  EXPECT_FALSE(Stats().queues.contains("b"));
  auto job = Fetch({"a", "b"});
  ASSERT_TRUE(job);
  EXPECT_EQ(nlohmann::json::parse(*job)["args"], nlohmann::json::array({1}));
  // Held while reserved, retrying or dead too.
  EXPECT_TRUE(Push(R"({"jid":"dupe00001","jobtype":"t","args":[1],"queue":"a"})").ok());
  EXPECT_EQ(Stats().working, 1u);
  EXPECT_EQ(Stats().queues["a"].size, 0u);
  engine_->Fail("dupe00001", {}, [](Status) {});
  EXPECT_TRUE(Push(R"({"jid":"dupe00001","jobtype":"t","args":[1],"queue":"a"})").ok());
  EXPECT_EQ(Stats().retries, 1u);
  EXPECT_EQ(Stats().queues["a"].size, 0u);
  EXPECT_EQ(engine_->push_duplicates(), 3u);
  // Once it is gone (ACKed), the jid may be pushed again.
  clock_.Advance(15s);
  engine_->RunScheduledOnce();
  ASSERT_TRUE(Fetch({"a"}));
  engine_->Ack("dupe00001", [](Status) {});
  EXPECT_TRUE(Push(R"({"jid":"dupe00001","jobtype":"t","args":[1],"queue":"a"})").ok());
  EXPECT_EQ(Stats().queues["a"].size, 1u);
  EXPECT_EQ(engine_->push_duplicates(), 3u);
}

// A store whose push commits complete only when the test says so (a group commit in flight);
// refused pushes and every other call are answered where the inner store answers them.
class HeldPushStore final : public DeferredStore {
 public:
  explicit HeldPushStore(Store& inner)
      : DeferredStore(inner, [](std::function<void()> f) { f(); }) {}
  void Push(JobRecord job, Done durable) override {
    inner().Push(std::move(job), [this, durable](Status s) {
      if (!s.ok()) {
        durable(s);  // refusals are answered at once, as the embedded stores do
      } else {
        pending_.push_back(durable);
      }
    });
  }
  void CommitAll(Status s = Status::Ok()) {
    auto pending = std::move(pending_);
    for (auto& d : pending) d(s);
  }
  size_t pending() const { return pending_.size(); }

 private:
  std::vector<Done> pending_;
};

TEST_P(EngineTest, ADuplicateOfAPushStillCommittingIsAnsweredWithThatCommit) {
  HeldPushStore deferred(inner());
  Engine engine(io_, deferred, config_, clock_, rng_);
  auto push = [&](std::optional<Status>& out) {
    auto job = ParseJob(R"({"jid":"inflight1","jobtype":"t","args":[]})", clock_.Now());
    engine.Push(std::move(*job), [&out](Status s) { out = s; });
  };
  std::optional<Status> first, second;
  push(first);
  push(second);
  EXPECT_FALSE(first.has_value());
  EXPECT_FALSE(second.has_value()) << "+OK only once the job it names is durable";
  EXPECT_EQ(engine.push_duplicates(), 1u);
  deferred.CommitAll();
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(first->ok());
  EXPECT_TRUE(second->ok());
  // After the commit a duplicate is answered at once.
  std::optional<Status> third;
  push(third);
  ASSERT_TRUE(third.has_value());
  EXPECT_TRUE(third->ok());

  // A failed commit fails the duplicates that waited for it too.
  std::optional<Status> a, b;
  auto job = ParseJob(R"({"jid":"inflight2","jobtype":"t","args":[]})", clock_.Now());
  engine.Push(std::move(*job), [&a](Status s) { a = s; });
  job = ParseJob(R"({"jid":"inflight2","jobtype":"t","args":[]})", clock_.Now());
  engine.Push(std::move(*job), [&b](Status s) { b = s; });
  deferred.CommitAll(Status::Unavailable("disk full"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->message(), "disk full");
  EXPECT_EQ(b->message(), "disk full");
}

TEST_P(EngineTest, SnapshotCountsEachPeriodicTask) {
  ASSERT_TRUE(
      Push(R"({"jid":"sched0001","jobtype":"t","args":[],"at":"2100-01-01T00:00:00Z"})").ok());
  ASSERT_TRUE(Push(R"({"jid":"retry0002","jobtype":"t","args":[],"reserve_for":60})").ok());
  ASSERT_TRUE(Push(R"({"jid":"retry0003","jobtype":"t","args":[]})").ok());
  ASSERT_TRUE(Fetch({"default"}));
  ASSERT_TRUE(Fetch({"default"}));
  engine_->Fail("retry0003", {}, [](Status) {});
  RunReady();  // the FAIL is done before the clock moves on
  clock_.Advance(61s);
  engine_->RunReaperOnce();     // retry0002's reservation expired: reaped into retries
  engine_->RunScheduledOnce();  // retry0003 is due (15 s): back in default
  engine_->RunDeadPurgeOnce();
  RunReady();  // the runs end when the store has answered
  EngineSnapshot snap = Snapshot();
  const EngineTaskSnapshots& tasks = snap.tasks;
  for (const TaskSnapshot* scanner : {&tasks.scheduled, &tasks.retries, &tasks.dead}) {
    EXPECT_EQ(scanner->cycles, 1);
  }
  EXPECT_EQ(snap.scheduled, 1u);
  EXPECT_EQ(tasks.scheduled.jobs, 0);
  EXPECT_EQ(snap.retries, 1u) << "retry0002, reaped, waits its backoff";
  EXPECT_EQ(tasks.retries.jobs, 1) << "retry0003 went back to its queue";
  EXPECT_EQ(snap.dead, 0u);
  EXPECT_EQ(snap.working, 0u);
  EXPECT_EQ(tasks.busy.jobs, 1);
  EXPECT_EQ(snap.worker_count, 0u);
  EXPECT_EQ(tasks.workers.cycles, 0);
}

TEST_P(EngineTest, SnapshotListsKnownQueuesThatAreEmpty) {
  ASSERT_TRUE(Push(R"({"jid":"known0001","jobtype":"t","args":[],"queue":"drained"})").ok());
  ASSERT_TRUE(Fetch({"drained"}));
  engine_->Ack("known0001", [](Status) {});
  engine_->PauseQueues({"paused"}, true, [](Status) {});
  EngineSnapshot snap = Snapshot();
  ASSERT_EQ(snap.queues.size(), 2u);
  EXPECT_EQ(snap.queues["drained"].size, 0u);
  EXPECT_FALSE(snap.queues["drained"].paused);
  EXPECT_EQ(snap.queues["paused"].size, 0u);
  EXPECT_TRUE(snap.queues["paused"].paused);
  engine_->RemoveQueues({"drained"}, [](Status) {});
  EXPECT_FALSE(Snapshot().queues.contains("drained")) << "QUEUE REMOVE forgets it";
}

TEST_P(EngineTest, DueRetriesReturnToTheirQueue) {
  ASSERT_TRUE(Push(R"({"jid":"retry0001","jobtype":"t","args":[],"queue":"q"})").ok());
  ASSERT_TRUE(Fetch({"q"}));
  engine_->Fail("retry0001", {}, [](Status) {});
  EXPECT_FALSE(Fetch({"q"}).has_value());
  clock_.Advance(15s);  // ScriptedRng gives 0 jitter: first retry after exactly 15 s
  engine_->RunScheduledOnce();
  auto job = Fetch({"q"});
  ASSERT_TRUE(job);
  EXPECT_EQ(nlohmann::json::parse(*job)["failure"]["retry_count"], 0);
}

TEST_P(EngineTest, APushWhileAFetchIsProbingReachesThatFetch) {
  std::optional<Result<std::optional<std::string>>> out;
  StartFetch({"q"}, out);  // Deferred: the store has not answered "empty" yet
  ASSERT_TRUE(Push(R"({"jid":"probe0001","jobtype":"t","args":[],"queue":"q"})").ok());
  RunReady();
  ASSERT_TRUE(out.has_value()) << "the FETCH must get the job without waiting its block time";
  ASSERT_TRUE(out->ok());
  ASSERT_TRUE(out->value().has_value());
  EXPECT_NE(out->value()->find("probe0001"), std::string::npos);
}

// The block time runs from the FETCH's arrival, also when its timer starts only once the first
// probe found nothing; a FETCH answered by its first probe sets no timer (nothing is left for the
// loop to run after it).
TEST_P(EngineTest, TheBlockTimeRunsFromArrivalAndAnAnsweredFetchLeavesNoTimer) {
  std::optional<Result<std::optional<std::string>>> out;
  StartFetch({"q"}, out);
  clock_.Advance(std::chrono::milliseconds(config_.fetch_block_ms - 10));  // while it probes
  RunReady();
  EXPECT_FALSE(out.has_value()) << "answered before its block time";
  clock_.Advance(9ms);
  RunReady();
  EXPECT_FALSE(out.has_value()) << "answered before its block time";
  clock_.Advance(1ms);
  RunReady();
  ASSERT_TRUE(out.has_value()) << "not answered at its block time";
  EXPECT_TRUE(out->ok() && !out->value().has_value());

  ASSERT_TRUE(Push(R"({"jid":"notimer01","jobtype":"t","args":[],"queue":"q"})").ok());
  std::optional<Result<std::optional<std::string>>> got;
  StartFetch({"q"}, got);
  io_.restart();
  size_t ran = 0;
  while (!got.has_value() && io_.poll_one() == 1) ++ran;  // the store's answer (Deferred)
  ASSERT_TRUE(got.has_value() && got->ok() && got->value().has_value());
  io_.restart();
  EXPECT_EQ(io_.poll(), 0u) << "a handler left behind (a block timer set and cancelled)";
}

TEST_P(EngineTest, AFetchWhoseBlockTimeEndsWhileProbingGetsWhatTheProbeFound) {
  ASSERT_TRUE(Push(R"({"jid":"probe0002","jobtype":"t","args":[],"queue":"q"})").ok());
  std::optional<Result<std::optional<std::string>>> out;
  StartFetch({"q"}, out);
  clock_.Advance(std::chrono::milliseconds(config_.fetch_block_ms));
  RunReady();
  ASSERT_TRUE(out.has_value());
  ASSERT_TRUE(out->ok());
  ASSERT_TRUE(out->value().has_value()) << "the job was reserved for it: it must not be lost";
  EXPECT_EQ(Stats().working, 1u);
}

TEST_P(EngineTest, AJobReservedForAWithdrawnFetchGoesBackToItsQueue) {
  if (!Deferred()) GTEST_SKIP() << "an inline store answers before FETCH returns";
  ASSERT_TRUE(Push(R"({"jid":"probe0003","jobtype":"t","args":[],"queue":"q"})").ok());
  std::optional<Result<std::optional<std::string>>> out;
  uint64_t ticket = StartFetch({"q"}, out);
  ASSERT_NE(ticket, 0u);
  engine_->CancelFetch(ticket);  // the connection closed while the store was reserving the job
  StoreStats s = Stats();
  EXPECT_FALSE(out.has_value());
  EXPECT_EQ(s.working, 0u);
  EXPECT_EQ(s.queues["q"].size, 1u);
  auto job = Fetch({"q"});
  ASSERT_TRUE(job);
  EXPECT_NE(job->find("probe0003"), std::string::npos);
}

TEST_P(EngineTest, AnAckBetweenTheReapersReadAndItsMoveStands) {
  if (!Deferred()) GTEST_SKIP() << "an inline store leaves no gap between read and move";
  ASSERT_TRUE(Push(R"({"jid":"reap00001","jobtype":"t","args":[],"reserve_for":60})").ok());
  ASSERT_TRUE(Fetch({"default"}));
  clock_.Advance(61s);
  engine_->RunReaperOnce();  // reads the expired reservation; its answer is on its way
  std::optional<Status> acked;
  engine_->Ack("reap00001", [&](Status s) { acked = s; });
  StoreStats s = Stats();
  ASSERT_TRUE(acked.has_value() && acked->ok());
  EXPECT_EQ(s.retries, 0u) << "the reaper must not bring an acked job back";
  EXPECT_EQ(s.working, 0u);
  EXPECT_EQ(s.processed, 1);
  EXPECT_EQ(s.failures, 0);
}

TEST_P(EngineTest, AFailOfAReservationThatEndedMeanwhileIsJobNotFound) {
  ASSERT_TRUE(Push(R"({"jid":"fail00001","jobtype":"t","args":[]})").ok());
  ASSERT_TRUE(Fetch({"default"}));
  std::optional<Status> first, second;
  engine_->Fail("fail00001", {}, [&](Status s) { first = s; });
  engine_->Fail("fail00001", {}, [&](Status s) { second = s; });
  RunReady();
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(first->ok());
  EXPECT_EQ(second->message(), "Job not found fail00001");
  StoreStats s = Stats();
  EXPECT_EQ(s.retries, 1u);
  EXPECT_EQ(s.failures, 1) << "one failure, counted once";
}

TEST_P(EngineTest, TheSchedulerMovesEveryDueJobInBatchesAndOneRunAtATime) {
  constexpr int kJobs = 2500;  // three batches of at most 1000
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_TRUE(Push(R"({"jid":"batch)" + std::to_string(100000 + i) +
                     R"(","jobtype":"t","args":[],"at":"2100-01-01T00:00:00Z"})")
                    .ok());
  }
  clock_.Advance(std::chrono::hours(24 * 365 * 80));
  engine_->RunScheduledOnce();
  engine_->RunScheduledOnce();  // the first run has batches left: not started twice
  RunReady();
  StoreStats s = Stats();
  EXPECT_EQ(s.scheduled, 0u);
  EXPECT_EQ(s.queues["default"].size, static_cast<size_t>(kJobs));
  EngineSnapshot snap = Snapshot();
  EXPECT_EQ(snap.tasks.scheduled.cycles, 1);
  EXPECT_EQ(snap.tasks.scheduled.jobs, kJobs);
  EXPECT_EQ(snap.tasks.retries.cycles, 1);
  engine_->RunScheduledOnce();  // the run ended: the next one runs
  RunReady();
  EXPECT_EQ(Snapshot().tasks.scheduled.cycles, 2);
}

}  // namespace
}  // namespace bulkhead

namespace bulkhead {
namespace {

// A store that can be made unreachable: while down_ is set it answers the periodic tasks' calls
// and PUSH with Unavailable, and says so through unavailable_reason(); otherwise it forwards.
class UnreachableStore final : public DeferredStore {
 public:
  explicit UnreachableStore(Store& inner)
      : DeferredStore(inner, [](std::function<void()> f) { f(); }) {}
  std::string unavailable_reason() const override {
    return down_ ? "store unavailable: redis 127.0.0.1:1: connection refused, retrying" : "";
  }
  void Push(JobRecord job, Done durable) override {
    if (down_) return durable(Status::Unavailable(unavailable_reason()));
    DeferredStore::Push(std::move(job), std::move(durable));
  }
  void EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) override {
    if (down_) return cb(Status::Unavailable(unavailable_reason()));
    DeferredStore::EnqueueDue(set, now, limit, std::move(cb));
  }
  void ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) override {
    if (down_) return cb(Status::Unavailable(unavailable_reason()));
    DeferredStore::ExpiredReservations(now, limit, std::move(cb));
  }
  void PurgeDead(TimePoint now, size_t limit, CountCallback cb) override {
    if (down_) return cb(Status::Unavailable(unavailable_reason()));
    DeferredStore::PurgeDead(now, limit, std::move(cb));
  }
  bool down_ = false;
};

TEST_P(EngineTest, PeriodicTasksLogAnUnavailableStoreOncePerStateChange) {
  LogCapture log;
  UnreachableStore store(inner());
  Engine engine(io_, store, config_, clock_, rng_);
  store.down_ = true;
  engine.Start();
  for (int tick = 0; tick < 20; ++tick) {
    clock_.Advance(std::chrono::milliseconds(config_.scheduler_interval_ms));
    RunReady();
  }
  EXPECT_EQ(log.Count("scheduler: store unavailable: redis 127.0.0.1:1"), 1u);
  EXPECT_EQ(log.Count("reservation reaper: store unavailable"), 1u);
  EXPECT_EQ(log.Count("the store answers again"), 0u);
  // PUSH answers the reason at once.
  std::optional<Status> pushed;
  auto job = ParseJob(R"({"jid":"unreach01","jobtype":"t","args":[]})", clock_.Now());
  ASSERT_TRUE(job.ok());
  engine.Push(std::move(*job), [&](Status s) { pushed = s; });
  RunReady();
  ASSERT_TRUE(pushed.has_value());
  EXPECT_EQ(pushed->code(), StatusCode::kUnavailable);
  EXPECT_EQ(pushed->message().rfind("store unavailable: ", 0), 0u) << pushed->message();

  store.down_ = false;
  for (int tick = 0; tick < 20; ++tick) {
    clock_.Advance(std::chrono::milliseconds(config_.scheduler_interval_ms));
    RunReady();
  }
  EXPECT_EQ(log.Count("scheduler: the store answers again"), 1u);
  EXPECT_EQ(log.Count("reservation reaper: the store answers again"), 1u);
  EXPECT_EQ(log.Count("scheduler: store unavailable"), 1u);
  engine.Stop();
}

}  // namespace
}  // namespace bulkhead

namespace bulkhead {
namespace {

// A store shared with other nodes, as far as rosters go: it keeps the roster source the engine
// sets and answers ListOtherRosters with `others`.
class RosterStore final : public DeferredStore {
 public:
  explicit RosterStore(Store& inner) : DeferredStore(inner, [](std::function<void()> f) { f(); }) {}
  ClusterLink& cluster() override { return link_; }

  struct RosterLink final : SingleNodeLink {
    bool shared() const override { return true; }
    std::string node_id() const override { return "node-a"; }
    void SetRosterSource(RosterSource source) override { source_ = std::move(source); }
    void ListOtherRosters(RostersCallback cb) override { cb(others_); }

    RosterSource source_;
    std::vector<NodeRoster> others_;
  };
  RosterLink link_;
};

// The engine publishes its roster through the store and lists the cluster's workers: its
// own as they are now, then the other nodes' (a roster that does not read is left out).
TEST(EngineRosterTest, TheClusterWorkersAreThisNodesThenTheOthers) {
  Config config;
  SimulatedClock clock;
  ScriptedRng rng;
  boost::asio::io_context io;
  auto inner = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
  RosterStore store(*inner);
  auto engine = std::make_unique<Engine>(io, store, config, clock, rng);
  ASSERT_TRUE(store.link_.source_) << "the engine gives the store its roster";
  EXPECT_EQ(store.link_.source_(), "[]");
  engine->workers().Connect({.wid = "w-here", .hostname = "box-a"}, clock.Now());
  auto published = DecodeRoster(store.link_.source_());
  ASSERT_TRUE(published.ok());
  ASSERT_EQ(published->size(), 1u);
  EXPECT_EQ((*published)[0].wid, "w-here");

  store.link_.others_ = {{"node-b", R"([{"wid":"w-b1"},{"wid":"w-b2","state":"quiet"}])"},
                         {"node-c", "not a roster"},
                         {"node-d", R"([{"wid":"w-d1"}])"}};
  std::vector<std::string> listed;  // "node/wid/state"
  engine->ClusterWorkers([&](Result<std::vector<NodeWorker>> r) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (const NodeWorker& w : *r) {
      listed.push_back(w.node + "/" + w.info.wid + "/" + WorkerStateName(w.info.state));
    }
  });
  EXPECT_EQ(listed, (std::vector<std::string>{"node-a/w-here/running", "node-b/w-b1/running",
                                              "node-b/w-b2/quiet", "node-d/w-d1/running"}));
  engine.reset();
  EXPECT_FALSE(store.link_.source_) << "an engine gone takes its roster source with it";
}

TEST_P(EngineTest, TakenJobsAreStoredWithTheirMarksAndWakeWaitingFetches) {
  FakeBuiltin builtin;
  engine_->SetBuiltinJobs(&builtin);
  std::optional<Result<std::optional<std::string>>> waiting;
  StartFetch({"mail"}, waiting);
  RunReady();
  ASSERT_FALSE(waiting.has_value());
  auto job = [&](const std::string& json) { return *ParseJob(json, clock_.Now()); };
  std::vector<MarkedJob> jobs{
      {job(R"({"jid":"taken-mail-1","jobtype":"mail","queue":"mail","args":[]})"), "m1"},
      {job(R"({"jid":"taken-push-1","jobtype":"webpush","args":[{}]})"), "m2"},
      {job(R"({"jid":"taken-push-2","jobtype":"webpush","args":["bad-endpoint"]})"), "m3"},
      {job(R"({"jid":"taken-mail-2","jobtype":"mail","queue":"mail","args":[]})"), "m1"}};
  std::optional<std::vector<Status>> out;
  engine_->PushTaken(std::move(jobs), clock_.Now() + 1h,
                     [&](std::vector<Status> r) { out = std::move(r); });
  RunReady();
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->size(), 4u);
  EXPECT_TRUE((*out)[0].ok());
  EXPECT_TRUE((*out)[1].ok());
  EXPECT_EQ((*out)[2].message(), "webpush: subscription.endpoint is not a URL");
  EXPECT_EQ((*out)[3].code(), StatusCode::kAlreadyExists) << "its mark is m1's";
  ASSERT_TRUE(waiting.has_value()) << "the waiting FETCH was woken";
  EXPECT_NE((*waiting)->value().find("taken-mail-1"), std::string::npos);
  EXPECT_EQ(Stats().queues[kDeliveryQueue].size, 1u);
  EXPECT_GE(builtin.available, 1);
}

}  // namespace
}  // namespace bulkhead
