// The Sidekiq bridge against a real redis-server (the application's Redis), with an engine on a
// real store: taking, repeats, leftovers, the dead set, outcome jobs, the reaper. The Ruby side
// (Sidekiq::Client, a Sidekiq process) is tests/sidekiq/'s.
#include "bulkhead/bridge/sidekiq_bridge.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "bulkhead/bridge/sidekiq_scripts.h"
#include "bulkhead/dispatch/outcome_jobs.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/redis/testing/run_until.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string SidekiqJob(const std::string& jid, const std::string& klass = "Mailer",
                       const std::string& queue = "bulkhead") {
  return json{{"class", klass},
              {"args", json::array({1, "two"})},
              {"retry", true},
              {"queue", queue},
              {"jid", jid},
              {"created_at", 1700000000.5},
              {"enqueued_at", 1700000000.75}}
      .dump();
}

class SidekiqBridgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto redis = RedisServerProcess::Start();
    ASSERT_TRUE(redis.ok()) << redis.status().ToString();
    redis_ = std::move(*redis);
    app_ = std::make_unique<RedisClient>(io_, RedisClientOptions{.url = Url(), .name = "app"});
    app_->Start();
    ASSERT_TRUE(RunUntil(
        io_, [&] { return app_->available(); }, "app connection"));
    config_.sidekiq.redis = redis_->url();
    config_.sidekiq.node = "node-a";
    config_.sidekiq.batch = 100;
    config_.redis_heartbeat_ms = 100;
    config_.redis_heartbeat_ttl_ms = 300;
    config_.redis_reap_ms = 100;
  }
  void TearDown() override {
    if (bridge_) bridge_->Stop(1s);
    bridge_.reset();
    if (engine_) engine_->Stop();
    engine_.reset();
    app_.reset();
    if (store_) store_->Close();
  }
  RedisUrl Url() const { return *ParseRedisUrl(redis_->url()); }

  // bulkhead's store (memory: unless given) and engine, and the bridge over them.
  void StartBridge(std::unique_ptr<Store> store = nullptr) {
    if (!store) store = std::move(*OpenStoreFromUrl("memory:", Poster()));
    store_ = std::move(store);
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
    engine_->Start();
    auto options =
        SidekiqBridgeOptionsFrom(config_, store_->cluster().shared(), store_->cluster().node_id());
    ASSERT_TRUE(options.ok()) << options.status().ToString();
    options->poll_every = 50ms;
    bridge_ = std::make_unique<SidekiqBridge>(io_, clock_, *engine_, std::move(*options));
    bridge_->Start();
    ASSERT_TRUE(RunUntil(
        io_, [&] { return bridge_->up(); }, "bridge up"));
  }
  Store::Poster Poster() {
    return [this](std::function<void()> fn) { boost::asio::post(io_, std::move(fn)); };
  }
  RedisReply Command(std::vector<std::string> argv) {
    std::optional<Result<RedisReply>> reply;
    app_->Send(argv, [&](Result<RedisReply> r) { reply = std::move(r); });
    EXPECT_TRUE(RunUntil(
        io_, [&] { return reply.has_value(); }, argv[0]));
    EXPECT_TRUE(reply && reply->ok());
    return reply && reply->ok() ? **reply : RedisReply();
  }
  int64_t Int(std::vector<std::string> argv) { return Command(std::move(argv)).integer(); }
  StoreStats Stats() {
    std::optional<StoreStats> out;
    store_->Stats([&](Result<StoreStats> r) { out = *r; });
    EXPECT_TRUE(RunUntil(
        io_, [&] { return out.has_value(); }, "stats"));
    return out.value_or(StoreStats{});
  }
  size_t Queued(const std::string& queue) {
    StoreStats s = Stats();
    auto it = s.queues.find(queue);
    return it == s.queues.end() ? 0 : it->second.size;
  }
  size_t Marks() {
    std::optional<Result<size_t>> n;
    store_->taken_marks().Count([&](Result<size_t> r) { n = std::move(r); });
    EXPECT_TRUE(RunUntil(
        io_, [&] { return n.has_value(); }, "marks"));
    return n && n->ok() ? **n : SIZE_MAX;
  }
  ::testing::AssertionResult Until(const std::function<bool()>& done, const std::string& what) {
    return RunUntil(io_, done, what, 20s);
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  SystemClock& clock_ = SystemClock::Instance();
  DefaultRng rng_;
  Config config_;
  std::unique_ptr<RedisServerProcess> redis_;
  std::unique_ptr<RedisClient> app_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<SidekiqBridge> bridge_;
};

TEST_F(SidekiqBridgeTest, ABacklogIsTakenInBatchesAndANewJobAtOnceWhenIdle) {
  for (int i = 0; i < 250; ++i) {
    Command({"LPUSH", "queue:bulkhead", SidekiqJob("backlog-job-" + std::to_string(1000 + i))});
  }
  StartBridge();
  ASSERT_TRUE(Until([&] { return Queued("bulkhead") == 250; }, "the backlog taken"));
  EXPECT_TRUE(Until([&] { return Int({"LLEN", TakingKey("node-a")}) == 0; }, "list empty"));
  EXPECT_EQ(Int({"LLEN", "queue:bulkhead"}), 0);
  // Idle now (blocked on BRPOPLPUSH): one more job is taken at once.
  Command({"LPUSH", "queue:bulkhead", SidekiqJob("late-job-0001")});
  ASSERT_TRUE(Until([&] { return Queued("bulkhead") == 251; }, "the late job taken"));
  EXPECT_TRUE(Until([&] { return bridge_->Snapshot().taken == 251; }, "counted"));
  EXPECT_EQ(bridge_->Snapshot().repeats, 0);
  EXPECT_EQ(bridge_->Snapshot().dead, 0);
  // FIFO: the oldest Sidekiq job is the first FETCH.
  std::optional<Result<std::optional<std::string>>> fetched;
  engine_->Fetch({"bulkhead"}, "", [&](auto r) { fetched = std::move(r); });
  ASSERT_TRUE(Until([&] { return fetched.has_value(); }, "fetch"));
  json job = json::parse(***fetched);
  EXPECT_EQ(job["jid"], "backlog-job-1000");
  EXPECT_EQ(job["jobtype"], "Mailer");
  EXPECT_EQ(job["created_at"], "2023-11-14T22:13:20.5Z");
  // Marks are forgotten once the jobs left the list.
  EXPECT_TRUE(Until([&] { return Marks() == 0; }, "marks forgotten"));
}

TEST_F(SidekiqBridgeTest, LeftoversAreTakenAgainAndRepeatsRecognisedEvenOnceAcknowledged) {
  store_ = std::move(*OpenStoreFromUrl("memory:", Poster()));
  engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
  // A previous process of node-a took three jobs: it stored two (one since run and acknowledged)
  // and crashed before they left its list.
  auto record = [&](const std::string& jid) {
    auto doc = MapSidekiqJob(SidekiqJob(jid), {});
    return *ParseJobDocument(std::move(*doc), clock_.Now());
  };
  std::optional<std::vector<Status>> pushed;
  engine_->PushTaken({{record("acked-job-00001"), "acked-job-00001"},
                      {record("stored-job-0001"), "stored-job-0001"}},
                     clock_.Now() + 1h, [&](std::vector<Status> r) { pushed = std::move(r); });
  ASSERT_TRUE(Until([&] { return pushed.has_value(); }, "pushed"));
  ASSERT_TRUE((*pushed)[0].ok() && (*pushed)[1].ok());
  std::optional<Result<std::optional<JobRecord>>> fetched, acked;
  store_->Fetch({"bulkhead"}, clock_.Now(), [&](auto r) { fetched = std::move(r); });
  ASSERT_TRUE(Until([&] { return fetched.has_value(); }, "fetch"));
  ASSERT_EQ((**fetched)->jid, "acked-job-00001");
  store_->Ack("acked-job-00001", clock_.Now(), [&](auto r) { acked = std::move(r); });
  ASSERT_TRUE(Until([&] { return acked.has_value(); }, "ack"));
  for (const char* jid : {"stored-job-0001", "acked-job-00001", "new-job-000001"}) {
    Command({"LPUSH", TakingKey("node-a"), SidekiqJob(jid)});
  }
  engine_->Stop();
  engine_.reset();
  StartBridge(std::move(store_));
  ASSERT_TRUE(Until([&] { return Int({"LLEN", TakingKey("node-a")}) == 0; }, "list settled"));
  EXPECT_TRUE(Until([&] { return bridge_->Snapshot().repeats == 2; }, "two repeats"));
  EXPECT_EQ(bridge_->Snapshot().taken, 1);
  StoreStats s = Stats();
  EXPECT_EQ(s.queues["bulkhead"].size, 2u) << "the stored one and the new one, once each";
}

TEST_F(SidekiqBridgeTest, WhatCannotBeTakenGoesToSidekiqsDeadSetWithItsReason) {
  config_.sidekiq.max_job_bytes = 2048;
  StartBridge();
  Command({"LPUSH", "queue:bulkhead", "this is not JSON"});
  Command({"LPUSH", "queue:bulkhead", SidekiqJob("ctrl-class-0001", "Bad\x01Class")});
  Command({"LPUSH", "queue:bulkhead", SidekiqJob("huge-job-00001", std::string(3000, 'A'))});
  Command({"LPUSH", "queue:bulkhead", SidekiqJob("bad-queue-0001", "Mailer", "no spaces")});
  Command({"LPUSH", "queue:bulkhead", SidekiqJob("good-job-00001")});
  ASSERT_TRUE(Until([&] { return Int({"ZCARD", "dead"}) == 4; }, "four in the dead set"));
  ASSERT_TRUE(Until([&] { return Queued("bulkhead") == 1; }, "the good one taken"));
  std::vector<std::string> messages;
  RedisReply dead = Command({"ZRANGE", "dead", "0", "-1"});
  for (const RedisReply& e : dead.elements()) {
    json entry = json::parse(e.str());
    EXPECT_EQ(entry["error_class"], "Bulkhead::RefusedJob");
    EXPECT_TRUE(entry["failed_at"].is_number_float());
    messages.push_back(entry["error_message"]);
  }
  std::sort(messages.begin(), messages.end());
  EXPECT_EQ(messages[0], "class holds a control character");
  EXPECT_NE(messages[1].find("not JSON"), std::string::npos) << messages[1];
  EXPECT_EQ(messages[2], "queue names must match \\A[a-zA-Z0-9._-]+\\z");
  EXPECT_NE(messages[3].find("at most 2048"), std::string::npos) << messages[3];
  EXPECT_TRUE(Until([&] { return bridge_->Snapshot().dead == 4; }, "counted"));
  EXPECT_EQ(Int({"LLEN", TakingKey("node-a")}), 0);
}

TEST_F(SidekiqBridgeTest, TheDeadSetIsTrimmedAsSidekiqTrimsIt) {
  config_.sidekiq.dead_max_jobs = 3;
  // An entry older than the timeout, and enough young ones to pass the count.
  Command({"ZADD", "dead", "1000.0", R"({"class":"Old","jid":"old"})"});
  StartBridge();
  for (int i = 0; i < 4; ++i) Command({"LPUSH", "queue:bulkhead", "bad " + std::to_string(i)});
  ASSERT_TRUE(Until([&] { return bridge_->Snapshot().dead == 4; }, "dead"));
  // ZREMRANGEBYRANK dead 0 -3 keeps dead_max_jobs - 1, as Sidekiq's DeadSet#kill does.
  EXPECT_EQ(Int({"ZCARD", "dead"}), 2);
  EXPECT_EQ(Command({"ZSCORE", "dead", R"({"class":"Old","jid":"old"})"}).type(),
            RedisReply::Type::kNil);
}

TEST_F(SidekiqBridgeTest, OutcomesAreWrittenAsSidekiqJobsAndAcknowledged) {
  config_.sidekiq.outcomes_queue = "outcomes";
  StartBridge();
  DispatcherStats stats;
  OutcomeJobs outcomes(*engine_, clock_, kSidekiqOutcomesQueue, stats);
  DeliveryJob delivery;
  delivery.jid = "6a1c2f0e9b3d4c57";
  delivery.jobtype = "webpush";
  delivery.url = "https://push.example/sub/1";
  delivery.host = "push.example";
  delivery.context = {{"web_push_subscription_id", 42}};
  outcomes.WebPushGone(delivery, 410, "http 410");
  ASSERT_TRUE(Until([&] { return Int({"LLEN", "queue:outcomes"}) == 1; }, "written"));
  json job = json::parse(Command({"LINDEX", "queue:outcomes", "0"}).str());
  EXPECT_EQ(job["class"], "Bulkhead::WebpushGone");
  EXPECT_EQ(job["queue"], "outcomes");
  EXPECT_EQ(job["jid"], SidekiqJidFor("bh-gone-6a1c2f0e9b3d4c57"));
  EXPECT_EQ(job["args"][0]["event"], "webpush_gone");
  EXPECT_EQ(job["args"][0]["status"], 410);
  EXPECT_EQ(job["args"][0]["context"]["web_push_subscription_id"], 42);
  EXPECT_EQ(Int({"SISMEMBER", "queues", "outcomes"}), 1);
  EXPECT_TRUE(Until([&] { return Stats().working == 0 && Queued(kSidekiqOutcomesQueue) == 0; },
                    "acknowledged"));
  EXPECT_EQ(bridge_->Snapshot().outcomes_written, 1);
}

TEST_F(SidekiqBridgeTest, OutcomesWaitInTheStoreWhileTheRedisIsDown) {
  StartBridge();
  uint16_t port = redis_->port();
  redis_->Kill();
  ASSERT_TRUE(Until([&] { return !bridge_->up(); }, "down"));
  EXPECT_NE(bridge_->down_reason(), "");
  DispatcherStats stats;
  OutcomeJobs outcomes(*engine_, clock_, kSidekiqOutcomesQueue, stats);
  outcomes.HostAvailable("back.example", FromUnixMicros(1'700'000'000'000'000));
  ASSERT_TRUE(Until([&] { return Queued(kSidekiqOutcomesQueue) == 1; }, "waiting in the store"));
  auto again = RedisServerProcess::Start({.port = port});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  redis_ = std::move(*again);
  ASSERT_TRUE(Until([&] { return bridge_->up(); }, "up again"));
  ASSERT_TRUE(Until([&] { return app_->available(); }, "the test's connection back"));
  ASSERT_TRUE(Until([&] { return Int({"LLEN", "queue:default"}) == 1; }, "written"));
  EXPECT_EQ(json::parse(Command({"LINDEX", "queue:default", "0"}).str())["class"],
            "Bulkhead::HostAvailable");
  // And taking goes on.
  Command({"LPUSH", "queue:bulkhead", SidekiqJob("after-outage-01")});
  EXPECT_TRUE(Until([&] { return Queued("bulkhead") == 1; }, "taken after the outage"));
}

TEST_F(SidekiqBridgeTest, ASecondProcessWithTheSameNameWaits) {
  StartBridge();
  auto options = SidekiqBridgeOptionsFrom(config_, false, "");
  ASSERT_TRUE(options.ok());
  SidekiqBridge second(io_, clock_, *engine_, std::move(*options));
  second.Start();
  ASSERT_TRUE(
      Until([&] { return second.Snapshot().reason.find("held by another") != std::string::npos; },
            "told the name is in use"));
  EXPECT_FALSE(second.up());
  bridge_->Stop(1s);  // a graceful stop frees the name
  bridge_.reset();
  EXPECT_TRUE(Until([&] { return second.up(); }, "the second one takes over"));
  second.Stop(1s);
}

TEST_F(SidekiqBridgeTest, ADeadNodesListIsTakenBackOnASharedStore) {
  StoreOptions options;
  options.io_context = &io_;
  options.redis_namespace = "bridge-reap";
  options.node_id = "node-a";
  options.redis_heartbeat_every = 100ms;
  options.redis_heartbeat_ttl = 300ms;
  auto store = OpenStoreFromUrl(redis_->url(), Poster(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  config_.sidekiq.node = "";  // the store's node id
  // A node that died with two jobs in its list (its alive key gone).
  Command({"SADD", NodesKey(), "node-z"});
  Command({"LPUSH", TakingKey("node-z"), SidekiqJob("orphan-job-0001")});
  Command({"LPUSH", TakingKey("node-z"), SidekiqJob("orphan-job-0002")});
  StartBridge(std::move(*store));
  ASSERT_TRUE(Until([&] { return Queued("bulkhead") == 2; }, "taken back"));
  EXPECT_EQ(Int({"EXISTS", TakingKey("node-z")}), 0);
  EXPECT_EQ(Int({"SISMEMBER", NodesKey(), "node-z"}), 0);
  EXPECT_EQ(bridge_->Snapshot().reaped, 2);
  EXPECT_EQ(bridge_->Snapshot().node, "node-a");
}

}  // namespace
}  // namespace bulkhead
