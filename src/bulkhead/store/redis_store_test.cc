// RedisStore beyond the contract suite (store_test.cc runs that on Redis too): what a second store
// on the same namespace sees, the layout check, wake-ups between nodes, Open's errors, connection
// loss, maxmemory and node liveness. Real redis-server processes on free loopback ports.
#include "bulkhead/store/redis_store.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/make_job.h"
#include "bulkhead/store/testing/shared_redis.h"
#include "bulkhead/store/testing/test_loop.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

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

  // A node with the given liveness intervals, built directly (for its test hooks).
  std::unique_ptr<RedisStore> OpenNode(const std::string& node_id,
                                       std::chrono::milliseconds heartbeat_every,
                                       std::chrono::milliseconds heartbeat_ttl,
                                       std::chrono::milliseconds reap_every) {
    RedisStoreOptions o;
    o.url = *ParseRedisUrl(server_->url());
    o.redis_namespace = namespace_;
    o.node_id = node_id;
    o.heartbeat_every = heartbeat_every;
    o.heartbeat_ttl = heartbeat_ttl;
    o.reap_every = reap_every;
    o.give_back_at_stop = StoreOptions().redis_give_back_at_stop;
    auto store = std::make_unique<RedisStore>(loop_.io(), std::move(o));
    Status s = store->Open();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return s.ok() ? std::move(store) : nullptr;
  }
  // A command on the namespace's server, outside the stores.
  RedisReply Redis(std::vector<std::string> argv) {
    auto r = BlockingRedisCommand(server_->connect_options(), std::move(argv));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(*r) : RedisReply();
  }
  std::string Key(const std::string& name) const { return "{" + namespace_ + "}:" + name; }
  bool Registered(const std::string& node) {
    return Redis({"SISMEMBER", Key("nodes"), node}).integer() == 1;
  }
  std::vector<std::string> FetchAll(Store& store, const std::string& queue) {
    std::vector<std::string> jids;
    while (true) {
      auto job = Fetch(store, {queue});
      EXPECT_TRUE(job.ok()) << job.status().ToString();
      if (!job.ok() || !job->has_value()) return jids;
      jids.push_back((*job)->jid);
    }
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
      Await<Status>([&](auto cb) { a->signing_keys().Put("https://a.example/k", pem, cb); }).ok());
  HostStateRecord host;
  host.host = "a.example:8443";
  host.breaker_open_until_us = now + 30'000'000;
  host.breaker_series_openings = 2;
  host.breaker_openings = 7;
  host.failing_since_us = now;
  host.unavailable = true;
  host.retry_after_until_us = now + 60'000'000;
  ASSERT_TRUE(Await<Status>([&](auto cb) { a->host_states().Put(host, cb); }).ok());

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
  using Keys = Result<std::vector<SigningKeyStore::StoredSigningKey>>;
  auto keys = Await<Keys>([&](auto cb) { b->signing_keys().List(cb); });
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].key_id, "https://a.example/k");
  EXPECT_EQ((*keys)[0].pem, pem);
  using Hosts = Result<std::vector<HostStateRecord>>;
  auto hosts = Await<Hosts>([&](auto cb) { b->host_states().List(cb); });
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(*hosts, std::vector<HostStateRecord>{host});
}

// The Push, Fetch and Ack calls of one turn go to Redis as one script call each, and every call
// still gets its own answer, in call order; another call in between keeps its place.
TEST_F(RedisStoreTest, CallsOfOneTurnAreBatchedAndAnsweredInOrder) {
  auto a = OpenOk("node-a");
  ASSERT_TRUE(a);
  Redis({"CONFIG", "RESETSTAT"});
  std::vector<std::string> log;
  auto note = [&log](std::string what) {
    return [&log, what](Status s) { log.push_back(what + ":" + s.ToString()); };
  };
  a->Push(MakeJob("job-batch-001"), note("push1"));
  a->Push(MakeJob("job-batch-001"), note("push1-again"));
  a->Push(MakeJob("job-batch-002"), note("push2"));
  a->Remove("job-batch-002", note("remove2"));
  a->Push(MakeJob("job-batch-003"), note("push3"));
  auto fetched = [&log](Result<std::optional<JobRecord>> r) {
    log.push_back("fetch:" + (!r.ok() ? r.status().ToString() : *r ? (*r)->jid : "none"));
  };
  for (int i = 0; i < 3; ++i) a->Fetch({"default"}, now_, fetched);
  auto acked = [&log](Result<std::optional<JobRecord>> r) {
    log.push_back("ack:" + (!r.ok() ? r.status().ToString() : *r ? (*r)->jid : "none"));
  };
  a->Ack("job-batch-001", now_, acked);
  a->Ack("job-batch-001", now_, acked);
  a->Ack("job-batch-003", now_, acked);
  loop_.RunUntil([&] { return log.size() == 11; });
  std::vector<std::string> ok_log = {
      "push1:OK",
      "push1-again:" + Status::AlreadyExists("jid job-batch-001 is already known to "
                                             "the server")
                           .ToString(),
      "push2:OK",
      "remove2:OK",
      "push3:OK",
      "fetch:job-batch-001",
      "fetch:job-batch-003",
      "fetch:none",
      "ack:job-batch-001",
      "ack:none",
      "ack:job-batch-003"};
  EXPECT_EQ(log, ok_log);
  // 5 script calls (push x3, remove, push, fetch x3, ack x3), not 11; a heartbeat or a reaper pass
  // may add its own.
  std::string stats = Redis({"INFO", "commandstats"}).str();
  size_t at = stats.find("cmdstat_evalsha:calls=");
  ASSERT_NE(at, std::string::npos) << stats;
  EXPECT_LT(std::stoi(stats.substr(at + 22)), 8) << stats;
  ASSERT_TRUE(Stats(*a).ok());
  EXPECT_EQ(Stats(*a)->processed, 2);
}

// The calls of one turn share Redis calls inside their script (README, "One call for many jobs");
// the answers are still those of the calls run one by one, in order: fetches share the queues
// that have jobs in order, a paused queue gives none, a jid listed without a job is skipped, a
// jid pushed or acknowledged twice in one call counts once.
TEST_F(RedisStoreTest, TheCallsOfOneScriptCallAnswerAsIfRunOneByOne) {
  auto a = OpenOk("node-a");
  ASSERT_TRUE(a);
  std::vector<std::string> log;
  auto pushed = [&log](std::string what) {
    return [&log, what](Status s) { log.push_back(what + ":" + (s.ok() ? "OK" : "held")); };
  };
  a->Push(MakeJob("job-a-00001", "q-a"), pushed("a1"));
  a->Push(MakeJob("job-b-00001", "q-b"), pushed("b1"));
  a->Push(MakeJob("job-a-00001", "q-b"), pushed("a1-again"));
  a->Push(MakeJob("job-b-00002", "q-b"), pushed("b2"));
  a->Push(MakeJob("job-p-00001", "q-p"), pushed("p1"));
  loop_.RunUntil([&] { return log.size() == 5; });
  EXPECT_EQ(log, (std::vector<std::string>{"a1:OK", "b1:OK", "a1-again:held", "b2:OK", "p1:OK"}));
  ASSERT_TRUE(Await<Status>([&](auto cb) { a->SetPaused({"q-p"}, true, cb); }).ok());
  // A jid listed in q-b's oldest end without a job (no script leaves one): skipped.
  Redis({"RPUSH", Key("q:q-b"), "job-listed-only"});

  log.clear();
  auto fetched = [&log](std::string what) {
    return [&log, what](Result<std::optional<JobRecord>> r) {
      log.push_back(what + ":" + (!r.ok() ? r.status().ToString() : *r ? (*r)->jid : "none"));
    };
  };
  a->Fetch({"q-a", "q-b"}, now_, fetched("f1"));
  a->Fetch({"q-a", "q-b"}, now_, fetched("f2"));
  a->Fetch({"q-p", "q-b"}, now_, fetched("f3"));
  a->Fetch({"q-a", "q-b", "q-p"}, now_, fetched("f4"));
  a->Fetch({"q-p"}, now_, fetched("f5"));
  loop_.RunUntil([&] { return log.size() == 5; });
  EXPECT_EQ(log, (std::vector<std::string>{"f1:job-a-00001", "f2:job-b-00001", "f3:job-b-00002",
                                           "f4:none", "f5:none"}));
  EXPECT_EQ(Redis({"LRANGE", Key("q:q-p"), "0", "-1"}).elements().size(), 1u) << "paused: kept";
  EXPECT_EQ(Redis({"EXISTS", Key("q:q-b")}).integer(), 0) << "the listed-only jid is dropped";

  log.clear();
  auto acked = [&log](std::string what) {
    return [&log, what](Result<std::optional<JobRecord>> r) {
      log.push_back(what + ":" + (!r.ok() ? r.status().ToString() : *r ? (*r)->queue : "none"));
    };
  };
  a->Ack("job-b-00001", now_, acked("b1"));
  a->Ack("job-b-00001", now_, acked("b1-again"));
  a->Ack("job-p-00001", now_, acked("p1-queued"));
  a->Ack("job-nobody-01", now_, acked("unknown"));
  a->Ack("job-a-00001", now_, acked("a1"));
  loop_.RunUntil([&] { return log.size() == 5; });
  EXPECT_EQ(log, (std::vector<std::string>{"b1:q-b", "b1-again:none", "p1-queued:none",
                                           "unknown:none", "a1:q-a"}));
  auto stats = Stats(*a);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->processed, 2);
  EXPECT_EQ(stats->working, 1u) << "job-b-00002";
  EXPECT_EQ(stats->queues["q-p"].size, 1u);
}

// An ACK through the node that handed the job out names the reservation (its expiry and queue):
// ack.lua ends it without reading the job, and the node answers from the header it kept. Any
// other ACK reads the job: one through another node, or of a reservation extended since.
TEST_F(RedisStoreTest, AnAckOfTheReservationItsNodeHandedOutReadsNoJob) {
  auto a = OpenOk("node-a");
  auto b = OpenOk("node-b");
  ASSERT_TRUE(a && b);
  std::map<std::string, JobRecord> fetched;
  for (const char* jid : {"job-named-001", "job-named-002", "job-named-003"}) {
    ASSERT_TRUE(Push(*a, MakeJob(jid, "q-named")).ok());
    using R = Result<std::optional<JobRecord>>;
    R got = Await<R>([&](auto cb) { a->FetchFor({"q-named"}, "worker-1", now_, cb); });
    ASSERT_TRUE(got.ok() && got->has_value()) << jid;
    fetched[jid] = **got;
  }
  const TimePoint later = now_ + std::chrono::hours(1);
  ASSERT_TRUE(
      Await<Status>([&](auto cb) { a->ExtendReservation("job-named-002", later, cb); }).ok());
  auto hmgets = [&] {
    std::string stats = Redis({"INFO", "commandstats"}).str();
    size_t at = stats.find("cmdstat_hmget:calls=");
    return at == std::string::npos ? 0 : std::stoi(stats.substr(at + 20));
  };
  Redis({"CONFIG", "RESETSTAT"});

  auto one = Ack(*a, "job-named-001");
  ASSERT_TRUE(one.ok() && one->has_value()) << one.status().ToString();
  EXPECT_EQ((*one)->queue, "q-named");
  EXPECT_EQ((*one)->jobtype, fetched["job-named-001"].jobtype);
  EXPECT_EQ((*one)->score, fetched["job-named-001"].score) << "the reservation FETCH answered";
  EXPECT_EQ(hmgets(), 0) << "the job was not read";

  auto two = Ack(*a, "job-named-002");
  ASSERT_TRUE(two.ok() && two->has_value()) << two.status().ToString();
  EXPECT_EQ((*two)->queue, "q-named");
  EXPECT_EQ((*two)->score, ToUnixMicros(later)) << "the extended reservation";
  EXPECT_EQ(hmgets(), 1) << "an extended reservation is read";

  auto three = Ack(*b, "job-named-003");
  ASSERT_TRUE(three.ok() && three->has_value()) << three.status().ToString();
  EXPECT_EQ((*three)->queue, "q-named");
  EXPECT_EQ(hmgets(), 2) << "another node's reservation is read";

  auto again = Ack(*a, "job-named-001");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value()) << "acknowledged before";
  // Every reservation ended everywhere: only LARGE is left in the reservation keys.
  EXPECT_EQ(Redis({"ZCARD", Key("working")}).integer(), 1);
  EXPECT_EQ(Redis({"SCARD", Key("reserved:node-a")}).integer(), 1);
  EXPECT_EQ(Redis({"HLEN", Key("wid")}).integer(), 1);
  EXPECT_EQ(Redis({"HLEN", Key("jobs")}).integer(), 0);
  ASSERT_TRUE(Stats(*a).ok());
  EXPECT_EQ(Stats(*a)->processed, 3);
}

// The reservation keys a FETCH and its ACK touch keep one member scored +inf / with no job
// (prelude.lua: LARGE) so that Redis never keeps them as a listpack, whose every lookup walks the
// whole key; the member is no job anywhere: not in the counts, not listed.
TEST_F(RedisStoreTest, TheReservationKeysStayOutOfTheListpackEncoding) {
  auto a = OpenOk("node-a");
  ASSERT_TRUE(a);
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(Push(*a, MakeJob("job-large-00" + std::to_string(i))).ok());
  using R = Result<std::optional<JobRecord>>;
  for (int i = 0; i < 3; ++i) {
    R got = Await<R>([&](auto cb) { a->FetchFor({"default"}, "worker-1", now_, cb); });
    ASSERT_TRUE(got.ok() && got->has_value());
  }
  auto encodings = [&] {
    return std::vector<std::string>{Redis({"OBJECT", "ENCODING", Key("working")}).str(),
                                    Redis({"OBJECT", "ENCODING", Key("wid")}).str(),
                                    Redis({"OBJECT", "ENCODING", Key("reserved:node-a")}).str()};
  };
  const std::vector<std::string> large = {"skiplist", "hashtable", "hashtable"};
  EXPECT_EQ(encodings(), large) << "three small keys, yet not listpacks";
  ASSERT_TRUE(Stats(*a).ok());
  EXPECT_EQ(Stats(*a)->working, 3u);
  auto listed = Await<Result<std::vector<JobRecord>>>(
      [&](auto cb) { a->List(JobState::kWorking, 0, 10, cb); });
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 3u);
  auto held =
      Await<Result<std::vector<HolderStore::HeldJob>>>([&](auto cb) { a->holders().List(10, cb); });
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->size(), 3u);

  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Ack(*a, "job-large-00" + std::to_string(i)).ok());
  EXPECT_EQ(encodings(), large) << "and they stay so when the last reservation ends";
  ASSERT_TRUE(Stats(*a).ok());
  EXPECT_EQ(Stats(*a)->working, 0u);
}

TEST_F(RedisStoreTest, ANamespaceOfAnotherLayoutVersionIsRefused) {
  auto set = BlockingRedisCommand(server_->connect_options(),
                                  {"HSET", "{" + namespace_ + "}:meta", "layout", "1"});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  auto s = Open(server_->url(), namespace_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  // Version 1 (before the compact job values) is refused, naming both versions.
  EXPECT_NE(s.status().message().find("layout version 1"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("layout version 2"), std::string::npos)
      << s.status().message();
}

TEST_F(RedisStoreTest, ANewNamespaceGetsTheLayoutVersion) {
  auto a = OpenOk();
  ASSERT_TRUE(a);
  auto layout = BlockingRedisCommand(server_->connect_options(),
                                     {"HGET", "{" + namespace_ + "}:meta", "layout"});
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->str(), std::to_string(RedisStore::kLayoutVersion));
}

TEST_F(RedisStoreTest, APushThroughOneNodeWakesTheOthersNotItself) {
  auto a = OpenOk("node-a");
  auto b = OpenOk("node-b");
  ASSERT_TRUE(a && b);
  std::vector<std::string> woken_a, woken_b;
  a->cluster().SetWakeHandler(
      [&](const std::string& q, size_t n) { woken_a.push_back(q + " " + std::to_string(n)); });
  b->cluster().SetWakeHandler(
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
  // Unreachable: Open starts without it and the reason names it, without the password.
  (*locked)->Kill();
  auto gone = Open("redis://:wrong-pass-7f3@" + where, namespace_);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  std::string reason = (*gone)->unavailable_reason();
  EXPECT_EQ(reason.rfind("store unavailable: ", 0), 0u) << reason;
  EXPECT_NE(reason.find(where), std::string::npos) << reason;
  EXPECT_EQ(reason.find("wrong-pass-7f3"), std::string::npos) << reason;
}

TEST_F(RedisStoreTest, AnUnreachableServerAtStartIsRetriedAndTheStoreOpensWhenItComes) {
  // A free port nothing listens on: a server started and stopped.
  uint16_t port = 0;
  {
    auto probe = RedisServerProcess::Start();
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    port = (*probe)->port();
  }
  std::string where = "127.0.0.1:" + std::to_string(port);
  auto opened = Open("redis://" + where, namespace_, "node-late");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = **opened;
  std::string reason = store.unavailable_reason();
  EXPECT_EQ(reason.rfind("store unavailable: ", 0), 0u) << reason;
  EXPECT_NE(reason.find(where), std::string::npos) << reason;
  // Answered at once (on the next loop turns), not queued until the server comes.
  Status refused = Push(store, MakeJob("job-early-01"));
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable) << refused.ToString();
  EXPECT_EQ(refused.message(), store.unavailable_reason());

  auto server = RedisServerProcess::Start({.port = port});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  loop_.RunUntil([&] { return store.unavailable_reason().empty(); }, 15s);
  ASSERT_TRUE(store.unavailable_reason().empty()) << "store connects";
  auto member =
      BlockingRedisCommand((*server)->connect_options(), {"SISMEMBER", Key("nodes"), "node-late"});
  ASSERT_TRUE(member.ok());
  EXPECT_EQ(member->integer(), 1) << "registered once connected";
  ASSERT_TRUE(Push(store, MakeJob("job-late-001")).ok());
  auto job = Fetch(store, {"default"});
  ASSERT_TRUE(job.ok() && job->has_value()) << job.status().ToString();
  EXPECT_EQ((*job)->jid, "job-late-001");

  // Lost mid-run: unavailable at once with the cause, back by itself.
  (*server)->Kill();
  Status lost = Push(store, MakeJob("job-lost-002"));
  EXPECT_EQ(lost.code(), StatusCode::kUnavailable) << lost.ToString();
  loop_.RunUntil([&] { return !store.unavailable_reason().empty(); }, 15s);
  ASSERT_TRUE(!store.unavailable_reason().empty()) << "loss noticed";
  auto again = RedisServerProcess::Start({.port = port});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  loop_.RunUntil([&] { return store.unavailable_reason().empty(); }, 15s);
  ASSERT_TRUE(store.unavailable_reason().empty()) << "store is back";
  EXPECT_TRUE(Push(store, MakeJob("job-back-001")).ok());
}

TEST_F(RedisStoreTest, ALayoutFoundLateIsFatalAndNamesBothVersions) {
  uint16_t port = 0;
  {
    auto probe = RedisServerProcess::Start();
    ASSERT_TRUE(probe.ok()) << probe.status().ToString();
    port = (*probe)->port();
  }
  auto opened = Open("redis://127.0.0.1:" + std::to_string(port), namespace_, "node-layout");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::optional<Status> fatal;
  (*opened)->SetFatalHandler([&](const Status& s) { fatal = s; });
  auto server = RedisServerProcess::Start({.port = port});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  // The store's loop has not run since: it finds this layout on its next attempt.
  auto set =
      BlockingRedisCommand((*server)->connect_options(), {"HSET", Key("meta"), "layout", "99"});
  ASSERT_TRUE(set.ok() && !set->is_error());
  loop_.RunUntil([&] { return fatal.has_value(); }, 15s);
  ASSERT_TRUE(fatal.has_value()) << "the fatal handler runs";
  EXPECT_EQ(fatal->code(), StatusCode::kFailedPrecondition) << fatal->ToString();
  EXPECT_NE(fatal->message().find("layout version 99"), std::string::npos) << fatal->message();
  EXPECT_NE((*opened)->unavailable_reason().find("layout version 99"), std::string::npos);
  auto member = BlockingRedisCommand((*server)->connect_options(),
                                     {"SISMEMBER", Key("nodes"), "node-layout"});
  ASSERT_TRUE(member.ok());
  EXPECT_EQ(member->integer(), 0) << "nothing is registered in a namespace of another layout";
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
  store.cluster().SetWakeHandler([&](const std::string& q, size_t) { woken.push_back(q); });
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

TEST_F(RedisStoreTest, ADeadNodesReservationsComeBackAtTheHeadsOfTheirQueues) {
  auto a = OpenNode("node-a", 100ms, 300ms, 100ms);
  auto b = OpenNode("node-b", 100ms, 300ms, 100ms);
  ASSERT_TRUE(a && b);
  int64_t pttl = Redis({"PTTL", Key("alive:node-a")}).integer();
  EXPECT_GT(pttl, 0) << "Open wrote the alive key with its TTL";
  EXPECT_LE(pttl, 300);
  EXPECT_TRUE(Registered("node-a"));
  std::map<std::string, size_t> woken;
  b->cluster().SetWakeHandler([&](const std::string& q, size_t n) { woken[q] += n; });

  for (const char* jid : {"job-mail-01", "job-mail-02", "job-mail-03"}) {
    ASSERT_TRUE(Push(*a, MakeJob(jid, "mail")).ok());
  }
  ASSERT_TRUE(Push(*a, MakeJob("job-feed-01", "feed")).ok());
  JobRecord delivery = MakeJob("job-deliver1", "~deliveries");
  delivery.payload = nlohmann::json{{"jid", delivery.jid},
                                    {"jobtype", "webhook"},
                                    {"queue", "~deliveries"},
                                    {"retry", 5},
                                    {"failure", {{"retry_count", 2}, {"message", "earlier"}}}}
                         .dump();
  ASSERT_TRUE(Push(*a, delivery).ok());
  EXPECT_EQ((*Fetch(*a, {"mail"}))->jid, "job-mail-01");
  EXPECT_EQ((*Fetch(*a, {"mail"}))->jid, "job-mail-02");
  EXPECT_EQ((*Fetch(*a, {"feed"}))->jid, "job-feed-01");
  EXPECT_EQ((*Fetch(*a, {"~deliveries"}))->jid, "job-deliver1");
  loop_.RunUntil([&] { return woken.size() == 3; });  // A's pushes reached B
  woken.clear();

  // kill -9: A's heartbeats stop; nothing is cleaned up.
  a->AbandonForTests();
  a.reset();
  loop_.RunUntil([&] { return b->reservations_given_back() == 4; }, 10s);
  EXPECT_FALSE(Registered("node-a"));
  EXPECT_EQ(Redis({"EXISTS", Key("reserved:node-a")}).integer(), 0);
  auto st = Stats(*b);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->working, 0u);
  EXPECT_EQ(st->processed, 0) << "given back, not failed: nothing counted";
  EXPECT_EQ(st->failures, 0);
  EXPECT_EQ(st->retries, 0u);
  loop_.RunUntil([&] { return woken.size() == 3; });
  EXPECT_EQ(woken, (std::map<std::string, size_t>{{"mail", 2}, {"feed", 1}, {"~deliveries", 1}}));

  // At the heads of their queues, in the order they were taken, ahead of what was waiting.
  EXPECT_EQ(FetchAll(*b, "mail"),
            (std::vector<std::string>{"job-mail-01", "job-mail-02", "job-mail-03"}));
  EXPECT_EQ(FetchAll(*b, "feed"), std::vector<std::string>{"job-feed-01"});
  auto again = Fetch(*b, {"~deliveries"});
  ASSERT_TRUE(again.ok() && again->has_value());
  auto doc = nlohmann::json::parse((*again)->payload);
  EXPECT_EQ(doc["retry"], 5);
  EXPECT_EQ(doc["failure"]["retry_count"], 2) << "no retry spent";
  EXPECT_EQ(doc["failure"]["message"], "earlier");
  EXPECT_EQ((*again)->state, JobState::kWorking);
}

TEST_F(RedisStoreTest, ANodeSlowerThanItsHeartbeatButWithinItsTtlKeepsEverything) {
  auto a = OpenNode("node-a", 100ms, 10s, 1h);
  auto b = OpenNode("node-b", 100ms, 10s, 50ms);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(Push(*a, MakeJob("job-slow-001")).ok());
  ASSERT_TRUE(Push(*a, MakeJob("job-slow-002")).ok());
  ASSERT_TRUE(Fetch(*a, {"default"})->has_value());
  ASSERT_TRUE(Fetch(*a, {"default"})->has_value());
  // A stalls (a GC pause, a network blip): no heartbeat while B's reaper checks again and again.
  a->PauseHeartbeatsForTests(true);
  int64_t passes = b->reaper_passes();
  loop_.RunUntil([&] { return b->reaper_passes() >= passes + 5; });
  a->PauseHeartbeatsForTests(false);
  EXPECT_EQ(b->reservations_given_back(), 0);
  EXPECT_TRUE(Registered("node-a"));
  auto st = Stats(*b);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->working, 2u);
  EXPECT_TRUE(Ack(*a, "job-slow-001")->has_value());
  EXPECT_TRUE(Ack(*a, "job-slow-002")->has_value());
}

TEST_F(RedisStoreTest, TwoSurvivorsReapingAtOnceMoveEachJobOnce) {
  auto a = OpenNode("node-a", 100ms, 300ms, 1h);
  auto b = OpenNode("node-b", 100ms, 300ms, 1h);  // reaping only when told
  auto c = OpenNode("node-c", 100ms, 300ms, 1h);
  ASSERT_TRUE(a && b && c);
  constexpr int kJobs = 50;
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_TRUE(Push(*a, MakeJob("job-race-" + std::to_string(100 + i))).ok());
  }
  for (int i = 0; i < kJobs; ++i) ASSERT_TRUE(Fetch(*a, {"default"})->has_value());
  a->AbandonForTests();
  a.reset();
  loop_.RunUntil([&] { return Redis({"EXISTS", Key("alive:node-a")}).integer() == 0; });

  std::optional<Result<size_t>> by_b, by_c;
  b->ReapDeadNodes([&](Result<size_t> r) { by_b = std::move(r); });
  c->ReapDeadNodes([&](Result<size_t> r) { by_c = std::move(r); });
  loop_.RunUntil([&] { return by_b.has_value() && by_c.has_value(); });
  ASSERT_TRUE(by_b->ok() && by_c->ok());
  EXPECT_EQ(**by_b + **by_c, static_cast<size_t>(kJobs));
  EXPECT_TRUE(**by_b == 0 || **by_c == 0) << "one step gives back all of a node's reservations";
  auto listed = Redis({"LRANGE", Key("q:default"), "0", "-1"});
  std::set<std::string> jids;
  for (const RedisReply& e : listed.elements()) jids.insert(e.str());
  EXPECT_EQ(listed.elements().size(), static_cast<size_t>(kJobs)) << "each job queued once";
  EXPECT_EQ(jids.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(Redis({"ZCOUNT", Key("working"), "-inf", "(+inf"}).integer(), 0)
      << "no reservation left (the member scored +inf keeps the set a skip list)";
}

TEST_F(RedisStoreTest, AReapedNodeThatComesBackAnswersAsForUnknownReservationsAndCarriesOn) {
  auto a = OpenNode("node-a", 100ms, 300ms, 1h);
  auto b = OpenNode("node-b", 100ms, 300ms, 50ms);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(Push(*a, MakeJob("job-back-001")).ok());
  auto held = Fetch(*a, {"default"});
  ASSERT_TRUE(held.ok() && held->has_value());
  // A stalls longer than its TTL: B gives its reservation back.
  a->PauseHeartbeatsForTests(true);
  loop_.RunUntil([&] { return b->reservations_given_back() == 1; }, 10s);
  a->PauseHeartbeatsForTests(false);

  auto acked = Ack(*a, "job-back-001");
  ASSERT_TRUE(acked.ok()) << acked.status().ToString();
  EXPECT_FALSE(acked->has_value()) << "the job is queued again: an unknown reservation";
  Status extended = Await<Status>(
      [&](auto cb) { a->ExtendReservation("job-back-001", now_ + std::chrono::hours(1), cb); });
  EXPECT_EQ(extended.code(), StatusCode::kNotFound);
  Status failed = Await<Status>([&](auto cb) {
    a->FailReserved("job-back-001", FromUnixMicros((*held)->score), std::nullopt, true, now_, cb);
  });
  EXPECT_EQ(failed.code(), StatusCode::kFailedPrecondition);

  // A carries on: it registers again and its new reservations are its own.
  loop_.RunUntil([&] { return Registered("node-a"); });
  ASSERT_TRUE(Push(*a, MakeJob("job-back-002")).ok());
  EXPECT_EQ(FetchAll(*a, "default"), (std::vector<std::string>{"job-back-001", "job-back-002"}));
  int64_t passes = b->reaper_passes();
  loop_.RunUntil([&] { return b->reaper_passes() >= passes + 3; });
  EXPECT_EQ(b->reservations_given_back(), 1) << "a live node keeps its reservations";
  EXPECT_TRUE(Ack(*a, "job-back-001")->has_value());
  EXPECT_TRUE(Ack(*a, "job-back-002")->has_value());
}

TEST_F(RedisStoreTest, AGracefulStopGivesBackItsDeliveriesAndHandsTheRestOverToTheirExpiry) {
  auto a = OpenNode("node-a", 100ms, 300ms, 1h);
  auto b = OpenNode("node-b", 100ms, 300ms, 50ms);
  ASSERT_TRUE(a && b);
  std::map<std::string, size_t> woken;
  b->cluster().SetWakeHandler([&](const std::string& q, size_t n) { woken[q] += n; });
  ASSERT_TRUE(Push(*a, MakeJob("job-stop-001")).ok());
  ASSERT_TRUE(Push(*a, MakeJob("job-stop-002", "~deliveries")).ok());
  ASSERT_TRUE(Push(*a, MakeJob("job-stop-003", "~deliveries")).ok());
  ASSERT_TRUE(Fetch(*a, {"default"})->has_value());
  ASSERT_TRUE(Fetch(*a, {"~deliveries"})->has_value());
  loop_.RunUntil([&] { return woken.size() == 2; });
  woken.clear();
  // Close (the commands already sent answered first): the node leaves; its delivery goes back
  // (only its own dispatcher could have ended it), a worker's reservation stays.
  a->CountOutcome(1, 0, now_);
  a.reset();
  EXPECT_FALSE(Registered("node-a"));
  EXPECT_EQ(Redis({"EXISTS", Key("alive:node-a")}).integer(), 0);
  EXPECT_EQ(Redis({"EXISTS", Key("reserved:node-a")}).integer(), 0);
  loop_.RunUntil([&] { return !woken.empty(); });
  EXPECT_EQ(woken, (std::map<std::string, size_t>{{"~deliveries", 1}}));
  EXPECT_EQ(FetchAll(*b, "~deliveries"), (std::vector<std::string>{"job-stop-002", "job-stop-003"}))
      << "given back to the head of the delivery queue";
  int64_t passes = b->reaper_passes();
  loop_.RunUntil([&] { return b->reaper_passes() >= passes + 3; });
  EXPECT_EQ(b->reservations_given_back(), 0) << "nothing is left for the reaper";
  auto st = Stats(*b);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->working, 3u) << "the worker's job and the two deliveries B took";
  EXPECT_EQ(st->processed, 1) << "the count sent before Close was answered";
  EXPECT_TRUE(Ack(*b, "job-stop-001")->has_value()) << "a worker may ACK it through any node";
}

// Batches: members ACKed through several nodes at once fire each callback once.
TEST_F(RedisStoreTest, BatchMembersAckedThroughThreeNodesAtOnceFireEachCallbackOnce) {
  auto a = OpenOk("node-a");
  auto b = OpenOk("node-b");
  auto c = OpenOk("node-c");
  ASSERT_TRUE(a && b && c);
  Store* nodes[] = {a.get(), b.get(), c.get()};
  BatchRecord batch;
  batch.bid = "b-racing0000001";
  batch.created_us = ToUnixMicros(now_);
  batch.complete = MakeJob("cb-complete-race", "callbacks");
  batch.success = MakeJob("cb-success-race1", "callbacks");
  ASSERT_TRUE(Await<Status>([&](auto cb) { a->batches().New(batch, now_, cb); }).ok());
  constexpr int kMembers = 30;
  for (int i = 0; i < kMembers; ++i) {
    Store& via = *nodes[i % 3];
    ASSERT_TRUE(Await<Status>([&](auto cb) {
                  via.batches().PushMember(MakeJob("member-race-" + std::to_string(100 + i)),
                                           batch.bid, now_, cb);
                }).ok());
  }
  ASSERT_TRUE(Await<Status>([&](auto cb) { b->batches().Commit(batch.bid, now_, cb); }).ok());
  for (int i = 0; i < kMembers; ++i) ASSERT_TRUE(Fetch(*nodes[i % 3], {"default"})->has_value());
  // Every ACK sent before any is answered, spread over the three nodes.
  int answered = 0;
  for (int i = 0; i < kMembers; ++i) {
    nodes[i % 3]->Ack("member-race-" + std::to_string(100 + i), now_,
                      [&](Result<std::optional<JobRecord>> r) {
                        EXPECT_TRUE(r.ok() && r->has_value());
                        ++answered;
                      });
  }
  loop_.RunUntil([&] { return answered == kMembers; });
  auto scheduled = Redis({"ZRANGE", Key("scheduled"), "0", "-1"});
  ASSERT_EQ(scheduled.elements().size(), 1u) << "complete fired once; success waits for it";
  EXPECT_EQ(scheduled.elements()[0].str(), "cb-complete-race");
  EXPECT_FALSE(Fetch(*c, {"callbacks"})->has_value()) << "due in the scheduled set";
  auto moved = Await<Result<std::vector<JobRecord>>>(
      [&](auto cb) { a->EnqueueDue(JobState::kScheduled, now_, 10, cb); });
  ASSERT_TRUE(moved.ok() && moved->size() == 1u);
  ASSERT_TRUE(Fetch(*c, {"callbacks"})->has_value());
  // The complete callback ACKed through two nodes at once: one ACK ends it, success fires once.
  int acks = 0;
  for (Store* via : {a.get(), b.get()}) {
    via->Ack("cb-complete-race", now_, [&](Result<std::optional<JobRecord>>) { ++acks; });
  }
  loop_.RunUntil([&] { return acks == 2; });
  scheduled = Redis({"ZRANGE", Key("scheduled"), "0", "-1"});
  ASSERT_EQ(scheduled.elements().size(), 1u);
  EXPECT_EQ(scheduled.elements()[0].str(), "cb-success-race1");
  auto status = Await<Result<std::optional<BatchRecord>>>(
      [&](auto cb) { c->batches().Get(batch.bid, now_, cb); });
  ASSERT_TRUE(status.ok() && status->has_value());
  EXPECT_EQ((*status)->pending, 0);
  EXPECT_EQ((*status)->total, kMembers);
  EXPECT_EQ((*status)->complete_st, "2");
  EXPECT_EQ((*status)->success_st, "1");
}

}  // namespace
}  // namespace bulkhead
