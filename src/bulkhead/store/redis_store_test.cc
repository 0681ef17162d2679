// RedisStore beyond the contract suite (store_test.cc runs that on Redis too): what a second store
// on the same namespace sees, the layout check, wake-ups between nodes, Open's errors, connection
// loss and maxmemory. Real redis-server processes on free loopback ports.
#include "bulkhead/store/redis_store.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/shared_redis.h"
#include "bulkhead/store/testing/test_loop.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

JobRecord MakeJob(const std::string& jid, const std::string& queue = "default",
                  JobState state = JobState::kQueued, int64_t score = 0) {
  JobRecord j;
  j.jid = jid;
  j.queue = queue;
  j.jobtype = "noop";
  j.payload = nlohmann::json{{"jid", jid}, {"jobtype", "noop"}, {"queue", queue}}.dump();
  j.state = state;
  j.score = score;
  j.reserve_for_s = 60;
  return j;
}

class RedisStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    server_ = SharedRedis(&error);
    ASSERT_NE(server_, nullptr) << error;
    namespace_ = UniqueRedisNamespace("redis");
  }
  Result<std::unique_ptr<Store>> Open(const std::string& url, const std::string& ns,
                                      const std::string& node_id = "") {
    StoreOptions options;
    options.io_context = &loop_.io();
    options.redis_namespace = ns;
    options.node_id = node_id;
    return OpenStoreFromUrl(url, loop_.poster(), options);
  }
  std::unique_ptr<Store> OpenOk(const std::string& node_id = "") {
    auto s = Open(server_->url(), namespace_, node_id);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  template <typename R>
  R Await(const std::function<void(std::function<void(R)>)>& call) {
    std::optional<R> out;
    call([&](R r) { out.emplace(std::move(r)); });
    loop_.RunUntil([&] { return out.has_value(); });
    return std::move(*out);
  }
  Status Push(Store& store, JobRecord job) {
    return Await<Status>([&](auto cb) { store.Push(std::move(job), cb); });
  }
  Result<std::optional<JobRecord>> Fetch(Store& store, std::vector<std::string> queues) {
    using R = Result<std::optional<JobRecord>>;
    return Await<R>([&](auto cb) { store.Fetch(queues, now_, cb); });
  }
  Result<std::optional<JobRecord>> Ack(Store& store, const std::string& jid) {
    using R = Result<std::optional<JobRecord>>;
    return Await<R>([&](auto cb) { store.Ack(jid, now_, cb); });
  }
  Result<StoreStats> Stats(Store& store) {
    return Await<Result<StoreStats>>([&](auto cb) { store.Stats(cb); });
  }

  TestLoop loop_;
  RedisServerProcess* server_ = nullptr;
  std::string namespace_;
  TimePoint now_ = FromUnixMicros(1'700'000'000'000'000);
};

TEST_F(RedisStoreTest, ASecondStoreOnTheNamespaceSeesEverything) {
  auto a = OpenOk("node-a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->Name(), "redis");
  EXPECT_FALSE(a->degraded());
  int64_t now = ToUnixMicros(now_);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Push(*a, MakeJob("job-q-0000" + std::to_string(i))).ok());
  ASSERT_TRUE(Push(*a, MakeJob("job-sched-01", "default", JobState::kScheduled, now + 1000)).ok());
  ASSERT_EQ((*Fetch(*a, {"default"}))->jid, "job-q-00000");
  ASSERT_TRUE(Ack(*a, "job-q-00000")->has_value());
  ASSERT_EQ((*Fetch(*a, {"default"}))->jid, "job-q-00001");
  ASSERT_TRUE(Await<Status>([&](auto cb) { a->SetPaused({"paused-q"}, true, cb); }).ok());
  a->CountOutcome(7, 2, now_);
  ASSERT_TRUE(Push(*a, MakeJob("job-last-001", "other")).ok());
  std::string pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
  ASSERT_TRUE(
      Await<Status>([&](auto cb) { a->PutSigningKey("https://a.example/k", pem, cb); }).ok());
  HostStateRecord host;
  host.host = "a.example:8443";
  host.breaker_open_until_us = now + 30'000'000;
  host.breaker_series_openings = 2;
  host.breaker_openings = 7;
  host.failing_since_us = now;
  host.unavailable = true;
  host.retry_after_until_us = now + 60'000'000;
  ASSERT_TRUE(Await<Status>([&](auto cb) { a->PutHostState(host, cb); }).ok());

  auto b = OpenOk("node-b");
  ASSERT_TRUE(b);
  auto st = Stats(*b);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->queues["default"].size, 3u);
  EXPECT_EQ(st->queues["other"].size, 1u);
  EXPECT_EQ(st->working, 1u);
  EXPECT_EQ(st->scheduled, 1u);
  EXPECT_TRUE(st->queues["paused-q"].paused);
  EXPECT_EQ(st->processed, 8) << "the ACK's 1 and CountOutcome's 7";
  EXPECT_EQ(st->failures, 2);
  // FIFO order holds across nodes, and A's reservation can be acknowledged through B.
  EXPECT_EQ((*Fetch(*b, {"default"}))->jid, "job-q-00002");
  EXPECT_TRUE(Ack(*b, "job-q-00001")->has_value());
  using Keys = Result<std::vector<Store::StoredSigningKey>>;
  auto keys = Await<Keys>([&](auto cb) { b->ListSigningKeys(cb); });
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].key_id, "https://a.example/k");
  EXPECT_EQ((*keys)[0].pem, pem);
  using Hosts = Result<std::vector<HostStateRecord>>;
  auto hosts = Await<Hosts>([&](auto cb) { b->ListHostStates(cb); });
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(*hosts, std::vector<HostStateRecord>{host});
}

TEST_F(RedisStoreTest, ANamespaceOfAnotherLayoutVersionIsRefused) {
  auto set = BlockingRedisCommand(server_->connect_options(),
                                  {"HSET", "{" + namespace_ + "}:meta", "layout", "2"});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto s = Open(server_->url(), namespace_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("layout version 2"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("layout version 1"), std::string::npos)
      << s.status().message();
}

TEST_F(RedisStoreTest, ANewNamespaceGetsTheLayoutVersion) {
  auto a = OpenOk();
  ASSERT_TRUE(a);
  auto layout = BlockingRedisCommand(server_->connect_options(),
                                     {"HGET", "{" + namespace_ + "}:meta", "layout"});
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->str(), "1");
}

TEST_F(RedisStoreTest, APushThroughOneNodeWakesTheOthersNotItself) {
  auto a = OpenOk("node-a");
  auto b = OpenOk("node-b");
  ASSERT_TRUE(a && b);
  std::vector<std::string> woken_a, woken_b;
  a->SetWakeHandler(
      [&](const std::string& q, size_t n) { woken_a.push_back(q + " " + std::to_string(n)); });
  b->SetWakeHandler(
      [&](const std::string& q, size_t n) { woken_b.push_back(q + " " + std::to_string(n)); });
  ASSERT_TRUE(Push(*a, MakeJob("job-wake-001", "mail queue")).ok());
  loop_.RunUntil([&] { return !woken_b.empty(); });
  EXPECT_EQ(woken_b, std::vector<std::string>{"mail queue 1"});
  // A's subscription gets messages in publishing order: once B's push reached A, A's own would
  // have too.
  ASSERT_TRUE(Push(*b, MakeJob("job-wake-002", "other")).ok());
  loop_.RunUntil([&] { return !woken_a.empty(); });
  EXPECT_EQ(woken_a, std::vector<std::string>{"other 1"});
  EXPECT_EQ(woken_b, std::vector<std::string>{"mail queue 1"});
}

TEST_F(RedisStoreTest, OpenNamesAnUnreachableServerAndAWrongPasswordWithoutIt) {
  auto locked = RedisServerProcess::Start({.password = "right-pass-1"});
  ASSERT_TRUE(locked.ok()) << locked.status().ToString();
  std::string where = "127.0.0.1:" + std::to_string((*locked)->port());
  auto wrong = Open("redis://:wrong-pass-7f3@" + where, namespace_);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kPermissionDenied) << wrong.status().ToString();
  EXPECT_EQ(wrong.status().message().find("wrong-pass-7f3"), std::string::npos)
      << wrong.status().message();
  EXPECT_NE(wrong.status().message().find(where), std::string::npos) << wrong.status().message();
  (*locked)->Kill();
  auto gone = Open("redis://:wrong-pass-7f3@" + where, namespace_);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kUnavailable) << gone.status().ToString();
  EXPECT_NE(gone.status().message().find(where), std::string::npos) << gone.status().message();
  EXPECT_EQ(gone.status().message().find("wrong-pass-7f3"), std::string::npos);
}

TEST_F(RedisStoreTest, ALostServerAnswersUnavailableAndTheStoreResumesByItself) {
  RedisServerOptions persistent{.persistence = true,
                                .extra_config = {"appendonly yes", "appendfsync always"}};
  auto first = RedisServerProcess::Start(persistent);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  uint16_t port = (*first)->port();
  std::string url = (*first)->url();
  auto a = Open(url, namespace_, "node-a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Store& store = **a;
  std::vector<std::string> woken;
  store.SetWakeHandler([&](const std::string& q, size_t) { woken.push_back(q); });
  ASSERT_TRUE(Push(store, MakeJob("job-kept-001")).ok());

  (*first)->Kill();
  Status lost = Push(store, MakeJob("job-lost-001"));
  EXPECT_EQ(lost.code(), StatusCode::kUnavailable) << lost.ToString();
  EXPECT_EQ(lost.message().rfind("store unavailable: ", 0), 0u) << lost.message();
  auto fetched = Fetch(store, {"default"});
  EXPECT_EQ(fetched.status().code(), StatusCode::kUnavailable);

  // The same port and data directory: the store reconnects by itself (backoff up to 5 s).
  persistent.port = port;
  persistent.extra_config.push_back("dir \"" + (*first)->dir() + "\"");
  auto second = RedisServerProcess::Start(persistent);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto deadline = std::chrono::steady_clock::now() + 15s;
  Result<StoreStats> st = Status::Unavailable("not asked yet");
  while (!st.ok() && std::chrono::steady_clock::now() < deadline) st = Stats(store);
  ASSERT_TRUE(st.ok()) << "the store did not resume: " << st.status().ToString();
  EXPECT_EQ(st->queues["default"].size, 1u) << "the job answered +OK before the loss is kept";
  EXPECT_EQ((*Fetch(store, {"default"}))->jid, "job-kept-001");
  ASSERT_TRUE(Push(store, MakeJob("job-after-01")).ok());
  // The wake subscription is back too: another node's push reaches this one.
  auto b = Open(url, namespace_, "node-b");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_TRUE(Push(**b, MakeJob("job-from-b-1", "b-queue")).ok());
  loop_.RunUntil([&] { return !woken.empty(); }, 15s);
  EXPECT_EQ(woken, std::vector<std::string>{"b-queue"});
}

TEST_F(RedisStoreTest, APushBeyondMaxmemoryAnswersResourceExhaustedWithRedisReason) {
  auto server = RedisServerProcess::Start({.extra_config = {"maxmemory-policy noeviction"}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto a = Open((*server)->url(), namespace_);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  // The limit sits 1 MiB above what the server uses now (an idle Redis already uses about
  // 1 MiB, so a fixed `maxmemory 1mb` would refuse the store's own start).
  auto info = BlockingRedisCommand((*server)->connect_options(), {"INFO", "memory"});
  ASSERT_TRUE(info.ok());
  size_t at = info->str().find("used_memory:");
  ASSERT_NE(at, std::string::npos);
  int64_t used = std::stoll(info->str().substr(at + 12));
  auto set = BlockingRedisCommand((*server)->connect_options(),
                                  {"CONFIG", "SET", "maxmemory", std::to_string(used + (1 << 20))});
  ASSERT_TRUE(set.ok() && !set->is_error()) << (set.ok() ? set->ToString() : "");
  size_t answered_ok = 0;
  Status refused;
  for (int i = 0; i < 64 && refused.ok(); ++i) {
    JobRecord job = MakeJob("job-big-" + std::to_string(i));
    job.payload = nlohmann::json{{"jid", job.jid}, {"args", {std::string(256 << 10, 'x')}}}.dump();
    refused = Push(**a, std::move(job));
    if (refused.ok()) ++answered_ok;
  }
  ASSERT_FALSE(refused.ok()) << "maxmemory was never reached";
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted) << refused.ToString();
  EXPECT_NE(refused.message().find("maxmemory"), std::string::npos) << refused.message();
  auto st = Stats(**a);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->enqueued, answered_ok) << "every +OK'd job is there, the refused one is not";
  EXPECT_GE(answered_ok, 1u);
}

TEST_F(RedisStoreTest, OpensThroughSentinel) {
  auto primary = RedisServerProcess::Start({.password = "sentinel-pass-1"});
  ASSERT_TRUE(primary.ok()) << primary.status().ToString();
  auto sentinel = RedisServerProcess::StartSentinel(
      {.primary = (*primary)->endpoint(), .primary_password = "sentinel-pass-1"});
  ASSERT_TRUE(sentinel.ok()) << sentinel.status().ToString();
  std::string url =
      "redis-sentinel://:sentinel-pass-1@127.0.0.1:" + std::to_string((*sentinel)->port()) +
      "/mymaster";
  auto a = Open(url, namespace_);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(Push(**a, MakeJob("job-sentinel-1")).ok());
  auto job = Fetch(**a, {"default"});
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_EQ((*job)->jid, "job-sentinel-1");
}

TEST_F(RedisStoreTest, ReplicatedDurabilityAnswersOnlyOnceAReplicaHasTheWrite) {
  auto primary = RedisServerProcess::Start();
  ASSERT_TRUE(primary.ok()) << primary.status().ToString();
  StoreOptions options;
  options.io_context = &loop_.io();
  options.redis_namespace = namespace_;
  options.durability = "replicated";
  options.redis_wait_timeout = 100ms;
  auto a = OpenStoreFromUrl((*primary)->url(), loop_.poster(), options);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Status alone = Push(**a, MakeJob("job-repl-001"));
  EXPECT_EQ(alone.code(), StatusCode::kUnavailable) << alone.ToString();
  EXPECT_EQ(alone.message(), "no replica acknowledged the write within 100 ms");

  auto replica = RedisServerProcess::Start({.replica_of = (*primary)->endpoint()});
  ASSERT_TRUE(replica.ok()) << replica.status().ToString();
  Status synced = WaitFor(
      [&] {
        auto info = BlockingRedisCommand((*replica)->connect_options(), {"INFO", "replication"});
        return info.ok() && info->str().find("master_link_status:up") != std::string::npos;
      },
      10s, "the replica's first sync");
  ASSERT_TRUE(synced.ok()) << synced.ToString();
  // A bound that a loaded test machine meets (the replica answers WAIT's GETACK at once).
  options.redis_wait_timeout = 10s;
  auto b = OpenStoreFromUrl((*primary)->url(), loop_.poster(), options);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  Status pushed = Push(**b, MakeJob("job-repl-002", "replicated"));
  EXPECT_TRUE(pushed.ok()) << pushed.ToString();
  auto job = Fetch(**b, {"replicated"});
  ASSERT_TRUE(job.ok() && job->has_value());
  auto acked = Ack(**b, (*job)->jid);
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  EXPECT_TRUE(acked->has_value());
}

}  // namespace
}  // namespace bulkhead
