// Store contract tests, run against every embedded implementation (memory and SQLite), plus
// SQLite-specific persistence tests.
#include "bulkhead/store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "bulkhead/store/embedded_store.h"
#include "bulkhead/store/sqlite_change_log.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/store/testing/make_job.h"
#include "bulkhead/store/testing/shared_redis.h"
#include "bulkhead/store/testing/test_loop.h"
#include "bulkhead/store/testing/writer_post_gate.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // A parameterised test's name is "Name/param": one directory, not a parent left behind.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = std::filesystem::temp_directory_path() /
           ("bulkhead_store_test_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  // "memory", "sqlite", or either with "+deferred": the same store behind DeferredStore, which
  // answers every call on a later turn of the loop, as a networked store does; "redis": a
  // RedisStore on the shared redis-server, on a namespace of this test's own.
  bool Deferred() const { return GetParam().ends_with("+deferred"); }
  bool Redis() const { return GetParam().starts_with("redis"); }
  // The store keeps what it was told across Reopen.
  bool Persistent() const { return GetParam() == "sqlite" || GetParam() == "redis"; }
  std::string Url() const {
    if (Redis()) return SharedRedis()->url();
    return GetParam().starts_with("sqlite") ? "sqlite:" + (dir_ / "test.db").string() : "memory:";
  }
  void Reopen() {
    store_.reset();
    StoreOptions options;
    if (Redis()) {
      std::string error;
      ASSERT_NE(SharedRedis(&error), nullptr) << error;
      if (namespace_.empty()) namespace_ = UniqueRedisNamespace("store");
      options.io_context = &loop_.io();
      options.redis_namespace = namespace_;
    }
    auto s = OpenStoreFromUrl(Url(), loop_.poster(), options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    if (Deferred()) store_ = std::make_unique<DeferredStore>(std::move(store_), loop_.poster());
  }
  // Redis only: another node on this test's namespace (`node_id` empty: a generated one).
  std::unique_ptr<Store> OpenOtherNode(const std::string& node_id = "") {
    StoreOptions options;
    options.io_context = &loop_.io();
    options.redis_namespace = namespace_;
    options.node_id = node_id;
    auto opened = OpenStoreFromUrl(Url(), loop_.poster(), options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(*opened) : nullptr;
  }
  Status Push(JobRecord j) {
    std::optional<Status> result;
    store_->Push(std::move(j), [&](Status s) { result = s; });
    loop_.RunUntil([&] { return result.has_value(); });
    return *result;
  }
  std::optional<JobRecord> Fetch(std::vector<std::string> queues) {
    std::optional<JobRecord> job;
    bool done = false;
    store_->Fetch(queues, now_, [&](Result<std::optional<JobRecord>> r) {
      ASSERT_TRUE(r.ok());
      job = *r;
      done = true;
    });
    loop_.RunUntil([&] { return done; });
    return job;
  }
  bool Ack(const std::string& jid) {
    std::optional<bool> found;
    store_->Ack(jid, now_, [&](Result<std::optional<JobRecord>> r) {
      ASSERT_TRUE(r.ok());
      found = r->has_value();
    });
    loop_.RunUntil([&] { return found.has_value(); });
    return *found;
  }
  StoreStats Stats() {
    std::optional<StoreStats> out;
    store_->Stats([&](Result<StoreStats> r) { out = *r; });
    loop_.RunUntil([&] { return out.has_value(); });
    return *out;
  }
  Status PutKey(const std::string& key_id, const std::string& pem) {
    std::optional<Status> result;
    store_->signing_keys().Put(key_id, pem, [&](Status s) { result = s; });
    loop_.RunUntil([&] { return result.has_value(); });
    return *result;
  }
  Status RemoveKey(const std::string& key_id) {
    std::optional<Status> result;
    store_->signing_keys().Remove(key_id, [&](Status s) { result = s; });
    loop_.RunUntil([&] { return result.has_value(); });
    return *result;
  }
  // "key_id=pem" per stored key, in the store's order.
  std::vector<std::string> Keys() {
    std::vector<std::string> out;
    bool done = false;
    store_->signing_keys().List([&](Result<std::vector<SigningKeyStore::StoredSigningKey>> r) {
      done = true;
      ASSERT_TRUE(r.ok());
      for (const auto& k : *r) out.push_back(k.key_id + "=" + k.pem);
    });
    loop_.RunUntil([&] { return done; });
    return out;
  }
  Status PutHost(const HostStateRecord& record) {
    std::optional<Status> result;
    store_->host_states().Put(record, [&](Status s) { result = s; });
    loop_.RunUntil([&] { return result.has_value(); });
    return *result;
  }
  Status RemoveHost(const std::string& host) {
    std::optional<Status> result;
    store_->host_states().Remove(host, [&](Status s) { result = s; });
    loop_.RunUntil([&] { return result.has_value(); });
    return *result;
  }
  std::vector<HostStateRecord> Hosts() {
    std::vector<HostStateRecord> out;
    bool done = false;
    store_->host_states().List([&](Result<std::vector<HostStateRecord>> r) {
      done = true;
      ASSERT_TRUE(r.ok());
      out = *r;
    });
    loop_.RunUntil([&] { return done; });
    return out;
  }
  // Starts a store call through `call(callback)` and runs the loop until its answer arrives.
  template <typename R>
  R Await(const std::function<void(std::function<void(R)>)>& call) {
    std::optional<R> out;
    call([&](R r) { out.emplace(std::move(r)); });
    loop_.RunUntil([&] { return out.has_value(); });
    return std::move(*out);
  }
  std::vector<JobRecord> ExpiredAt(TimePoint at) {
    using R = Result<std::vector<JobRecord>>;
    return *Await<R>([&](auto cb) { store_->ExpiredReservations(at, 10, cb); });
  }
  Status Flush() {
    std::optional<Status> result;
    store_->Flush([&](Status s) { result = s; });
    loop_.RunUntil([&] { return result.has_value(); });
    return *result;
  }

  TestLoop loop_;
  std::filesystem::path dir_;
  std::string namespace_;  // redis
  std::unique_ptr<Store> store_;
  TimePoint now_ = FromUnixMicros(1'700'000'000'000'000);
};

TEST_P(StoreTest, QueuesAreFifoAndFetchHonoursQueueOrder) {
  ASSERT_TRUE(Push(MakeJob("job-a-0001", "low")).ok());
  ASSERT_TRUE(Push(MakeJob("job-b-0001", "high")).ok());
  ASSERT_TRUE(Push(MakeJob("job-b-0002", "high")).ok());
  EXPECT_EQ(Fetch({"high", "low"})->jid, "job-b-0001");
  EXPECT_EQ(Fetch({"high", "low"})->jid, "job-b-0002");
  EXPECT_EQ(Fetch({"high", "low"})->jid, "job-a-0001");
  EXPECT_FALSE(Fetch({"high", "low"}).has_value());
  EXPECT_EQ(Stats().working, 3u);
}

TEST_P(StoreTest, DuplicateJidIsRefused) {
  ASSERT_TRUE(Push(MakeJob("job-dup-001")).ok());
  Status s = Push(MakeJob("job-dup-001"));
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(), "jid job-dup-001 is already known to the server");
}

TEST_P(StoreTest, AckEndsReservationOnce) {
  ASSERT_TRUE(Push(MakeJob("job-ack-001")).ok());
  auto job = Fetch({"default"});
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state, JobState::kWorking);
  EXPECT_EQ(job->score, ToUnixMicros(now_) + 60'000'000);
  EXPECT_TRUE(Ack("job-ack-001"));
  EXPECT_FALSE(Ack("job-ack-001"));
  EXPECT_EQ(Stats().working, 0u);
}

TEST_P(StoreTest, PausedQueuesAreSkipped) {
  ASSERT_TRUE(Push(MakeJob("job-p-00001", "a")).ok());
  ASSERT_TRUE(Push(MakeJob("job-p-00002", "b")).ok());
  bool done = false;
  store_->SetPaused({"a"}, true, [&](Status) { done = true; });
  loop_.RunUntil([&] { return done; });
  EXPECT_EQ(Fetch({"a", "b"})->jid, "job-p-00002");
  EXPECT_FALSE(Fetch({"a"}).has_value());
  EXPECT_TRUE(Stats().queues["a"].paused);
}

TEST_P(StoreTest, DueScheduledJobsMoveToTheirQueueWithEnqueuedAt) {
  int64_t now = ToUnixMicros(now_);
  ASSERT_TRUE(Push(MakeJob("job-s-00001", "default", JobState::kScheduled, now - 1)).ok());
  ASSERT_TRUE(Push(MakeJob("job-s-00002", "default", JobState::kScheduled, now + 10)).ok());
  std::vector<JobRecord> moved = *Await<Result<std::vector<JobRecord>>>(
      [&](auto cb) { store_->EnqueueDue(JobState::kScheduled, now_, 100, cb); });
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].jid, "job-s-00001");
  auto job = Fetch({"default"});
  ASSERT_TRUE(job);
  auto doc = nlohmann::json::parse(job->payload);
  EXPECT_EQ(doc["enqueued_at"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(Stats().scheduled, 1u);
}

TEST_P(StoreTest, ExpiredReservationsAndMoveToRetry) {
  ASSERT_TRUE(Push(MakeJob("job-e-00001")).ok());
  ASSERT_TRUE(Fetch({"default"}));
  EXPECT_TRUE(ExpiredAt(now_ + 59s).empty());
  std::vector<JobRecord> expired = ExpiredAt(now_ + 60s);
  ASSERT_EQ(expired.size(), 1u);
  JobRecord j = expired[0];
  j.state = JobState::kRetry;
  j.score = ToUnixMicros(now_ + 120s);
  bool done = false;
  store_->Move(j, now_, [&](Status s) {
    EXPECT_TRUE(s.ok());
    done = true;
  });
  loop_.RunUntil([&] { return done; });
  StoreStats st = Stats();
  EXPECT_EQ(st.working, 0u);
  EXPECT_EQ(st.retries, 1u);
}

TEST_P(StoreTest, FailReservedEndsOnlyTheReservationItNames) {
  ASSERT_TRUE(Push(MakeJob("job-f-00001")).ok());
  ASSERT_TRUE(Push(MakeJob("job-f-00002")).ok());
  auto first = Fetch({"default"});
  auto second = Fetch({"default"});
  ASSERT_TRUE(first && second);
  auto fail = [&](const JobRecord& reserved, std::optional<JobRecord> next, bool count_failure) {
    return Await<Status>([&](auto cb) {
      store_->FailReserved(reserved.jid, FromUnixMicros(reserved.score), next, count_failure, now_,
                           cb);
    });
  };
  JobRecord retry = *first;
  retry.state = JobState::kRetry;
  retry.score = ToUnixMicros(now_ + 120s);
  // Renewed since it was read: that reservation is gone, nothing changes.
  ASSERT_TRUE(
      Await<Status>([&](auto cb) { store_->ExtendReservation(first->jid, now_ + 90s, cb); }).ok());
  EXPECT_EQ(fail(*first, retry, true).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Stats().working, 2u);
  first->score = ToUnixMicros(now_ + 90s);
  EXPECT_TRUE(fail(*first, retry, true).ok());
  EXPECT_EQ(fail(*first, retry, true).code(), StatusCode::kFailedPrecondition)
      << "ended once; a second FAIL of the same reservation changes nothing";
  // Acked meanwhile: the ACK stands.
  EXPECT_TRUE(Ack(second->jid));
  EXPECT_EQ(fail(*second, std::nullopt, true).code(), StatusCode::kFailedPrecondition);
  StoreStats st = Stats();
  EXPECT_EQ(st.working, 0u);
  EXPECT_EQ(st.retries, 1u);
  EXPECT_EQ(st.processed, 2) << "one ACK, one FAIL";
  EXPECT_EQ(st.failures, 1);
  // nullopt deletes; without count_failure only processed grows.
  ASSERT_TRUE(Push(MakeJob("job-f-00003")).ok());
  auto third = Fetch({"default"});
  ASSERT_TRUE(third);
  EXPECT_TRUE(fail(*third, std::nullopt, false).ok());
  st = Stats();
  EXPECT_EQ(st.working, 0u);
  EXPECT_EQ(st.retries, 1u);
  EXPECT_EQ(st.processed, 3);
  EXPECT_EQ(st.failures, 1);
}

TEST_P(StoreTest, MutateKillsRequeuesDiscardsByFilter) {
  int64_t later = ToUnixMicros(now_ + 3600s);
  JobRecord a = MakeJob("job-m-00001", "default", JobState::kRetry, later);
  JobRecord b = MakeJob("job-m-00002", "default", JobState::kRetry, later);
  b.jobtype = "other";
  ASSERT_TRUE(Push(MakeJob("job-m-00003")).ok());
  // Push only takes queued/scheduled jobs; put a and b in retries through Move.
  for (JobRecord j : {a, b}) {
    JobRecord q = j;
    q.state = JobState::kScheduled;
    ASSERT_TRUE(Push(q).ok());
    bool done = false;
    store_->Move(j, now_, [&](Status) { done = true; });
    loop_.RunUntil([&] { return done; });
  }
  MutateFilter by_type;
  by_type.jobtype = "other";
  std::optional<size_t> n;
  store_->Mutate(MutateOp::kKill, JobState::kRetry, by_type, now_, 24h, [&](auto r) { n = *r; });
  loop_.RunUntil([&] { return n.has_value(); });
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(Stats().dead, 1u);
  MutateFilter glob;
  glob.glob = "*job-m-00001*";
  n.reset();
  store_->Mutate(MutateOp::kRequeue, JobState::kRetry, glob, now_, 24h, [&](auto r) { n = *r; });
  loop_.RunUntil([&] { return n.has_value(); });
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(Stats().queues["default"].size, 2u);
  n.reset();
  store_->Mutate(MutateOp::kClear, JobState::kDead, glob, now_, 24h, [&](auto r) { n = *r; });
  loop_.RunUntil([&] { return n.has_value(); });
  EXPECT_EQ(*n, 1u) << "clear ignores the filter";
  EXPECT_EQ(Stats().dead, 0u);
}

TEST_P(StoreTest, CallsMadeWhileAMutateRunsTakeEffectAfterIt) {
  JobRecord a = MakeJob("job-mo-00001", "default", JobState::kScheduled, ToUnixMicros(now_ + 1h));
  ASSERT_TRUE(Push(a).ok());
  a.state = JobState::kRetry;
  ASSERT_TRUE(Await<Status>([&](auto cb) { store_->Move(a, now_, cb); }).ok());
  std::optional<Result<size_t>> requeued;
  std::optional<Status> removed;
  store_->Mutate(MutateOp::kRequeue, JobState::kRetry, MutateFilter{}, now_, 24h,
                 [&](Result<size_t> r) { requeued = r; });
  // Made before the MUTATE answered: it sees the job requeued, and deletes it from its queue.
  store_->Remove(a.jid, [&](Status s) { removed = s; });
  loop_.RunUntil([&] { return requeued.has_value() && removed.has_value(); });
  ASSERT_TRUE(requeued->ok());
  EXPECT_EQ(**requeued, 1u);
  EXPECT_TRUE(removed->ok());
  StoreStats st = Stats();
  EXPECT_EQ(st.retries, 0u);
  EXPECT_EQ(st.enqueued, 0u);
}

TEST_P(StoreTest, RemoveQueueAndFlush) {
  ASSERT_TRUE(Push(MakeJob("job-r-00001", "gone")).ok());
  ASSERT_TRUE(Push(MakeJob("job-r-00002", "kept")).ok());
  bool done = false;
  store_->RemoveQueues({"gone"}, [&](Status) { done = true; });
  loop_.RunUntil([&] { return done; });
  StoreStats st = Stats();
  EXPECT_FALSE(st.queues.contains("gone"));
  EXPECT_EQ(st.queues["kept"].size, 1u);
  // The removed job's jid is free again.
  EXPECT_TRUE(Push(MakeJob("job-r-00001", "gone")).ok());
  store_->CountOutcome(2, 1, now_);
  done = false;
  store_->Flush([&](Status) { done = true; });
  loop_.RunUntil([&] { return done; });
  st = Stats();
  EXPECT_EQ(st.enqueued, 0u);
  EXPECT_EQ(st.processed, 0);
}

TEST_P(StoreTest, AckCountsProcessedInTheSameChangeAsTheJobLeavesWorking) {
  ASSERT_TRUE(Push(MakeJob("job-ack-0001", "default")).ok());
  ASSERT_TRUE(Fetch({"default"}).has_value());
  std::optional<bool> found;
  store_->Ack("job-ack-0001", now_,
              [&](Result<std::optional<JobRecord>> r) { found = r.ok() && r->has_value(); });
  // A reader between the ACK and its commit (a pipelined INFO) sees both changes or neither.
  StoreStats before_commit = Stats();
  EXPECT_EQ(before_commit.working, 0u);
  EXPECT_EQ(before_commit.processed, 1);
  loop_.RunUntil([&] { return found.has_value(); });
  EXPECT_TRUE(*found);
  EXPECT_EQ(Stats().processed, 1);
  std::optional<bool> again;
  store_->Ack("job-ack-0001", now_,
              [&](Result<std::optional<JobRecord>> r) { again = r.ok() && r->has_value(); });
  loop_.RunUntil([&] { return again.has_value(); });
  EXPECT_FALSE(*again);
  EXPECT_EQ(Stats().processed, 1) << "an ACK of a jid not reserved counts nothing";
}

TEST_P(StoreTest, CountersAddUp) {
  store_->CountOutcome(3, 1, now_);
  store_->CountOutcome(1, 0, now_);
  EXPECT_EQ(Stats().processed, 4);
  EXPECT_EQ(Stats().failures, 1);
}

TEST_P(StoreTest, ExtendReservationMovesTheExpiry) {
  ASSERT_TRUE(Push(MakeJob("job-extend-01")).ok());
  auto job = Fetch({"default"});
  ASSERT_TRUE(job);
  TimePoint expiry = FromUnixMicros(job->score);  // now + 60 s
  auto expired = [&](TimePoint at) { return ExpiredAt(at).size(); };
  EXPECT_EQ(expired(expiry), 1u);
  std::optional<Status> done;
  store_->ExtendReservation("job-extend-01", expiry + std::chrono::hours(24),
                            [&](Status s) { done = s; });
  loop_.RunUntil([&] { return done.has_value(); });
  ASSERT_TRUE(done->ok()) << done->ToString();
  EXPECT_EQ(expired(expiry + std::chrono::hours(23)), 0u);
  EXPECT_EQ(expired(expiry + std::chrono::hours(24)), 1u);
  done.reset();
  store_->ExtendReservation("job-unknown-1", expiry, [&](Status s) { done = s; });
  loop_.RunUntil([&] { return done.has_value(); });
  EXPECT_EQ(done->code(), StatusCode::kNotFound);
  if (Persistent()) {
    Reopen();
    EXPECT_EQ(expired(expiry + std::chrono::hours(23)), 0u) << "the renewal is durable";
    EXPECT_EQ(expired(expiry + std::chrono::hours(24)), 1u);
  }
  EXPECT_TRUE(Ack("job-extend-01"));
}

TEST_P(StoreTest, SigningKeysPutReplaceListRemove) {
  EXPECT_TRUE(Keys().empty());
  ASSERT_TRUE(PutKey("https://b.example/actor#main-key", "pem-b").ok());
  ASSERT_TRUE(PutKey("https://a.example/actor#main-key", "pem-a").ok());
  ASSERT_TRUE(PutKey("https://b.example/actor#main-key", "pem-b2").ok());  // replaces
  EXPECT_EQ(Keys(), (std::vector<std::string>{"https://a.example/actor#main-key=pem-a",
                                              "https://b.example/actor#main-key=pem-b2"}));
  ASSERT_TRUE(RemoveKey("https://a.example/actor#main-key").ok());
  Status missing = RemoveKey("https://a.example/actor#main-key");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("https://a.example/actor#main-key"), std::string::npos);
  EXPECT_EQ(Keys(), std::vector<std::string>{"https://b.example/actor#main-key=pem-b2"});
}

TEST_P(StoreTest, FlushKeepsSigningKeys) {
  ASSERT_TRUE(PutKey("https://a.example/actor#main-key", "pem-a").ok());
  ASSERT_TRUE(Push(MakeJob("job-flush-001")).ok());
  ASSERT_TRUE(Flush().ok());
  EXPECT_EQ(Stats().enqueued, 0u);
  EXPECT_EQ(Keys(), std::vector<std::string>{"https://a.example/actor#main-key=pem-a"});
  if (Persistent()) {
    Reopen();
    EXPECT_EQ(Stats().enqueued, 0u);
    EXPECT_EQ(Keys(), std::vector<std::string>{"https://a.example/actor#main-key=pem-a"});
  }
}

HostStateRecord FailingHost(const std::string& host, int64_t since_us) {
  HostStateRecord r;
  r.host = host;
  r.breaker_open_until_us = since_us + 30'000'000;
  r.breaker_series_openings = 2;
  r.breaker_openings = 7;
  r.failing_since_us = since_us;
  r.unavailable = true;
  r.retry_after_until_us = since_us + 60'000'000;
  return r;
}

TEST_P(StoreTest, HostStatesPutReplaceListRemove) {
  EXPECT_TRUE(Hosts().empty());
  HostStateRecord b = FailingHost("b.example", 1'700'000'000'000'000);
  HostStateRecord a = FailingHost("a.example:8443", 1'700'000'100'000'000);
  ASSERT_TRUE(PutHost(b).ok());
  ASSERT_TRUE(PutHost(a).ok());
  b.breaker_open_until_us = 0;  // the breaker closed, the host still fails
  b.unavailable = false;
  ASSERT_TRUE(PutHost(b).ok());
  EXPECT_EQ(Hosts(), (std::vector<HostStateRecord>{a, b})) << "ordered by host, b replaced";
  ASSERT_TRUE(RemoveHost("a.example:8443").ok());
  EXPECT_TRUE(RemoveHost("a.example:8443").ok()) << "removing what is not there is no error";
  EXPECT_EQ(Hosts(), std::vector<HostStateRecord>{b});
}

TEST_P(StoreTest, FlushKeepsHostStates) {
  HostStateRecord a = FailingHost("a.example", 1'700'000'000'000'000);
  ASSERT_TRUE(PutHost(a).ok());
  ASSERT_TRUE(Flush().ok());
  EXPECT_EQ(Hosts(), std::vector<HostStateRecord>{a});
  if (Persistent()) {
    Reopen();
    EXPECT_EQ(Hosts(), std::vector<HostStateRecord>{a});
  }
}

// --- Unique jobs and cron ---

TEST_P(StoreTest, UniqueLockRefusesOtherJobsUntilAckOrExpiry) {
  auto push_unique = [&](const std::string& jid, TimePoint now, Duration length = 60s) {
    return Await<Status>([&](auto cb) {
      store_->unique_locks().Push(MakeJob(jid), UniqueLock{"k1", now + length}, now, cb);
    });
  };
  ASSERT_TRUE(push_unique("uniq-00001", now_).ok());
  EXPECT_TRUE(IsNotUnique(push_unique("uniq-00002", now_ + 1s)));
  // The refused job was not added; a job without the lock is not checked; another key is free.
  EXPECT_EQ(Stats().enqueued, 1u);
  ASSERT_TRUE(Push(MakeJob("uniq-plain1")).ok());
  EXPECT_TRUE(
      Await<Status>([&](auto cb) {
        store_->unique_locks().Push(MakeJob("uniq-other"), UniqueLock{"k2", now_ + 60s}, now_, cb);
      }).ok());
  // The jid test comes first: a known jid is AlreadyExists, whatever the lock.
  EXPECT_EQ(push_unique("uniq-00001", now_).code(), StatusCode::kAlreadyExists);
  // ACK releases the lock.
  ASSERT_EQ(Fetch({"default"})->jid, "uniq-00001");
  EXPECT_TRUE(Ack("uniq-00001"));
  ASSERT_TRUE(push_unique("uniq-00003", now_ + 2s, 10s).ok());
  // Held until its expiry (exactly), then free.
  EXPECT_TRUE(IsNotUnique(push_unique("uniq-00004", now_ + 11s)));
  EXPECT_TRUE(push_unique("uniq-00004", now_ + 12s).ok());
  // The expired holder's ACK does not release the new holder's lock.
  ASSERT_TRUE(Fetch({"default"}));  // uniq-plain1
  ASSERT_TRUE(Fetch({"default"}));  // uniq-other
  ASSERT_EQ(Fetch({"default"})->jid, "uniq-00003");
  EXPECT_TRUE(Ack("uniq-00003"));
  EXPECT_TRUE(IsNotUnique(push_unique("uniq-00005", now_ + 13s)));
}

TEST_P(StoreTest, UniqueLockReleaseRetryAndFlush) {
  auto push_unique = [&](const std::string& jid) {
    return Await<Status>([&](auto cb) {
      store_->unique_locks().Push(MakeJob(jid), UniqueLock{"k", now_ + 600s}, now_, cb);
    });
  };
  ASSERT_TRUE(push_unique("uniq-r-0001").ok());
  // Releasing for a jid that holds nothing changes nothing.
  ASSERT_TRUE(Await<Status>([&](auto cb) { store_->unique_locks().Release("nobody", cb); }).ok());
  EXPECT_TRUE(IsNotUnique(push_unique("uniq-r-0002")));
  ASSERT_TRUE(
      Await<Status>([&](auto cb) { store_->unique_locks().Release("uniq-r-0001", cb); }).ok());
  ASSERT_TRUE(push_unique("uniq-r-0002").ok());
  // A failed job waiting for its retry keeps its lock.
  Fetch({"default"});
  auto job = Fetch({"default"});
  ASSERT_TRUE(job && job->jid == "uniq-r-0002");
  JobRecord retry = *job;
  retry.state = JobState::kRetry;
  retry.score = ToUnixMicros(now_ + 30s);
  ASSERT_TRUE(Await<Status>([&](auto cb) {
                store_->FailReserved(job->jid, FromUnixMicros(job->score), retry, true, now_, cb);
              }).ok());
  EXPECT_TRUE(IsNotUnique(push_unique("uniq-r-0003")));
  // FLUSH deletes the locks.
  ASSERT_TRUE(Flush().ok());
  EXPECT_TRUE(push_unique("uniq-r-0003").ok());
  if (Persistent()) {
    Reopen();
    EXPECT_TRUE(IsNotUnique(push_unique("uniq-r-0004")));
  }
}

TEST_P(StoreTest, CronFiringIsClaimedOncePerDueTime) {
  auto claim = [&](const std::string& entry, TimePoint due) {
    return *Await<Result<bool>>([&](auto cb) { store_->cron_claims().Claim(entry, due, cb); });
  };
  auto firings = [&] {
    return *Await<Result<std::map<std::string, TimePoint>>>(
        [&](auto cb) { store_->cron_claims().List(cb); });
  };
  EXPECT_TRUE(firings().empty());
  EXPECT_TRUE(claim("Minutely", now_));
  EXPECT_FALSE(claim("Minutely", now_));
  EXPECT_FALSE(claim("Minutely", now_ - 60s));
  EXPECT_TRUE(claim("Hourly", now_));
  EXPECT_TRUE(claim("Minutely", now_ + 60s));
  std::map<std::string, TimePoint> expected{{"Hourly", now_}, {"Minutely", now_ + 60s}};
  EXPECT_EQ(firings(), expected);
  ASSERT_TRUE(Flush().ok());  // FLUSH keeps them
  EXPECT_EQ(firings(), expected);
  if (Persistent()) {
    Reopen();
    EXPECT_EQ(firings(), expected);
    EXPECT_FALSE(claim("Minutely", now_ + 60s));
  }
}

TEST_P(StoreTest, TwoNodesClaimAFiringAndTakeALockOnce) {
  if (!Redis()) GTEST_SKIP() << "only Redis is shared by several nodes";
  auto other = OpenOtherNode();
  ASSERT_TRUE(other);
  // Both nodes at once, neither waiting for the other's answer.
  std::optional<Result<bool>> a, b;
  store_->cron_claims().Claim("shared", now_, [&](Result<bool> r) { a.emplace(std::move(r)); });
  other->cron_claims().Claim("shared", now_, [&](Result<bool> r) { b.emplace(std::move(r)); });
  std::optional<Status> pa, pb;
  store_->unique_locks().Push(MakeJob("two-node-1"), UniqueLock{"same", now_ + 60s}, now_,
                              [&](Status s) { pa = s; });
  other->unique_locks().Push(MakeJob("two-node-2"), UniqueLock{"same", now_ + 60s}, now_,
                             [&](Status s) { pb = s; });
  loop_.RunUntil([&] { return a && b && pa && pb; });
  ASSERT_TRUE(a->ok() && b->ok());
  EXPECT_NE(**a, **b) << "exactly one node claims the firing";
  EXPECT_TRUE(pa->ok() != pb->ok()) << "exactly one node takes the lock";
  EXPECT_TRUE(IsNotUnique(pa->ok() ? *pb : *pa));
  other->Close();
}

// The embedded stores every contract suite runs on, each also behind DeferredStore ("+deferred":
// every answer on a later loop turn); the Redis instantiations follow each suite.
const auto kEmbeddedStores =
    ::testing::Values("memory", "sqlite", "memory+deferred", "sqlite+deferred");
std::string EmbeddedStoreName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '+', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Embedded, StoreTest, kEmbeddedStores, EmbeddedStoreName);

// The same cases on a real redis-server (testing/shared_redis.h).
INSTANTIATE_TEST_SUITE_P(Redis, StoreTest, ::testing::Values("redis"));

// --- Queue throttling ---

std::vector<QueueThrottle> Concurrency(const std::string& queue, int n,
                                       Duration timeout = std::chrono::seconds(30)) {
  return {QueueThrottle{.queue = queue, .limit = n, .per_worker = false, .timeout = timeout}};
}

class ThrottleStoreTest : public StoreTest {
 protected:
  std::string FetchT(std::vector<std::string> queues, const std::vector<QueueThrottle>& throttles,
                     const std::string& wid = "w1", std::optional<TimePoint> at = std::nullopt) {
    using R = Result<std::optional<JobRecord>>;
    R r = Await<R>([&](auto cb) {
      store_->throttles().Fetch(queues, ThrottledFetch{throttles, wid}, at.value_or(now_), cb);
    });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && r->has_value() ? (*r)->jid : "";
  }
  std::vector<ThrottleUse> Uses(const std::vector<QueueThrottle>& throttles,
                                std::optional<TimePoint> at = std::nullopt) {
    using R = Result<std::vector<ThrottleUse>>;
    R r = Await<R>([&](auto cb) { store_->throttles().Uses(throttles, at.value_or(now_), cb); });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<ThrottleUse>{};
  }
  size_t InUse(const std::vector<QueueThrottle>& throttles,
               std::optional<TimePoint> at = std::nullopt) {
    auto uses = Uses(throttles, at);
    return uses.empty() ? SIZE_MAX : uses[0].in_use;
  }
  void PushN(const std::string& queue, int n) {
    for (int i = 0; i < n; ++i) {
      char jid[32];
      std::snprintf(jid, sizeof jid, "job-%s-%04d", queue.c_str(), i);
      ASSERT_TRUE(Push(MakeJob(jid, queue)).ok());
    }
  }
};

TEST_P(ThrottleStoreTest, AFullThrottledQueueIsSkippedForTheNextQueue) {
  auto thr = Concurrency("thr", 2);
  PushN("thr", 4);
  PushN("other", 2);
  EXPECT_EQ(FetchT({"thr", "other"}, thr, "w1"), "job-thr-0000");
  EXPECT_EQ(FetchT({"thr", "other"}, thr, "w2"), "job-thr-0001");
  EXPECT_EQ(InUse(thr), 2u);
  EXPECT_EQ(FetchT({"thr", "other"}, thr, "w3"), "job-other-0000") << "thr is full: next queue";
  EXPECT_EQ(FetchT({"thr"}, thr, "w3"), "") << "thr alone: as if empty";
  EXPECT_EQ(Stats().queues["thr"].size, 2u) << "the skipped jobs stay queued";
  // An unthrottled FETCH of the same queue is not limited (the engine always passes throttles).
  EXPECT_EQ(Fetch({"thr"})->jid, "job-thr-0002");
  EXPECT_EQ(InUse(thr), 2u) << "an unthrottled FETCH takes no slot";
}

TEST_P(ThrottleStoreTest, SlotsComeBackOnAckFailRemoveAndRequeue) {
  auto thr = Concurrency("thr", 1);
  PushN("thr", 6);
  // ACK.
  EXPECT_EQ(FetchT({"thr"}, thr), "job-thr-0000");
  EXPECT_EQ(FetchT({"thr"}, thr), "");
  EXPECT_TRUE(Ack("job-thr-0000"));
  EXPECT_EQ(InUse(thr), 0u);
  // FAIL (to retry).
  EXPECT_EQ(FetchT({"thr"}, thr), "job-thr-0001");
  EXPECT_EQ(FetchT({"thr"}, thr), "");
  auto working = *Await<Result<std::optional<JobRecord>>>(
      [&](auto cb) { store_->GetWorking("job-thr-0001", cb); });
  ASSERT_TRUE(working.has_value());
  JobRecord retry = *working;
  retry.state = JobState::kRetry;
  retry.score = ToUnixMicros(now_ + 1h);
  ASSERT_TRUE(Await<Status>([&](auto cb) {
                store_->FailReserved("job-thr-0001", FromUnixMicros(working->score), retry, true,
                                     now_, cb);
              }).ok());
  EXPECT_EQ(InUse(thr), 0u);
  // Remove.
  EXPECT_EQ(FetchT({"thr"}, thr), "job-thr-0002");
  EXPECT_EQ(FetchT({"thr"}, thr), "");
  ASSERT_TRUE(Await<Status>([&](auto cb) { store_->Remove("job-thr-0002", cb); }).ok());
  EXPECT_EQ(InUse(thr), 0u);
  // An expired reservation given back to its queue (Move, as the reaper's FAIL or a FETCH that
  // is gone does).
  EXPECT_EQ(FetchT({"thr"}, thr), "job-thr-0003");
  std::vector<JobRecord> expired = ExpiredAt(now_ + 60s);
  ASSERT_EQ(expired.size(), 1u);
  expired[0].state = JobState::kQueued;
  ASSERT_TRUE(Await<Status>([&](auto cb) { store_->Move(expired[0], now_, cb); }).ok());
  EXPECT_EQ(InUse(thr), 0u);
  EXPECT_EQ(FetchT({"thr"}, thr), "job-thr-0004");
  // Extending a reservation keeps the slot.
  ASSERT_TRUE(Await<Status>([&](auto cb) {
                store_->ExtendReservation("job-thr-0004", now_ + 90s, cb);
              }).ok());
  EXPECT_EQ(InUse(thr), 1u);
  EXPECT_EQ(FetchT({"thr"}, thr), "");
}

TEST_P(ThrottleStoreTest, TheTimeoutReleasesASlotExactly) {
  auto thr = Concurrency("thr", 1, 30s);
  PushN("thr", 3);
  EXPECT_EQ(FetchT({"thr"}, thr), "job-thr-0000");
  TimePoint almost = now_ + 30s - 1us;
  EXPECT_EQ(InUse(thr, almost), 1u);
  EXPECT_EQ(FetchT({"thr"}, thr, "w1", almost), "");
  EXPECT_EQ(InUse(thr, now_ + 30s), 0u);
  EXPECT_EQ(FetchT({"thr"}, thr, "w1", now_ + 30s), "job-thr-0001")
      << "the slot expires after timeout although job-thr-0000 is still reserved";
  EXPECT_EQ(Stats().working, 2u);
  EXPECT_TRUE(Ack("job-thr-0000")) << "its late ACK still ends its reservation";
  EXPECT_EQ(InUse(thr, now_ + 30s), 1u) << "and does not free job-thr-0001's slot";
}

TEST_P(ThrottleStoreTest, PerWorkerThrottlesCountPerWid) {
  std::vector<QueueThrottle> bulk{
      QueueThrottle{.queue = "bulk", .limit = 2, .per_worker = true, .timeout = 60s}};
  PushN("bulk", 6);
  EXPECT_EQ(FetchT({"bulk"}, bulk, "wid-a"), "job-bulk-0000");
  EXPECT_EQ(FetchT({"bulk"}, bulk, "wid-a"), "job-bulk-0001");
  EXPECT_EQ(FetchT({"bulk"}, bulk, "wid-a"), "");
  EXPECT_EQ(FetchT({"bulk"}, bulk, "wid-b"), "job-bulk-0002");
  auto uses = Uses(bulk);
  ASSERT_EQ(uses.size(), 1u);
  EXPECT_EQ(uses[0], (ThrottleUse{.queue = "bulk", .in_use = 3, .max_per_worker = 2}));
  EXPECT_TRUE(Ack("job-bulk-0000"));
  EXPECT_EQ(FetchT({"bulk"}, bulk, "wid-a"), "job-bulk-0003");
  EXPECT_EQ(Uses(bulk)[0], (ThrottleUse{.queue = "bulk", .in_use = 3, .max_per_worker = 2}));
}

TEST_P(ThrottleStoreTest, SlotsSurviveAReopenAndFlushClearsThem) {
  auto thr = Concurrency("thr", 1, 30s);
  PushN("thr", 3);
  EXPECT_EQ(FetchT({"thr"}, thr), "job-thr-0000");
  if (Persistent()) {
    Reopen();
    EXPECT_EQ(InUse(thr), 1u) << "the reservation still holds its slot";
    EXPECT_EQ(FetchT({"thr"}, thr), "");
    EXPECT_EQ(FetchT({"thr"}, thr, "w1", now_ + 30s), "job-thr-0001") << "until its timeout";
    EXPECT_TRUE(Ack("job-thr-0001"));
  }
  ASSERT_TRUE(Flush().ok());
  EXPECT_EQ(InUse(thr), 0u);
  PushN("thr", 1);
  EXPECT_EQ(FetchT({"thr"}, thr), "job-thr-0000");
}

INSTANTIATE_TEST_SUITE_P(Embedded, ThrottleStoreTest, kEmbeddedStores, EmbeddedStoreName);
INSTANTIATE_TEST_SUITE_P(Redis, ThrottleStoreTest, ::testing::Values("redis"));

class SqliteStoreTest : public StoreTest {};

TEST_P(SqliteStoreTest, EverythingSurvivesReopen) {
  int64_t now = ToUnixMicros(now_);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Push(MakeJob("job-q-0000" + std::to_string(i))).ok());
  ASSERT_TRUE(Push(MakeJob("job-sched-01", "default", JobState::kScheduled, now + 1000)).ok());
  auto fetched = Fetch({"default"});
  ASSERT_EQ(fetched->jid, "job-q-00000");
  ASSERT_TRUE(Ack("job-q-00000"));
  auto reserved = Fetch({"default"});
  ASSERT_EQ(reserved->jid, "job-q-00001");
  bool done = false;
  store_->SetPaused({"paused-q"}, true, [&](Status) { done = true; });
  store_->CountOutcome(7, 2, now_);
  loop_.RunUntil([&] { return done; });
  // Make sure the reservation and counters (no callbacks) are committed: one more durable op.
  ASSERT_TRUE(Push(MakeJob("job-last-001", "other")).ok());
  Reopen();
  StoreStats st = Stats();
  EXPECT_EQ(st.queues["default"].size, 3u);
  EXPECT_EQ(st.queues["other"].size, 1u);
  EXPECT_EQ(st.working, 1u);
  EXPECT_EQ(st.scheduled, 1u);
  EXPECT_TRUE(st.queues["paused-q"].paused);
  EXPECT_EQ(st.processed, 8) << "the ACK's 1 and CountOutcome's 7";
  EXPECT_EQ(st.failures, 2);
  // FIFO order survives, and the reservation can still be acknowledged.
  EXPECT_EQ(Fetch({"default"})->jid, "job-q-00002");
  EXPECT_TRUE(Ack("job-q-00001"));
}

TEST_P(SqliteStoreTest, SigningKeysSurviveReopenAndTheFileIsPrivate) {
  std::string pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
  ASSERT_TRUE(PutKey("https://a.example/actor#main-key", pem).ok());
  ASSERT_TRUE(PutKey("https://b.example/actor#main-key", "pem-b").ok());
  ASSERT_TRUE(RemoveKey("https://b.example/actor#main-key").ok());
  Reopen();
  EXPECT_EQ(Keys(), std::vector<std::string>{"https://a.example/actor#main-key=" + pem});
  auto perms = std::filesystem::status(dir_ / "test.db").permissions();
  EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
            std::filesystem::perms::none);
}

TEST_P(SqliteStoreTest, HostStatesSurviveReopen) {
  HostStateRecord a = FailingHost("a.example", 1'700'000'000'000'000);
  HostStateRecord b = FailingHost("b.example", 1'700'000'000'000'000);
  HostStateRecord c;  // only a failing-since time
  c.host = "c.example";
  c.failing_since_us = 1'699'000'000'000'000;
  ASSERT_TRUE(PutHost(a).ok());
  ASSERT_TRUE(PutHost(b).ok());
  ASSERT_TRUE(PutHost(c).ok());
  ASSERT_TRUE(RemoveHost("b.example").ok());
  // Several changes to one host in one group commit: the last one wins.
  a.breaker_series_openings = 3;
  a.breaker_openings = 8;
  store_->host_states().Put(a, nullptr);
  ASSERT_TRUE(Push(MakeJob("job-hosts-0001")).ok());
  Reopen();
  EXPECT_EQ(Hosts(), (std::vector<HostStateRecord>{a, c}));
}

// A version-1 sqlite: file at `path`: the tables of version 1 and a job, as bulkhead 0.1 wrote
// them.
void WriteVersion1Database(const std::string& path, TestLoop& loop) {
  {
    SqliteChangeLog log(path, loop.poster(), "process");
    MemoryState state;
    ASSERT_TRUE(log.Load(state).ok());
    std::vector<Change> changes;
    Change insert(Change::Kind::kInsertJob);
    insert.id = 1;
    insert.job = MakeJob("job-v1-00001");
    changes.push_back(insert);
    std::optional<Status> done;
    log.Append(std::move(changes), [&](Status s) { done = s; });
    loop.RunUntil([&] { return done.has_value(); });
    ASSERT_TRUE(done->ok());
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "DROP TABLE signing_keys; DROP TABLE host_states; UPDATE meta SET "
                           "value='1' WHERE key='schema_version';",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
}

// The schema_version the file at `path` records.
std::string SchemaVersionOf(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(
      sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &st, nullptr),
      SQLITE_OK);
  std::string version = "(no schema_version row)";
  if (sqlite3_step(st) == SQLITE_ROW)
    version = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return version;
}

TEST(SqliteSchemaTest, Version1DatabaseIsUpgradedInPlace) {
  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_schema_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string path = (dir / "v1.db").string();
  TestLoop loop;
  WriteVersion1Database(path, loop);
  auto store = OpenStoreFromUrl("sqlite:" + path, loop.poster());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::optional<Status> put;
  (*store)->signing_keys().Put("https://a.example/actor#main-key", "pem-a",
                               [&](Status s) { put = s; });
  loop.RunUntil([&] { return put.has_value(); });
  EXPECT_TRUE(put->ok()) << put->ToString();
  HostStateRecord host;
  host.host = "a.example";
  host.failing_since_us = 1'700'000'000'000'000;
  std::optional<Status> put_host;
  (*store)->host_states().Put(host, [&](Status s) { put_host = s; });
  loop.RunUntil([&] { return put_host.has_value(); });
  EXPECT_TRUE(put_host->ok()) << put_host->ToString();
  StoreStats stats;
  (*store)->Stats([&](Result<StoreStats> r) { stats = *r; });
  EXPECT_EQ(stats.enqueued, 1u);
  (*store)->Close();
  store->reset();
  EXPECT_EQ(SchemaVersionOf(path), std::to_string(SqliteChangeLog::kSchemaVersion));
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, SqliteStoreTest, ::testing::Values("sqlite"));

TEST(OpenStoreTest, RejectsUnknownSchemes) {
  auto r = OpenStoreFromUrl("postgres://x", [](std::function<void()> f) { f(); });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unsupported store URL"), std::string::npos);
}

TEST(GlobMatchTest, RedisStyle) {
  EXPECT_TRUE(GlobMatch("*foo*", "a foo b"));
  EXPECT_FALSE(GlobMatch("*foo*", "a fo b"));
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
}

}  // namespace
}  // namespace bulkhead

namespace bulkhead {
namespace {

TEST(SqliteChangeLogTest, ChangesCancelledWithinOneBatchLeaveNoRow) {
  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_changelog_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::string path = (dir / "log.db").string();
  TestLoop loop;
  {
    SqliteChangeLog log(path, loop.poster(), "process");
    MemoryState empty;
    ASSERT_TRUE(log.Load(empty).ok());
    std::vector<Change> changes;
    for (int64_t id : {5, 6}) {
      Change insert(Change::Kind::kInsertJob);
      insert.id = id;
      insert.job = MakeJob("job-batch-" + std::to_string(id));
      changes.push_back(insert);
    }
    Change fetch(Change::Kind::kUpdateState);
    fetch.id = 5;
    fetch.job.state = JobState::kWorking;
    changes.push_back(fetch);
    Change ack(Change::Kind::kDeleteJob);
    ack.id = 5;
    changes.push_back(ack);
    std::optional<Status> done;
    log.Append(std::move(changes), [&](Status s) { done = s; });
    loop.RunUntil([&] { return done.has_value(); });
    ASSERT_TRUE(done->ok()) << done->ToString();
  }
  SqliteChangeLog log(path, loop.poster(), "process");
  MemoryState state;
  ASSERT_TRUE(log.Load(state).ok());
  EXPECT_FALSE(state.Contains("job-batch-5"));
  EXPECT_TRUE(state.Contains("job-batch-6"));
  log.Close();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bulkhead

namespace bulkhead {
namespace {

// Degraded mode against a real SQLite file capped with PRAGMA max_page_count: the file fills up,
// a commit fails with SQLITE_FULL exactly as on a full disk, and the store must stop changing.
class DegradedStoreTest : public ::testing::Test {
 protected:
  // 64 pages of 4 KiB: the schema takes a few, a few dozen 8 KiB jobs fill the rest.
  static constexpr int64_t kMaxPages = 64;

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("bulkhead_degraded_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    path_ = (dir_ / "full.db").string();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Open(int64_t max_pages) {
    store_.reset();
    store_ = std::make_unique<EmbeddedStore>(
        "sqlite", std::make_unique<SqliteChangeLog>(path_, loop_.poster(), "process", max_pages));
    Status s = store_->Open();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  Status Push(JobRecord job) {
    std::optional<Status> result;
    store_->Push(std::move(job), [&](Status s) { result = s; });
    loop_.RunUntil([&] { return result.has_value(); });
    return *result;
  }
  Result<std::optional<JobRecord>> Fetch() {
    std::optional<Result<std::optional<JobRecord>>> out;
    store_->Fetch({"default"}, now_, [&](Result<std::optional<JobRecord>> r) { out = r; });
    loop_.RunUntil([&] { return out.has_value(); });
    return *out;
  }
  Result<std::optional<JobRecord>> Ack(const std::string& jid) {
    std::optional<Result<std::optional<JobRecord>>> out;
    store_->Ack(jid, now_, [&](Result<std::optional<JobRecord>> r) { out = r; });
    loop_.RunUntil([&] { return out.has_value(); });
    return *out;
  }
  StoreStats Stats() {
    std::optional<StoreStats> out;
    store_->Stats([&](Result<StoreStats> r) { out = *r; });
    loop_.RunUntil([&] { return out.has_value(); });
    return *out;
  }
  static JobRecord BigJob(int i) {
    char jid[32];
    std::snprintf(jid, sizeof(jid), "job-full-%05d", i);
    JobRecord job = MakeJob(jid);
    job.payload = nlohmann::json{{"jid", jid},
                                 {"jobtype", "noop"},
                                 {"queue", "default"},
                                 {"args", {std::string(8192, 'x')}}}
                      .dump();
    return job;
  }

  // Pushes big jobs until a commit fails (at most 1000): the jids answered +OK in order, the
  // failure and the jid it refused.
  struct Filled {
    std::vector<std::string> durable;
    Status failed;
    std::string failed_jid;
  };
  Filled FillUntilACommitFails() {
    Filled out;
    for (int i = 0; i < 1000 && out.failed.ok(); ++i) {
      JobRecord job = BigJob(i);
      std::string jid = job.jid;
      Status s = Push(std::move(job));
      if (s.ok()) {
        out.durable.push_back(jid);
      } else {
        out.failed = s;
        out.failed_jid = jid;
      }
    }
    return out;
  }
  // PUSH, FETCH, ACK of `reserved_jid`, pause, MUTATE and counting outcomes are refused (the
  // counting silently) with `reason`.
  void ExpectChangesRefused(const std::string& reason, const std::string& reserved_jid) {
    Status push = Push(BigJob(5000));
    EXPECT_EQ(push.code(), StatusCode::kUnavailable);
    EXPECT_EQ(push.message(), reason);
    auto fetched = Fetch();
    ASSERT_FALSE(fetched.ok());
    EXPECT_EQ(fetched.status().message(), reason);
    auto acked = Ack(reserved_jid);
    ASSERT_FALSE(acked.ok());
    EXPECT_EQ(acked.status().message(), reason);
    std::optional<Status> paused;
    store_->SetPaused({"default"}, true, [&](Status s) { paused = s; });
    ASSERT_TRUE(paused.has_value());
    EXPECT_EQ(paused->message(), reason);
    std::optional<Result<size_t>> mutated;
    store_->Mutate(MutateOp::kClear, JobState::kDead, MutateFilter{}, now_, std::chrono::hours(1),
                   [&](Result<size_t> r) { mutated = r; });
    ASSERT_TRUE(mutated.has_value());
    EXPECT_FALSE(mutated->ok());
    store_->CountOutcome(3, 1, now_);
  }

  std::filesystem::path dir_;
  std::string path_;
  TestLoop loop_;
  TimePoint now_ = FromUnixMicros(1'700'000'000'000'000);
  std::unique_ptr<EmbeddedStore> store_;
};

TEST_F(DegradedStoreTest, AFailedCommitStopsEveryChangeAndTheFileKeepsTheDurableState) {
  Open(kMaxPages);
  EXPECT_FALSE(store_->degraded());
  EXPECT_EQ(store_->degraded_reason(), "");
  // Fill the file until a commit fails; remember what was answered +OK.
  auto [durable, failed, failed_jid] = FillUntilACommitFails();
  ASSERT_FALSE(failed.ok()) << "the capped file never filled up";
  ASSERT_GE(durable.size(), 2u);
  EXPECT_EQ(failed.code(), StatusCode::kUnavailable);
  EXPECT_NE(failed.message().find("database or disk is full"), std::string::npos)
      << failed.message();

  // Degraded, and says why.
  ASSERT_TRUE(store_->degraded());
  std::string reason = store_->degraded_reason();
  EXPECT_EQ(reason.rfind("store degraded: the last commit to " + path_ + " failed: ", 0), 0u)
      << reason;
  EXPECT_NE(reason.find("database or disk is full"), std::string::npos) << reason;
  EXPECT_NE(reason.find("restart bulkhead"), std::string::npos) << reason;

  // The failed PUSH's job may still be in memory (lost at restart), but nothing hands it out. (A
  // PUSH is answered once in the redo log, and the commit that fails comes after: the PUSH that
  // hears of it is refused before or after it changed memory, as it meets the store degraded or
  // the log failed.)
  StoreStats before = Stats();
  EXPECT_GE(before.enqueued, durable.size());
  EXPECT_LE(before.enqueued, durable.size() + 1);

  // Every change is refused with the reason and leaves memory as it was.
  ExpectChangesRefused(reason, durable[0]);
  StoreStats after = Stats();
  EXPECT_EQ(after.enqueued, before.enqueued);
  EXPECT_EQ(after.working, 0u);
  EXPECT_EQ(after.processed, 0);
  EXPECT_EQ(after.failures, 0);
  EXPECT_FALSE(after.queues["default"].paused);

  // Reads still answer.
  std::optional<Result<std::vector<JobRecord>>> listed;
  store_->List(JobState::kWorking, 0, 10, [&](Result<std::vector<JobRecord>> r) { listed = r; });
  ASSERT_TRUE(listed.has_value() && listed->ok());
  EXPECT_TRUE((*listed)->empty());

  // After a restart (with room again) the file holds exactly what was answered +OK, in order.
  store_->Close();
  Open(0);
  EXPECT_FALSE(store_->degraded());
  EXPECT_EQ(Stats().enqueued, durable.size());
  std::vector<std::string> reloaded;
  for (;;) {
    auto job = Fetch();
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    if (!job->has_value()) break;
    reloaded.push_back((*job)->jid);
  }
  EXPECT_EQ(reloaded, durable);
  EXPECT_TRUE(Push(MakeJob(failed_jid)).ok()) << "the failed jid must be unknown after restart";
}

TEST_F(DegradedStoreTest, TheLogWritesNothingAfterAFailedCommit) {
  std::optional<Status> failed;
  int64_t id = 1;
  {
    SqliteChangeLog log(path_, loop_.poster(), "process", kMaxPages);
    MemoryState empty;
    ASSERT_TRUE(log.Load(empty).ok());
    EXPECT_TRUE(log.failure().ok());
    for (; id < 1000; ++id) {
      std::vector<Change> changes(1, Change(Change::Kind::kInsertJob));
      changes[0].id = id;
      changes[0].job = BigJob(static_cast<int>(id));
      std::optional<Status> done;
      log.Append(std::move(changes), [&](Status s) { done = s; });
      loop_.RunUntil([&] { return done.has_value(); });
      if (!done->ok()) {
        failed = done;
        break;
      }
    }
    ASSERT_TRUE(failed.has_value()) << "the capped file never filled up";
    Status failure = log.failure();
    ASSERT_FALSE(failure.ok());
    // The first error answered is the failed commit's, or (the commit failed on changes answered
    // already, from the redo log) failure() itself.
    EXPECT_NE(failure.message().find(failed->message().substr(failed->message().rfind(": ") + 2)),
              std::string::npos)
        << failure.message() << " / " << failed->message();
    EXPECT_EQ(failure.message().rfind("the last commit to " + path_ + " failed: ", 0), 0u);
    // A change that would fit is not written either: it is answered with the first failure.
    std::vector<Change> small(1, Change(Change::Kind::kAddCounter));
    small[0].name = "processed";
    small[0].delta = 1;
    std::optional<Status> refused;
    log.Append(std::move(small), [&](Status s) { refused = s; });
    loop_.RunUntil([&] { return refused.has_value(); });
    EXPECT_EQ(*refused, failure);
  }
  SqliteChangeLog log(path_, loop_.poster(), "process");
  MemoryState state;
  ASSERT_TRUE(log.Load(state).ok());
  EXPECT_EQ(state.Stats().enqueued, static_cast<size_t>(id - 1));
  EXPECT_EQ(state.Stats().processed, 0);
  log.Close();
}

// The largest size of the WAL file of a fresh log while `commits` commits of `per_commit` inserts
// (`payload` bytes each), every one also acknowledging (deleting) the jobs of two commits ago, are
// appended one at a time.
uintmax_t LargestWalOf(const std::string& name, int commits, int per_commit, size_t payload) {
  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_wal_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::string path = (dir / "wal.db").string();
  TestLoop loop;
  uintmax_t largest = 0;
  {
    SqliteChangeLog log(path, loop.poster(), "process");
    MemoryState empty;
    EXPECT_TRUE(log.Load(empty).ok());
    int64_t id = 1;
    for (int commit = 0; commit < commits; ++commit) {
      std::vector<Change> changes;
      for (int i = 0; i < per_commit; ++i, ++id) {
        Change insert(Change::Kind::kInsertJob);
        insert.id = id;
        insert.job = MakeJob("job-wal-" + std::to_string(id));
        insert.job.payload = std::string(payload, 'w');
        changes.push_back(std::move(insert));
      }
      // A push/ack stream, not only growth.
      for (int64_t gone = id - 3 * per_commit; gone < id - 2 * per_commit && gone > 0; ++gone) {
        Change ack(Change::Kind::kDeleteJob);
        ack.id = gone;
        changes.push_back(ack);
      }
      std::optional<Status> done;
      log.Append(std::move(changes), [&](Status s) { done = s; });
      loop.RunUntil([&] { return done.has_value(); });
      EXPECT_TRUE(done->ok()) << done->ToString();
      largest = std::max(largest, std::filesystem::file_size(path + "-wal"));
    }
  }
  std::filesystem::remove_all(dir);
  return largest;
}

// The WAL stays near its bound under a sustained load, so that recent commits never need
// WAL-sized room on the disk: 12 MiB of payloads in 240 appends of 100 changes, and 8 MiB (more
// than the bound allows unless checkpoints run) in 400 appends of 10.
TEST(SqliteWalTest, TheWriteAheadLogStaysSmall) {
  for (auto [commits, per_commit, payload] :
       {std::tuple{240, 50, size_t{1024}}, std::tuple{400, 5, size_t{4096}}}) {
    uintmax_t largest = LargestWalOf(std::to_string(per_commit), commits, per_commit, payload);
    // One transaction beyond the limit at most (these write well under 1 MiB).
    EXPECT_LE(largest, uintmax_t(SqliteChangeLog::kWalSizeLimitBytes + (1 << 20))) << per_commit;
    EXPECT_GT(largest, 0u) << per_commit;
  }
}

// Changes are logged and answered on the event loop, and those it may not log (a signing key,
// anything queued behind a read) answered by the writer thread after its commit: whoever
// answers, `durable` callbacks answer in the order of the calls, a read sees every change
// appended before it, and everything is in the file.
Change SigningKeyChange() {
  Change key(Change::Kind::kPutSigningKey);
  key.name = "key-order";
  key.value = "not a real PEM";
  return key;
}

TEST(SqliteChangeLogTest, AnswersComeInCallOrderWhicheverThreadCommits) {
  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_changelog_order_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::string path = (dir / "log.db").string();
  TestLoop loop;
  int64_t next_id = 1;
  auto inserts = [&](size_t n) {
    std::vector<Change> changes;
    for (size_t i = 0; i < n; ++i, ++next_id) {
      Change insert(Change::Kind::kInsertJob);
      insert.id = next_id;
      insert.job = MakeJob("job-order-" + std::to_string(next_id));
      changes.push_back(std::move(insert));
    }
    return changes;
  };
  std::vector<std::string> answers;
  {
    SqliteChangeLog log(path, loop.poster(), "process");
    MemoryState empty;
    ASSERT_TRUE(log.Load(empty).ok());
    for (int round = 0; round < 3; ++round) {
      std::string r = std::to_string(round);
      auto answer = [&answers](std::string name) {
        return [&answers, name](Status s) {
          EXPECT_TRUE(s.ok()) << s.ToString();
          answers.push_back(name);
        };
      };
      log.Append(inserts(1), answer(r + "small"));
      // A signing key: never logged, so the writer answers it (and what follows it).
      if (round == 1) log.Append({SigningKeyChange()}, answer(r + "key"));
      log.Append(inserts(2), answer(r + "small2"));
      int64_t last = next_id - 1;
      log.ReadJobs({last}, [&answers, r, last](auto rows) {
        ASSERT_TRUE(rows.ok());
        ASSERT_TRUE((*rows)[0].has_value()) << "row " << last << " not yet there for the read";
        EXPECT_EQ((*rows)[0]->jid, "job-order-" + std::to_string(last));
        answers.push_back(r + "read");
      });
      size_t want = answers.size() + (round == 1 ? 4 : 3);
      loop.RunUntil([&] { return answers.size() == want; });
    }
    // A lone change on an idle log, as a producer's PUSH per round trip.
    for (int i = 0; i < 20; ++i) {
      bool done = false;
      log.Append(inserts(1), [&](Status s) { done = s.ok(); });
      loop.RunUntil([&] { return done; });
    }
  }
  EXPECT_EQ(answers, (std::vector<std::string>{"0small", "0small2", "0read", "1small", "1key",
                                               "1small2", "1read", "2small", "2small2", "2read"}));
  SqliteChangeLog log(path, loop.poster(), "process");
  MemoryState state;
  ASSERT_TRUE(log.Load(state).ok());
  EXPECT_EQ(state.Stats().enqueued, static_cast<size_t>(next_id - 1));
  log.Close();
  std::filesystem::remove_all(dir);
}

// The writer's answers may still be on their way to the loop when its flush logs a change
// appended meanwhile: that change is durable, but its answer must not overtake them (it is
// held, and given once they arrived).
TEST(SqliteChangeLogTest, ALoggedChangeNeverOvertakesTheWritersAnswers) {
  auto dir = std::filesystem::temp_directory_path() /
             ("bulkhead_changelog_overtake_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  TestLoop loop;
  WriterPostGate gate(loop);
  SqliteChangeLog log((dir / "log.db").string(), gate.poster(), "process");
  MemoryState empty;
  ASSERT_TRUE(log.Load(empty).ok());
  std::vector<std::string> answers;
  std::vector<Change> one(1, Change(Change::Kind::kInsertJob));
  one[0].id = 1;
  one[0].job = MakeJob("job-overtake-1");
  log.Append(one, [&](Status s) { answers.push_back("insert 1 " + s.ToString()); });
  loop.RunUntil([&] { return answers.size() == 1; });  // logged and answered on the loop
  log.ReadJobs({1}, [&](Result<std::vector<std::optional<JobRecord>>> rows) {
    answers.push_back(rows.ok() && rows->size() == 1 && (*rows)[0] ? "read " + (*rows)[0]->jid
                                                                   : "read failed");
  });
  gate.WaitForWriter();  // the writer reads the row and posts the answer, held back here
  one[0].id = 2;
  one[0].job = MakeJob("job-overtake-2");
  log.Append(one, [&](Status s) { answers.push_back("insert 2 " + s.ToString()); });
  gate.RunReady();  // the flush logs it
  EXPECT_EQ(answers, std::vector<std::string>{"insert 1 OK"}) << "answered ahead of the read";
  gate.Release();
  loop.RunUntil([&] { return answers.size() == 3; });
  EXPECT_EQ(answers,
            (std::vector<std::string>{"insert 1 OK", "read job-overtake-1", "insert 2 OK"}));
  // Close: what the writer posts from now on stays held, never run.
  log.Close();
  std::filesystem::remove_all(dir);
}

TEST(MemoryStoreTest, IsNeverDegraded) {
  EmbeddedStore store("memory", nullptr);
  ASSERT_TRUE(store.Open().ok());
  EXPECT_FALSE(store.degraded());
  EXPECT_EQ(store.degraded_reason(), "");
}

// --- Batches (store/batch_record.h) ---

class BatchStoreTest : public StoreTest {
 protected:
  // A callback job of batch `bid` (as BatchStore::New gets it from the engine).
  static JobRecord Callback(const std::string& jid, const std::string& bid, const char* which) {
    JobRecord job = MakeJob(jid, "callbacks");
    auto doc = nlohmann::json::parse(job.payload);
    doc["custom"] = {{"_bid", bid}, {"_cb", which}};
    job.payload = doc.dump();
    return job;
  }
  Status New(const std::string& bid, bool complete, bool success, const std::string& parent = "") {
    BatchRecord b;
    b.bid = bid;
    b.parent_bid = parent;
    b.description = "test " + bid;
    b.created_us = ToUnixMicros(now_);
    if (complete) b.complete = Callback("cb-complete-" + bid, bid, "complete");
    if (success) b.success = Callback("cb-success-" + bid, bid, "success");
    return Await<Status>([&](auto cb) { store_->batches().New(b, now_, cb); });
  }
  std::optional<BatchRecord> Get(const std::string& bid) {
    auto r = Await<Result<std::optional<BatchRecord>>>(
        [&](auto cb) { store_->batches().Get(bid, now_, cb); });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::nullopt;
  }
  Status Commit(const std::string& bid) {
    return Await<Status>([&](auto cb) { store_->batches().Commit(bid, now_, cb); });
  }
  Status Join(const std::string& jid, const std::string& bid) {
    return Await<Status>(
        [&](auto cb) { store_->batches().PushMember(MakeJob(jid), bid, now_, cb); });
  }
  // FETCHes `jid` (it must be the head of "default") and FAILs it into the retry set.
  void FetchAndFail(const std::string& jid) {
    auto job = Fetch({"default"});
    ASSERT_TRUE(job && job->jid == jid);
    JobRecord retry = *job;
    retry.state = JobState::kRetry;
    retry.score = ToUnixMicros(now_ + 1s);
    ASSERT_TRUE(Await<Status>([&](auto cb) {
                  store_->FailReserved(jid, FromUnixMicros(job->score), retry, true, now_, cb);
                }).ok());
  }
  // Moves due retries and scheduled jobs (fired callbacks) to their queues.
  void EnqueueDue() {
    for (JobState set : {JobState::kScheduled, JobState::kRetry}) {
      using R = Result<std::vector<JobRecord>>;
      ASSERT_TRUE(Await<R>([&](auto cb) { store_->EnqueueDue(set, now_, 100, cb); }).ok());
    }
  }
  // The jids of the fired callbacks waiting in "callbacks" (fetched, so reserved now).
  // Sorted: callbacks fired in one change are due at the same time, in no set order.
  std::vector<std::string> FiredCallbacks() {
    EnqueueDue();
    std::vector<std::string> out;
    while (auto job = Fetch({"callbacks"})) out.push_back(job->jid);
    std::sort(out.begin(), out.end());
    return out;
  }
  BatchCounts Counts() {
    return *Await<Result<BatchCounts>>([&](auto cb) { store_->batches().Counts(cb); });
  }
  static std::string Summary(const BatchRecord& b) {
    return "total=" + std::to_string(b.total) + " pending=" + std::to_string(b.pending) +
           " failed=" + std::to_string(b.failed) + " complete=" + b.complete_st +
           " success=" + b.success_st;
  }
};

TEST_P(BatchStoreTest, MembersAreCountedOnceAndEachCallbackFiresOnceInOrder) {
  ASSERT_TRUE(New("b-lifecycle0001", true, true).ok());
  ASSERT_TRUE(Join("member-a", "b-lifecycle0001").ok());
  ASSERT_TRUE(Join("member-b", "b-lifecycle0001").ok());
  EXPECT_EQ(Summary(*Get("b-lifecycle0001")), "total=2 pending=2 failed=0 complete= success=");
  FetchAndFail("member-a");
  auto b = Fetch({"default"});
  ASSERT_TRUE(b && b->jid == "member-b");
  ASSERT_TRUE(Ack("member-b"));
  EXPECT_EQ(Summary(*Get("b-lifecycle0001")), "total=2 pending=1 failed=1 complete= success=")
      << "every member ran, but the batch is not committed: nothing fires";
  EXPECT_TRUE(FiredCallbacks().empty());

  ASSERT_TRUE(Commit("b-lifecycle0001").ok());
  EXPECT_EQ(Summary(*Get("b-lifecycle0001")), "total=2 pending=1 failed=1 complete=1 success=");
  EXPECT_EQ(FiredCallbacks(), std::vector<std::string>{"cb-complete-b-lifecycle0001"});
  ASSERT_TRUE(Commit("b-lifecycle0001").ok()) << "committing again is OK";

  // member-a fails again on its retry: counted once, not once per attempt.
  now_ += 2s;
  EnqueueDue();
  FetchAndFail("member-a");
  EXPECT_EQ(Summary(*Get("b-lifecycle0001")), "total=2 pending=1 failed=1 complete=1 success=");
  // The complete callback succeeds; success still waits for member-a.
  ASSERT_TRUE(Ack("cb-complete-b-lifecycle0001"));
  EXPECT_EQ(Summary(*Get("b-lifecycle0001")), "total=2 pending=1 failed=1 complete=2 success=");
  now_ += 2s;
  EnqueueDue();
  auto a = Fetch({"default"});
  ASSERT_TRUE(a && a->jid == "member-a");
  ASSERT_TRUE(Ack("member-a"));
  EXPECT_EQ(Summary(*Get("b-lifecycle0001")), "total=2 pending=0 failed=0 complete=2 success=1")
      << "a failed member that succeeds on retry leaves `failed`";
  EXPECT_EQ(FiredCallbacks(), std::vector<std::string>{"cb-success-b-lifecycle0001"});
  ASSERT_TRUE(Ack("cb-success-b-lifecycle0001"));
  EXPECT_EQ(Summary(*Get("b-lifecycle0001")), "total=2 pending=0 failed=0 complete=2 success=2");
  EXPECT_TRUE(FiredCallbacks().empty());
  BatchCounts counts = Counts();
  EXPECT_EQ(counts.created, 1);
  EXPECT_EQ(counts.committed, 1);
  EXPECT_EQ(counts.succeeded, 1);
  EXPECT_EQ(counts.expired, 0);
  // Kept for a day after its success, then deleted (not counted as expired).
  now_ += std::chrono::microseconds(kBatchRetentionUs);
  EXPECT_FALSE(Get("b-lifecycle0001").has_value());
  EXPECT_EQ(*Await<Result<size_t>>([&](auto cb) { store_->batches().Expire(now_, 10, cb); }), 1u);
  EXPECT_EQ(Counts().expired, 0);
}

TEST_P(BatchStoreTest, UnknownBatchesAreRefusedByName) {
  Status s = Join("member-x", "b-unknown000001");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "No such batch b-unknown000001");
  EXPECT_EQ(Stats().enqueued, 0u) << "the job was not pushed either";
  EXPECT_EQ(Commit("b-unknown000001").message(), "No such batch b-unknown000001");
  EXPECT_EQ(New("b-child00000001", true, false, "b-unknown000001").message(),
            "No such batch b-unknown000001");
  EXPECT_FALSE(Get("b-unknown000001").has_value());
  ASSERT_TRUE(New("b-twice00000001", true, false).ok());
  EXPECT_EQ(New("b-twice00000001", true, false).code(), StatusCode::kAlreadyExists);
}

TEST_P(BatchStoreTest, AnEmptyBatchFiresAtCommitAndSuccessFollowsComplete) {
  ASSERT_TRUE(New("b-empty00000001", true, true).ok());
  ASSERT_TRUE(Commit("b-empty00000001").ok());
  EXPECT_EQ(FiredCallbacks(), std::vector<std::string>{"cb-complete-b-empty00000001"});
  ASSERT_TRUE(Ack("cb-complete-b-empty00000001"));
  EXPECT_EQ(FiredCallbacks(), std::vector<std::string>{"cb-success-b-empty00000001"});
}

TEST_P(BatchStoreTest, AFailedCallbackStaysEnqueuedAndRetries) {
  ASSERT_TRUE(New("b-cbfail0000001", false, true).ok());
  ASSERT_TRUE(Commit("b-cbfail0000001").ok());
  EnqueueDue();
  auto cb = Fetch({"callbacks"});
  ASSERT_TRUE(cb);
  JobRecord retry = *cb;
  retry.state = JobState::kRetry;
  retry.score = ToUnixMicros(now_ + 1s);
  ASSERT_TRUE(Await<Status>([&](auto done) {
                store_->FailReserved(cb->jid, FromUnixMicros(cb->score), retry, true, now_, done);
              }).ok());
  EXPECT_EQ(Get("b-cbfail0000001")->success_st, "1");
  now_ += 2s;
  EXPECT_EQ(FiredCallbacks(), std::vector<std::string>{"cb-success-b-cbfail0000001"})
      << "the retry of the same callback job, not a second one";
  ASSERT_TRUE(Ack("cb-success-b-cbfail0000001"));
  EXPECT_EQ(Get("b-cbfail0000001")->success_st, "2");
}

TEST_P(BatchStoreTest, AChildsCallbacksGateItsParents) {
  ASSERT_TRUE(New("b-parent000001", true, true).ok());
  ASSERT_TRUE(New("b-child0000001", true, true, "b-parent000001").ok());
  EXPECT_EQ(Get("b-child0000001")->parent_bid, "b-parent000001");
  ASSERT_TRUE(Join("child-job", "b-child0000001").ok());
  ASSERT_TRUE(Commit("b-parent000001").ok());
  EXPECT_EQ(Summary(*Get("b-parent000001")), "total=1 pending=1 failed=0 complete= success=");
  ASSERT_TRUE(Commit("b-child0000001").ok());
  auto job = Fetch({"default"});
  ASSERT_TRUE(job);
  ASSERT_TRUE(Ack("child-job"));
  EXPECT_EQ(FiredCallbacks(), std::vector<std::string>{"cb-complete-b-child0000001"})
      << "the parent waits for the child's callback to finish";
  ASSERT_TRUE(Ack("cb-complete-b-child0000001"));
  EXPECT_EQ(FiredCallbacks(),
            (std::vector<std::string>{"cb-complete-b-parent000001", "cb-success-b-child0000001"}));
  ASSERT_TRUE(Ack("cb-complete-b-parent000001"));
  EXPECT_TRUE(FiredCallbacks().empty()) << "the parent's success waits for the child's success";
  ASSERT_TRUE(Ack("cb-success-b-child0000001"));
  EXPECT_EQ(FiredCallbacks(), std::vector<std::string>{"cb-success-b-parent000001"});
}

TEST_P(BatchStoreTest, UncommittedBatchesExpireAfterThirtyMinutes) {
  ASSERT_TRUE(New("b-expire000001", true, false).ok());
  ASSERT_TRUE(New("b-kept00000001", true, false).ok());
  ASSERT_TRUE(Commit("b-kept00000001").ok());
  now_ += 30min - 1us;
  EXPECT_TRUE(Get("b-expire000001").has_value());
  EXPECT_EQ(*Await<Result<size_t>>([&](auto cb) { store_->batches().Expire(now_, 10, cb); }), 0u);
  now_ += 1us;
  EXPECT_FALSE(Get("b-expire000001").has_value());
  EXPECT_EQ(Join("late-job", "b-expire000001").message(), "No such batch b-expire000001");
  EXPECT_EQ(*Await<Result<size_t>>([&](auto cb) { store_->batches().Expire(now_, 10, cb); }), 1u);
  EXPECT_EQ(Counts().expired, 1);
  EXPECT_TRUE(Get("b-kept00000001").has_value()) << "a committed batch does not expire";
}

TEST_P(BatchStoreTest, BatchesAndFiredCallbacksSurviveAReopen) {
  if (!Persistent()) GTEST_SKIP() << "memory: nothing survives";
  ASSERT_TRUE(New("b-durable00001", false, true).ok());
  ASSERT_TRUE(Join("durable-a", "b-durable00001").ok());
  ASSERT_TRUE(Join("durable-b", "b-durable00001").ok());
  ASSERT_TRUE(Commit("b-durable00001").ok());
  ASSERT_TRUE(Fetch({"default"}));
  ASSERT_TRUE(Ack("durable-a"));
  Reopen();
  EXPECT_EQ(Summary(*Get("b-durable00001")), "total=2 pending=1 failed=0 complete= success=");
  ASSERT_TRUE(Fetch({"default"}));
  ASSERT_TRUE(Ack("durable-b"));
  Reopen();
  EXPECT_EQ(Summary(*Get("b-durable00001")), "total=2 pending=0 failed=0 complete= success=1");
  EXPECT_EQ(FiredCallbacks(), std::vector<std::string>{"cb-success-b-durable00001"});
  Reopen();
  ASSERT_TRUE(Ack("cb-success-b-durable00001"));
  EXPECT_EQ(Get("b-durable00001")->success_st, "2");
  EXPECT_TRUE(FiredCallbacks().empty());
  EXPECT_EQ(Counts().succeeded, 1);
}

TEST_P(BatchStoreTest, FlushDeletesBatches) {
  ASSERT_TRUE(New("b-flushed00001", true, false).ok());
  ASSERT_TRUE(Flush().ok());
  EXPECT_FALSE(Get("b-flushed00001").has_value());
  EXPECT_EQ(Counts().created, 0);
}

INSTANTIATE_TEST_SUITE_P(Embedded, BatchStoreTest, kEmbeddedStores, EmbeddedStoreName);
INSTANTIATE_TEST_SUITE_P(Redis, BatchStoreTest, ::testing::Values("redis"));

// --- Job tracking (store/track_record.h) ---

class TrackStoreTest : public StoreTest {
 protected:
  std::optional<TrackRecord> Get(const std::string& jid) {
    auto r = Await<Result<std::optional<TrackRecord>>>(
        [&](auto cb) { store_->tracks().Get(jid, now_, cb); });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::nullopt;
  }
  std::string State(const std::string& jid) {
    auto r = Get(jid);
    return r ? r->state : "<none>";
  }
  Status Set(const std::string& jid, std::optional<int> percent, std::optional<std::string> desc) {
    TrackUpdate u{.jid = jid, .percent = percent, .desc = desc};
    return Await<Status>([&](auto cb) { store_->tracks().Set(u, now_, cb); });
  }
  void PushTracked(const std::string& jid) {
    ASSERT_TRUE(Push(MakeJob(jid)).ok());
    ASSERT_TRUE(Await<Status>([&](auto cb) { store_->tracks().Pushed(jid, now_, cb); }).ok());
  }
  Status FailInto(const JobRecord& reserved, JobState state) {
    JobRecord next = reserved;
    next.state = state;
    next.score = ToUnixMicros(now_ + 1s);
    return Await<Status>([&](auto cb) {
      store_->FailReserved(reserved.jid, FromUnixMicros(reserved.score), next, true, now_, cb);
    });
  }
};

TEST_P(TrackStoreTest, AFollowedJobsStateFollowsPushFetchAckFailAndDeath) {
  PushTracked("tracked-ok");
  EXPECT_EQ(State("tracked-ok"), "enqueued");
  now_ += 1s;
  auto job = Fetch({"default"});
  ASSERT_TRUE(job);
  EXPECT_EQ(State("tracked-ok"), "working");
  EXPECT_EQ(Get("tracked-ok")->updated_us, ToUnixMicros(now_));
  ASSERT_TRUE(Ack("tracked-ok"));
  EXPECT_EQ(State("tracked-ok"), "success");

  PushTracked("tracked-bad");
  job = Fetch({"default"});
  ASSERT_TRUE(job);
  ASSERT_TRUE(FailInto(*job, JobState::kRetry).ok());
  EXPECT_EQ(State("tracked-bad"), "failed");
  ASSERT_TRUE(Await<Status>([&](auto cb) {
                JobRecord back = *job;
                back.state = JobState::kQueued;
                store_->Move(back, now_, cb);
              }).ok());
  job = Fetch({"default"});
  ASSERT_TRUE(job);
  EXPECT_EQ(State("tracked-bad"), "working");
  ASSERT_TRUE(FailInto(*job, JobState::kDead).ok());
  EXPECT_EQ(State("tracked-bad"), "dead");

  ASSERT_TRUE(Push(MakeJob("untracked")).ok());
  ASSERT_TRUE(Fetch({"default"}));
  ASSERT_TRUE(Ack("untracked"));
  EXPECT_EQ(State("untracked"), "<none>") << "jobs without custom.track are not followed";
}

TEST_P(TrackStoreTest, AFollowedJobFetchedFromAThrottledQueueIsWorking) {
  PushTracked("tracked-thr");
  now_ += 1s;
  ThrottledFetch throttled{{QueueThrottle{.queue = "default", .limit = 1}}, "w1"};
  auto job = Await<Result<std::optional<JobRecord>>>(
      [&](auto cb) { store_->throttles().Fetch({"default"}, throttled, now_, cb); });
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_TRUE(job->has_value());
  EXPECT_EQ(State("tracked-thr"), "working");
  EXPECT_EQ(Get("tracked-thr")->updated_us, ToUnixMicros(now_));
}

TEST_P(TrackStoreTest, TrackSetKeepsWhatItIsNotGivenAndLeavesStateUnknownForUntrackedJobs) {
  ASSERT_TRUE(Set("some-job-01", 10, std::nullopt).ok());
  auto r = Get("some-job-01");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->percent, 10);
  EXPECT_FALSE(r->desc.has_value());
  EXPECT_EQ(r->state, "");
  ASSERT_TRUE(Set("some-job-01", std::nullopt, "Calculating").ok());
  r = Get("some-job-01");
  EXPECT_EQ(r->percent, 10);
  EXPECT_EQ(r->desc, "Calculating");
  // Untracked: a FETCH and ACK of it do not make it followed.
  ASSERT_TRUE(Push(MakeJob("some-job-01")).ok());
  ASSERT_TRUE(Fetch({"default"}));
  ASSERT_TRUE(Ack("some-job-01"));
  EXPECT_EQ(State("some-job-01"), "");
}

TEST_P(TrackStoreTest, RecordsLiveThirtyMinutesAfterTheirLastUpdateAndSurviveAReopen) {
  PushTracked("tracked-ttl");
  ASSERT_TRUE(Set("tracked-ttl", 50, "half").ok());
  now_ += 20min;
  ASSERT_TRUE(Set("tracked-ttl", 60, std::nullopt).ok());
  if (Persistent()) Reopen();
  now_ += 30min - 1us;
  auto r = Get("tracked-ttl");
  ASSERT_TRUE(r) << "30 minutes from the last update, not the first";
  EXPECT_EQ(r->state, "enqueued");
  EXPECT_EQ(r->percent, 60);
  EXPECT_EQ(r->desc, "half");
  EXPECT_EQ(*Await<Result<size_t>>([&](auto cb) { store_->tracks().Expire(now_, 10, cb); }), 0u);
  now_ += 1us;
  EXPECT_FALSE(Get("tracked-ttl").has_value());
  EXPECT_EQ(*Await<Result<size_t>>([&](auto cb) { store_->tracks().Expire(now_, 10, cb); }), 1u);
  ASSERT_TRUE(Fetch({"default"}));
  EXPECT_FALSE(Get("tracked-ttl").has_value()) << "an expired record is not followed again";
}

TEST_P(TrackStoreTest, FlushDeletesRecords) {
  ASSERT_TRUE(Set("flushed-job-1", 1, std::nullopt).ok());
  ASSERT_TRUE(Flush().ok());
  EXPECT_FALSE(Get("flushed-job-1").has_value());
}

INSTANTIATE_TEST_SUITE_P(Embedded, TrackStoreTest, kEmbeddedStores, EmbeddedStoreName);
INSTANTIATE_TEST_SUITE_P(Redis, TrackStoreTest, ::testing::Values("redis"));

// --- Job lookup by jid and reservation holders (Store::FindJob, HolderStore::Set and List) ---

class LookupStoreTest : public StoreTest {
 protected:
  std::optional<JobRecord> Find(const std::string& jid) {
    std::optional<JobRecord> job;
    bool done = false;
    store_->FindJob(jid, [&](Result<std::optional<JobRecord>> r) {
      done = true;
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      job = *r;
    });
    loop_.RunUntil([&] { return done; });
    return job;
  }
  Status SetHolder(const std::string& jid, const std::string& wid) {
    std::optional<Status> result;
    store_->holders().Set(jid, wid, [&](Status s) { result = s; });
    loop_.RunUntil([&] { return result.has_value(); });
    return *result;
  }
  // "jid=wid" per held job, sorted.
  std::vector<std::string> Held() {
    std::vector<std::string> out;
    bool done = false;
    store_->holders().List(100, [&](Result<std::vector<HolderStore::HeldJob>> r) {
      done = true;
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      for (const auto& h : *r) {
        EXPECT_EQ(h.job.state, JobState::kWorking);
        out.push_back(h.job.jid + "=" + h.wid);
      }
    });
    loop_.RunUntil([&] { return done; });
    std::sort(out.begin(), out.end());
    return out;
  }
  Status MoveTo(JobRecord job, JobState state, int64_t score) {
    job.state = state;
    job.score = score;
    std::optional<Status> result;
    store_->Move(job, now_, [&](Status s) { result = s; });
    loop_.RunUntil([&] { return result.has_value(); });
    return *result;
  }
};

TEST_P(LookupStoreTest, FindJobAnswersAJobWhereverItIs) {
  int64_t at = ToUnixMicros(now_ + 3600s);
  ASSERT_TRUE(Push(MakeJob("find-queued-1", "q1")).ok());
  ASSERT_TRUE(Push(MakeJob("find-sched-01", "q1", JobState::kScheduled, at)).ok());
  ASSERT_TRUE(Push(MakeJob("find-working1", "q2")).ok());
  ASSERT_TRUE(Push(MakeJob("find-dead-001", "q3")).ok());
  auto working = Fetch({"q2"});
  ASSERT_TRUE(working);
  auto dead = Find("find-dead-001");
  ASSERT_TRUE(dead);
  ASSERT_TRUE(MoveTo(*dead, JobState::kDead, at + 1).ok());

  auto queued = Find("find-queued-1");
  ASSERT_TRUE(queued);
  EXPECT_EQ(queued->state, JobState::kQueued);
  EXPECT_EQ(queued->queue, "q1");
  EXPECT_NE(queued->payload.find("find-queued-1"), std::string::npos);
  auto sched = Find("find-sched-01");
  ASSERT_TRUE(sched);
  EXPECT_EQ(sched->state, JobState::kScheduled);
  EXPECT_EQ(sched->score, at);
  auto held = Find("find-working1");
  ASSERT_TRUE(held);
  EXPECT_EQ(held->state, JobState::kWorking);
  EXPECT_EQ(held->score, working->score);
  dead = Find("find-dead-001");
  ASSERT_TRUE(dead);
  EXPECT_EQ(dead->state, JobState::kDead);
  EXPECT_EQ(dead->score, at + 1);
  EXPECT_FALSE(Find("find-unknown1"));
}

TEST_P(LookupStoreTest, HolderLastsAsLongAsTheReservation) {
  for (const char* jid : {"held-job-0001", "held-job-0002", "held-job-0003", "held-job-0004"}) {
    ASSERT_TRUE(Push(MakeJob(jid)).ok());
  }
  std::vector<JobRecord> fetched;
  for (int i = 0; i < 3; ++i) {
    auto job = Fetch({"default"});
    ASSERT_TRUE(job);
    fetched.push_back(*job);
  }
  ASSERT_TRUE(SetHolder("held-job-0001", "wid-a").ok());
  ASSERT_TRUE(SetHolder("held-job-0002", "wid-b").ok());
  ASSERT_TRUE(SetHolder("held-job-0003", "wid-a").ok());
  // Not reserved: nothing recorded.
  ASSERT_TRUE(SetHolder("held-job-0004", "wid-c").ok());
  ASSERT_TRUE(SetHolder("held-unknown1", "wid-c").ok());
  EXPECT_EQ(Held(), (std::vector<std::string>{"held-job-0001=wid-a", "held-job-0002=wid-b",
                                              "held-job-0003=wid-a"}));
  if (Persistent()) {
    Reopen();
    EXPECT_EQ(Held(), (std::vector<std::string>{"held-job-0001=wid-a", "held-job-0002=wid-b",
                                                "held-job-0003=wid-a"}));
  }
  ASSERT_TRUE(Ack("held-job-0001"));
  ASSERT_TRUE(MoveTo(fetched[1], JobState::kRetry, ToUnixMicros(now_ + 60s)).ok());
  EXPECT_EQ(Held(), (std::vector<std::string>{"held-job-0003=wid-a"}));
  // The job fetched again without a holder (the delivery engine's FETCH) shows none.
  ASSERT_TRUE(MoveTo(fetched[1], JobState::kQueued, 0).ok());
  auto again = Fetch({"default"});
  ASSERT_TRUE(again);
  EXPECT_EQ(Held(), (std::vector<std::string>{"held-job-0003=wid-a"}));
  std::optional<Status> removed;
  store_->Remove("held-job-0003", [&](Status s) { removed = s; });
  loop_.RunUntil([&] { return removed.has_value(); });
  EXPECT_TRUE(Held().empty());
  ASSERT_TRUE(SetHolder(again->jid, "wid-d").ok());
  EXPECT_EQ(Held(), (std::vector<std::string>{again->jid + "=wid-d"}));
  ASSERT_TRUE(Flush().ok());
  EXPECT_TRUE(Held().empty());
  if (Persistent()) {
    Reopen();
    EXPECT_TRUE(Held().empty());
  }
}

TEST_P(LookupStoreTest, AWorkersFetchRecordsItsHolderInTheSameStep) {
  ASSERT_TRUE(Push(MakeJob("fetch-for-001")).ok());
  ASSERT_TRUE(Push(MakeJob("fetch-for-002")).ok());
  auto fetch_for = [&](const std::string& wid) {
    std::optional<JobRecord> job;
    bool done = false;
    store_->FetchFor({"empty", "default"}, wid, now_, [&](Result<std::optional<JobRecord>> r) {
      done = true;
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      job = *r;
    });
    loop_.RunUntil([&] { return done; });
    return job;
  };
  auto first = fetch_for("wid-f1");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->jid, "fetch-for-001");
  EXPECT_EQ(first->state, JobState::kWorking);
  auto second = fetch_for("wid-f2");
  ASSERT_TRUE(second);
  EXPECT_FALSE(fetch_for("wid-f3")) << "an empty queue";
  EXPECT_EQ(Held(), (std::vector<std::string>{"fetch-for-001=wid-f1", "fetch-for-002=wid-f2"}));
  if (Persistent()) {
    Reopen();
    EXPECT_EQ(Held(), (std::vector<std::string>{"fetch-for-001=wid-f1", "fetch-for-002=wid-f2"}));
  }
  ASSERT_TRUE(Ack("fetch-for-001"));
  EXPECT_EQ(Held(), (std::vector<std::string>{"fetch-for-002=wid-f2"}));
}

TEST_P(LookupStoreTest, AThrottledFetchRecordsItsHolderInTheSameStep) {
  ASSERT_TRUE(Push(MakeJob("throttled-held1", "thr")).ok());
  ASSERT_TRUE(Push(MakeJob("throttled-held2", "thr")).ok());
  auto fetch_throttled = [&](const std::string& wid) {
    std::optional<JobRecord> job;
    bool done = false;
    ThrottledFetch throttled{{QueueThrottle{.queue = "thr", .limit = 5}}, wid};
    store_->throttles().Fetch({"thr"}, throttled, now_, [&](Result<std::optional<JobRecord>> r) {
      done = true;
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      job = *r;
    });
    loop_.RunUntil([&] { return done; });
    return job;
  };
  ASSERT_TRUE(fetch_throttled("wid-t1"));
  ASSERT_TRUE(fetch_throttled(""));  // no worker: no holder
  EXPECT_EQ(Held(), (std::vector<std::string>{"throttled-held1=wid-t1"}));
}

// Several nodes on one Redis: a holder recorded through one node is seen through the other (a
// dashboard on node A shows the jobs of workers connected to node B).
TEST_P(LookupStoreTest, EveryNodeOfASharedStoreSeesTheHolders) {
  if (!Redis()) GTEST_SKIP() << "one process owns an embedded store";
  std::unique_ptr<Store> node_b = OpenOtherNode("lookup-node-b");
  ASSERT_TRUE(node_b);
  ASSERT_TRUE(Push(MakeJob("shared-held-01")).ok());
  std::optional<JobRecord> got;
  bool fetched = false;
  node_b->Fetch({"default"}, now_, [&](Result<std::optional<JobRecord>> r) {
    fetched = true;
    ASSERT_TRUE(r.ok());
    got = *r;
  });
  loop_.RunUntil([&] { return fetched; });
  ASSERT_TRUE(got);
  std::optional<Status> set;
  node_b->holders().Set(got->jid, "wid-on-b", [&](Status s) { set = s; });
  loop_.RunUntil([&] { return set.has_value(); });
  ASSERT_TRUE(set->ok());
  EXPECT_EQ(Held(), (std::vector<std::string>{"shared-held-01=wid-on-b"}));
  auto found = Find("shared-held-01");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->state, JobState::kWorking);
  node_b->Close();
}

// Quiet/terminate sent through one node reach the other nodes' handlers (the engine applies
// them to its workers), not the sender's own.
TEST_P(LookupStoreTest, AWorkerSignalReachesTheOtherNodes) {
  if (!Redis()) GTEST_SKIP() << "one process owns an embedded store: there is no other node";
  std::unique_ptr<Store> node_b = OpenOtherNode("signal-node-b");
  ASSERT_TRUE(node_b);
  std::vector<std::string> heard_a, heard_b;  // "state wid"
  store_->cluster().SetWorkerSignalHandler([&](const std::string& wid, const std::string& state) {
    heard_a.push_back(state + " " + wid);
  });
  node_b->cluster().SetWorkerSignalHandler([&](const std::string& wid, const std::string& state) {
    heard_b.push_back(state + " " + wid);
  });
  store_->cluster().PublishWorkerSignal("wid with space", "quiet");
  store_->cluster().PublishWorkerSignal("", "terminate");
  loop_.RunUntil([&] { return heard_b.size() == 2; });
  EXPECT_EQ(heard_b, (std::vector<std::string>{"quiet wid with space", "terminate "}));
  node_b->cluster().PublishWorkerSignal("wid-on-a", "quiet");
  loop_.RunUntil([&] { return heard_a.size() == 1; });
  EXPECT_EQ(heard_a, (std::vector<std::string>{"quiet wid-on-a"})) << "only the other node's";
  // Published after B's own signal reached Redis, so B's subscription gets it after B's own.
  store_->cluster().PublishWorkerSignal("marker", "quiet");
  loop_.RunUntil([&] { return heard_b.size() >= 3; });
  EXPECT_EQ(heard_b,
            (std::vector<std::string>{"quiet wid with space", "terminate ", "quiet marker"}))
      << "a node does not hear its own signals";
  store_->cluster().SetWorkerSignalHandler(nullptr);
  node_b->Close();
}

// Each node's worker roster goes to the store with its heartbeat (at once when its source is
// set); the other nodes list it, not their own, and it is gone once its node stops. A store one
// process owns keeps none.
TEST_P(LookupStoreTest, TheOtherNodesRostersAreListedUntilTheyStop) {
  auto others = [&](Store& s) {
    std::optional<Result<std::vector<ClusterLink::NodeRoster>>> got;
    s.cluster().ListOtherRosters(
        [&](Result<std::vector<ClusterLink::NodeRoster>> r) { got.emplace(std::move(r)); });
    loop_.RunUntil([&] { return got.has_value(); });
    EXPECT_TRUE(got->ok()) << got->status().ToString();
    std::vector<std::string> out;  // "node=roster"
    if (got->ok()) {
      for (const auto& r : **got) out.push_back(r.node + "=" + r.roster);
    }
    return out;
  };
  std::string roster_a = "[]";
  store_->cluster().SetRosterSource([&roster_a] { return roster_a; });
  if (!Redis()) {
    EXPECT_TRUE(others(*store_).empty()) << "there is no other node";
    EXPECT_EQ(store_->cluster().node_id(), "");
    store_->cluster().SetRosterSource(nullptr);
    return;
  }
  std::unique_ptr<Store> node_b = OpenOtherNode("roster-node-b");
  ASSERT_TRUE(node_b);
  EXPECT_EQ(node_b->cluster().node_id(), "roster-node-b");
  node_b->cluster().SetRosterSource([] { return std::string(R"([{"wid":"w-on-b"}])"); });
  loop_.RunUntil([&] { return !others(*store_).empty(); });
  EXPECT_EQ(others(*store_), std::vector<std::string>{R"(roster-node-b=[{"wid":"w-on-b"}])"});
  const std::string a = store_->cluster().node_id() + "=[]";
  EXPECT_EQ(others(*node_b), std::vector<std::string>{a}) << "each lists the others' only";
  // A's next roster reaches B with A's next heartbeat (here: setting the source again).
  roster_a = R"([{"wid":"w-on-a"}])";
  store_->cluster().SetRosterSource([&roster_a] { return roster_a; });
  loop_.RunUntil([&] { return others(*node_b) != std::vector<std::string>{a}; });
  EXPECT_EQ(others(*node_b),
            std::vector<std::string>{store_->cluster().node_id() + "=" + R"([{"wid":"w-on-a"}])"});
  node_b->Close();  // a graceful stop deletes its roster
  EXPECT_TRUE(others(*store_).empty());
  store_->cluster().SetRosterSource(nullptr);
}

INSTANTIATE_TEST_SUITE_P(Embedded, LookupStoreTest, kEmbeddedStores, EmbeddedStoreName);
INSTANTIATE_TEST_SUITE_P(Redis, LookupStoreTest, ::testing::Values("redis"));

// --- Taken marks (taken_marks.h) ---

class TakenMarksStoreTest : public StoreTest {
 protected:
  std::vector<Status> PushMarked(Store& store,
                                 std::vector<std::pair<std::string, std::string>> jobs,
                                 TimePoint until) {
    std::vector<MarkedJob> marked;
    for (auto& [jid, mark] : jobs) marked.push_back(MarkedJob{MakeJob(jid), mark});
    std::optional<std::vector<Status>> out;
    store.taken_marks().PushMarked(std::move(marked), until, now_,
                                   [&](std::vector<Status> r) { out = std::move(r); });
    loop_.RunUntil([&] { return out.has_value(); });
    return *out;
  }
  std::vector<Status> PushMarked(std::vector<std::pair<std::string, std::string>> jobs) {
    return PushMarked(*store_, std::move(jobs), now_ + std::chrono::hours(24));
  }
  void Forget(std::vector<std::string> marks) {
    std::optional<Status> done;
    store_->taken_marks().Forget(std::move(marks), [&](Status s) { done = s; });
    loop_.RunUntil([&] { return done.has_value(); });
    ASSERT_TRUE(done->ok()) << done->ToString();
  }
  size_t Expire(TimePoint now, size_t limit = 100) {
    std::optional<Result<size_t>> n;
    store_->taken_marks().Expire(now, limit, [&](Result<size_t> r) { n = std::move(r); });
    loop_.RunUntil([&] { return n.has_value(); });
    EXPECT_TRUE(n->ok());
    return n->ok() ? **n : 0;
  }
  size_t Count() {
    std::optional<Result<size_t>> n;
    store_->taken_marks().Count([&](Result<size_t> r) { n = std::move(r); });
    loop_.RunUntil([&] { return n.has_value(); });
    EXPECT_TRUE(n->ok());
    return n->ok() ? **n : 0;
  }
  static bool Exists(const Status& s) { return s.code() == StatusCode::kAlreadyExists; }
};

TEST_P(TakenMarksStoreTest, AMarkRefusesARepeatEvenOnceTheJobIsAcknowledged) {
  auto r = PushMarked({{"taken-job-01", "sk-01"}, {"taken-job-02", "sk-02"}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].ok() && r[1].ok()) << r[0].ToString() << " " << r[1].ToString();
  EXPECT_EQ(Stats().queues["default"].size, 2u) << "the jobs are queued as Push queues them";
  EXPECT_EQ(Count(), 2u);
  // Taken again while the job is there: its jid and its mark are both held.
  EXPECT_TRUE(Exists(PushMarked({{"taken-job-01", "sk-01"}})[0]));
  // Run and acknowledged: the job is gone, its mark is not.
  ASSERT_EQ(Fetch({"default"})->jid, "taken-job-01");
  ASSERT_TRUE(Ack("taken-job-01"));
  EXPECT_TRUE(Exists(PushMarked({{"taken-job-01", "sk-01"}})[0]));
  EXPECT_EQ(Stats().queues["default"].size, 1u) << "no second copy";
  // Forgotten: the same mark takes a job again.
  Forget({"sk-01", "sk-unknown"});
  EXPECT_EQ(Count(), 1u);
  EXPECT_TRUE(PushMarked({{"taken-job-01", "sk-01"}})[0].ok());
}

TEST_P(TakenMarksStoreTest, WithinOneCallASecondJidOrMarkIsARepeat) {
  auto r = PushMarked({{"taken-job-11", "sk-11"},
                       {"taken-job-11", "sk-12"},
                       {"taken-job-13", "sk-11"},
                       {"taken-job-14", "sk-14"}});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_TRUE(r[0].ok());
  EXPECT_TRUE(Exists(r[1])) << "the jid of an earlier job of the call";
  EXPECT_TRUE(Exists(r[2])) << "the mark of an earlier job of the call";
  EXPECT_TRUE(r[3].ok());
  EXPECT_EQ(Stats().queues["default"].size, 2u);
  EXPECT_EQ(Count(), 2u) << "no mark for a refused job";
  // A plain PUSH of a jid held: refused as usual; the marks do not change Push.
  EXPECT_TRUE(Exists(Push(MakeJob("taken-job-11"))));
}

TEST_P(TakenMarksStoreTest, MarksExpireAtTheirUntil) {
  TimePoint until = now_ + std::chrono::seconds(10);
  ASSERT_TRUE(PushMarked(*store_, {{"taken-job-21", "sk-21"}}, until)[0].ok());
  ASSERT_EQ(Fetch({"default"})->jid, "taken-job-21");
  ASSERT_TRUE(Ack("taken-job-21"));
  EXPECT_EQ(Expire(now_), 0u);
  EXPECT_EQ(Expire(until - std::chrono::microseconds(1)), 0u);
  // Past its until a mark no longer counts, deleted or not.
  now_ = until;
  EXPECT_TRUE(
      PushMarked(*store_, {{"taken-job-21", "sk-21"}}, until + std::chrono::seconds(10))[0].ok());
  EXPECT_EQ(Count(), 1u) << "replaced";
  EXPECT_EQ(Expire(until + std::chrono::seconds(20), 100), 1u);
  EXPECT_EQ(Count(), 0u);
}

TEST_P(TakenMarksStoreTest, FlushDeletesTheMarks) {
  ASSERT_TRUE(PushMarked({{"taken-job-31", "sk-31"}})[0].ok());
  std::optional<Status> flushed;
  store_->Flush([&](Status s) { flushed = s; });
  loop_.RunUntil([&] { return flushed.has_value(); });
  EXPECT_EQ(Count(), 0u);
  EXPECT_TRUE(PushMarked({{"taken-job-31", "sk-31"}})[0].ok());
}

TEST_P(TakenMarksStoreTest, MarksSurviveAReopenAndAreSharedByNodes) {
  ASSERT_TRUE(PushMarked({{"taken-job-41", "sk-41"}})[0].ok());
  ASSERT_EQ(Fetch({"default"})->jid, "taken-job-41");
  ASSERT_TRUE(Ack("taken-job-41"));
  if (Redis()) {
    std::unique_ptr<Store> other = OpenOtherNode();
    ASSERT_TRUE(other);
    EXPECT_TRUE(
        Exists(PushMarked(*other, {{"taken-job-41", "sk-41"}}, now_ + std::chrono::hours(1))[0]))
        << "another node sees the mark";
    other->Close();
  }
  if (!Persistent()) return;
  Reopen();
  EXPECT_EQ(Count(), 1u);
  EXPECT_TRUE(Exists(PushMarked({{"taken-job-41", "sk-41"}})[0])) << "the mark survived";
  EXPECT_EQ(Stats().queues["default"].size, 0u);
}

INSTANTIATE_TEST_SUITE_P(Embedded, TakenMarksStoreTest, kEmbeddedStores, EmbeddedStoreName);
INSTANTIATE_TEST_SUITE_P(Redis, TakenMarksStoreTest, ::testing::Values("redis"));

}  // namespace
}  // namespace bulkhead
