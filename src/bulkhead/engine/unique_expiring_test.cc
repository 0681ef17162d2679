// Unique and expiring jobs through the engine, on a memory store (inline and deferred) with a
// simulated clock, so that every lock length and expiry is checked to the microsecond.
#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "bulkhead/engine/engine.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/engine/unique_jobs.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/simulated_clock.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class UniqueExpiringTest : public ::testing::TestWithParam<bool> {
 protected:
  UniqueExpiringTest() {
    config_.fetch_block_ms = 50;
    inner_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    if (GetParam()) {
      deferred_ = std::make_unique<DeferredStore>(
          *inner_, [this](std::function<void()> f) { boost::asio::post(io_, std::move(f)); });
    }
    engine_ =
        std::make_unique<Engine>(io_, deferred_ ? *deferred_ : *inner_, config_, clock_, rng_);
  }
  // PUSHes a job of type "Sync", args [1] and the given jid and extra fields.
  Status Push(const std::string& jid, const std::string& extra) {
    auto job = ParseJob(R"({"jid":")" + jid + R"(","jobtype":"Sync","args":[1])" + extra + "}",
                        clock_.Now());
    if (!job.ok()) return job.status();
    std::optional<Status> out;
    engine_->Push(std::move(*job), [&](Status s) { out = s; });
    RunReady();
    EXPECT_TRUE(out.has_value()) << "PUSH never answered";
    return out.value_or(Status::Internal("no answer"));
  }
  // The jid FETCH hands out, or "" for none (the FETCH waits out its block time).
  std::string Fetch(std::vector<std::string> queues = {"default"}) {
    std::optional<Result<std::optional<std::string>>> out;
    engine_->Fetch(queues, "", [&](auto r) { out = std::move(r); });
    RunReady();
    if (!out) {
      clock_.Advance(std::chrono::milliseconds(config_.fetch_block_ms));
      RunReady();
    }
    EXPECT_TRUE(out.has_value() && out->ok()) << "FETCH never answered";
    if (!out || !out->ok() || !out->value()) return "";
    return json::parse(***out)["jid"];
  }
  Status Ack(const std::string& jid) {
    std::optional<Status> out;
    engine_->Ack(jid, [&](Status s) { out = s; });
    RunReady();
    return out.value_or(Status::Internal("no answer"));
  }
  Status Fail(const std::string& jid) {
    std::optional<Status> out;
    engine_->Fail(jid, FailureReport{"E", "boom", {}}, [&](Status s) { out = s; });
    RunReady();
    return out.value_or(Status::Internal("no answer"));
  }
  EngineSnapshot Snapshot() {
    std::optional<Result<EngineSnapshot>> out;
    engine_->Snapshot([&](Result<EngineSnapshot> r) { out = std::move(r); });
    RunReady();
    return out && out->ok() ? **out : EngineSnapshot{};
  }
  StoreStats Stats() {
    RunReady();
    StoreStats s;
    inner_->Stats([&](Result<StoreStats> r) { s = *r; });
    return s;
  }
  void RunReady() {
    io_.restart();
    io_.poll();
  }

  Config config_;
  SimulatedClock clock_;
  ScriptedRng rng_{0, 0, 0, 0};
  boost::asio::io_context io_;
  std::unique_ptr<Store> inner_;
  std::unique_ptr<DeferredStore> deferred_;
  std::unique_ptr<Engine> engine_;
};

INSTANTIATE_TEST_SUITE_P(Answers, UniqueExpiringTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Deferred" : "Inline"; });

constexpr char kUnique60[] = R"(,"custom":{"unique_for":60})";

TEST_P(UniqueExpiringTest, DuplicateIsRefusedForExactlyUniqueFor) {
  ASSERT_TRUE(Push("uniq-0001", kUnique60).ok());
  Status dup = Push("uniq-0002", kUnique60);
  EXPECT_TRUE(IsNotUnique(dup)) << dup.ToString();
  EXPECT_EQ(dup.message(), "NOTUNIQUE Job not unique");
  // Another queue, other args or another type is another job; no unique_for bypasses the lock.
  EXPECT_TRUE(Push("uniq-0003", R"(,"queue":"other","custom":{"unique_for":60})").ok());
  EXPECT_TRUE(Push("uniq-0004", "").ok());
  clock_.Advance(60s - 1us);
  EXPECT_TRUE(IsNotUnique(Push("uniq-0005", kUnique60)));
  clock_.Advance(1us);
  EXPECT_TRUE(Push("uniq-0005", kUnique60).ok());
  EngineSnapshot snap = Snapshot();
  EXPECT_EQ(snap.unique.taken, 3);
  EXPECT_EQ(snap.unique.denied, 2);
}

TEST_P(UniqueExpiringTest, ArgsAreComparedCanonically) {
  auto push = [&](const std::string& jid, const std::string& args) {
    auto job = ParseJob(R"({"jid":")" + jid + R"(","jobtype":"Sync","args":)" + args +
                            R"(,"custom":{"unique_for":5}})",
                        clock_.Now());
    std::optional<Status> out;
    engine_->Push(std::move(*job), [&](Status s) { out = s; });
    RunReady();
    return *out;
  };
  ASSERT_TRUE(push("canon-001", R"([{"a":1,"b":[2,3]}])").ok());
  EXPECT_TRUE(IsNotUnique(push("canon-002", R"([{"b":[2,3],"a":1}])")));
  EXPECT_TRUE(push("canon-003", R"([{"a":1,"b":[3,2]}])").ok());
}

TEST_P(UniqueExpiringTest, ScheduledJobsLockForTheirDelayPlusUniqueFor) {
  std::string at = FormatRfc3339(clock_.Now() + 30s);
  ASSERT_TRUE(Push("sched-001", R"(,"at":")" + at + R"(","custom":{"unique_for":60})").ok());
  clock_.Advance(90s - 1us);
  EXPECT_TRUE(IsNotUnique(Push("sched-002", kUnique60)));
  clock_.Advance(1us);
  EXPECT_TRUE(Push("sched-002", kUnique60).ok());
}

TEST_P(UniqueExpiringTest, UntilSuccessHoldsThroughRetriesAndGoesAtAck) {
  ASSERT_TRUE(Push("succ-0001", R"(,"retry":3,"custom":{"unique_for":3600})").ok());
  ASSERT_EQ(Fetch(), "succ-0001");
  ASSERT_TRUE(Fail("succ-0001").ok());
  EXPECT_TRUE(IsNotUnique(Push("succ-0002", R"(,"custom":{"unique_for":3600})")));
  // The job's own retry is not a PUSH: it never trips its lock.
  clock_.Advance(10min);
  engine_->RunScheduledOnce();
  RunReady();
  ASSERT_EQ(Fetch(), "succ-0001");
  EXPECT_TRUE(IsNotUnique(Push("succ-0002", R"(,"custom":{"unique_for":3600})")));
  ASSERT_TRUE(Ack("succ-0001").ok());
  EXPECT_TRUE(Push("succ-0002", R"(,"custom":{"unique_for":3600})").ok());
}

TEST_P(UniqueExpiringTest, UntilStartGoesAtFetch) {
  constexpr char kStart[] = R"(,"custom":{"unique_for":3600,"unique_until":"start"})";
  ASSERT_TRUE(Push("start-001", kStart).ok());
  EXPECT_TRUE(IsNotUnique(Push("start-002", kStart)));
  ASSERT_EQ(Fetch(), "start-001");
  EXPECT_TRUE(Push("start-002", kStart).ok());
  // The first job's ACK leaves the second's lock alone.
  ASSERT_TRUE(Ack("start-001").ok());
  EXPECT_TRUE(IsNotUnique(Push("start-003", kStart)));
}

TEST_P(UniqueExpiringTest, BadUniqueAndExpiryValuesNameTheField) {
  struct Case {
    const char* extra;
    const char* error_start;
  };
  const Case cases[] = {
      {R"(,"custom":{"unique_for":"600"})",
       "custom.unique_for must be a positive number of seconds (at most 1e9), got \"600\""},
      {R"(,"custom":{"unique_for":-1})", "custom.unique_for must be a positive number"},
      {R"(,"custom":{"unique_for":0})", "custom.unique_for must be a positive number"},
      {R"(,"custom":{"unique_for":60,"unique_until":"finish"})",
       "custom.unique_until must be \"success\" or \"start\", got \"finish\""},
      {R"(,"custom":{"expires_at":"tomorrow"})",
       "custom.expires_at must be an RFC 3339 time, got \"tomorrow\""},
      {R"(,"custom":{"expires_at":1700000000})", "custom.expires_at must be an RFC 3339 time"},
      {R"(,"custom":{"expires_in":"60"})",
       "custom.expires_in must be a non-negative number of seconds (at most 1e9), got \"60\""},
      {R"(,"custom":{"expires_in":-5})", "custom.expires_in must be a non-negative number"},
  };
  for (const Case& c : cases) {
    Status s = Push("bad-value-01", c.extra);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.extra;
    EXPECT_TRUE(s.message().starts_with(c.error_start)) << c.extra << ": " << s.message();
  }
  EXPECT_EQ(Stats().enqueued, 0u);
}

TEST_P(UniqueExpiringTest, ExpiredJobsAreDroppedAtFetchAndTheFetchGoesOn) {
  ASSERT_TRUE(Push("exp-in-001", R"(,"custom":{"expires_in":10})").ok());
  std::string at = FormatRfc3339(clock_.Now() + 10500ms);  // a fraction of a second
  ASSERT_TRUE(Push("exp-at-001", R"(,"custom":{"expires_at":")" + at + R"("})").ok());
  ASSERT_TRUE(Push("exp-at-002", R"(,"custom":{"expires_at":")" + at + R"("})").ok());
  ASSERT_TRUE(Push("plain-0001", "").ok());
  clock_.Advance(10s - 1us);
  ASSERT_EQ(Fetch(), "exp-in-001");  // not yet
  ASSERT_TRUE(Ack("exp-in-001").ok());
  clock_.Advance(500ms + 1us);
  // exp-at-001 and exp-at-002 expired at that instant: dropped, and the FETCH hands out the next.
  EXPECT_EQ(Fetch(), "plain-0001");
  StoreStats s = Stats();
  EXPECT_EQ(s.working, 1u);
  EXPECT_EQ(s.enqueued, 0u);
  EXPECT_EQ(s.processed, 1) << "a dropped job is not processed";
  EXPECT_EQ(Snapshot().jobs_expired, (std::map<std::string, int64_t>{{"default", 2}}));
}

TEST_P(UniqueExpiringTest, ExpiresInCountsFromPushAndBecomesExpiresAt) {
  ASSERT_TRUE(Push("exp-conv-01", R"(,"custom":{"expires_in":2.5})").ok());
  std::optional<Result<std::optional<std::string>>> out;
  engine_->Fetch({"default"}, "", [&](auto r) { out = std::move(r); });
  RunReady();
  ASSERT_TRUE(out && out->ok() && out->value());
  json custom = json::parse(***out)["custom"];
  EXPECT_EQ(custom["expires_at"], FormatRfc3339(clock_.Now() + 2500ms));
  EXPECT_EQ(custom["expires_in"], 2.5);
}

TEST_P(UniqueExpiringTest, AnExpiredUniqueJobReleasesItsLock) {
  ASSERT_TRUE(Push("exp-uniq-1", R"(,"custom":{"unique_for":600,"expires_in":5})").ok());
  clock_.Advance(5s);
  EXPECT_EQ(Fetch(), "");
  EXPECT_TRUE(Push("exp-uniq-2", R"(,"custom":{"unique_for":600})").ok());
}

}  // namespace
}  // namespace bulkhead
