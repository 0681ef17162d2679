#include "bulkhead/view/info_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "bulkhead/engine/engine.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using view_testing::ExampleSnapshot;
using view_testing::ReadTestdata;

constexpr char kHost[] =
    R"({"breaker":"open","breaker_open_until":"2026-01-01T00:02:00Z","breaker_openings":2,"cap":4,)"
    R"("failing_since":"2026-01-01T00:00:00Z","failures":7,"host":"a.example","in_flight":1,)"
    R"("last_error":"http 503","last_error_at":"2026-01-01T00:01:30Z",)"
    R"("latency_p50_ms":12.5,"latency_p99_ms":250.0,)"
    R"("overloaded":0,"parked":3,"retry_after_until":null,"successes":9,"unavailable":false})";

TEST(InfoJsonTest, RendersFaktorysShapeFromASnapshot) {
  std::string expected =
      R"({"faktory":{"queues":{"critical":2,"default":1},)"
      R"("sets":{"dead":3,"retries":2,"scheduled":1,"working":4},)"
      R"("tasks":{"Busy":{"cycles":4,"reaped":3,"size":4,"wall_time_sec":0.125},)"
      R"("Dead":{"cycles":3,"enqueued":2,"size":3,"wall_time_sec":0.25},)"
      R"("Retries":{"cycles":2,"enqueued":1,"size":2,"wall_time_sec":1.5},)"
      R"("Scheduled":{"cycles":1,"enqueued":0,"size":1,"wall_time_sec":0.0},)"
      R"("Workers":{"cycles":5,"reaped":4,"size":1,"wall_time_sec":2.0},)"
      R"("batch":{"closed":0,"created":0,"expired":0,"successful":0}},)"
      R"("total_enqueued":3,"total_failures":5,"total_processed":10,"total_queues":2},)"
      R"("hosts":[)" +
      std::string(kHost) +
      R"(],"now":"2026-01-01T00:01:32.623456Z",)"
      R"("server":{"bulkhead_version":"9.9.9","command_count":42,"connections":3,)"
      R"("description":"bulkhead","faktory_version":"1.10.0","store":"sqlite","uptime":92,)"
      R"("used_memory_mb":7,"workers":1},"server_utc_time":"00:01:32 UTC"})";
  EXPECT_EQ(RenderInfoJson(ExampleSnapshot()), expected);
}

TEST(InfoJsonTest, NoHostsNoHostsKey) {
  InfoSnapshot info = ExampleSnapshot();
  info.hosts.reset();
  EXPECT_EQ(RenderInfoJson(info).find("\"hosts\""), std::string::npos);
}

TEST(InfoJsonTest, ParsesBackWhatItRenders) {
  InfoSnapshot info = ExampleSnapshot();
  auto parsed = ParseInfoJson(RenderInfoJson(info));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const EngineSnapshot& e = parsed->engine;
  EXPECT_EQ(e.now, info.engine.now);
  EXPECT_EQ(e.now - e.started_at, 92s);
  EXPECT_EQ(e.store, "sqlite");
  ASSERT_EQ(e.queues.size(), 2u);
  EXPECT_EQ(e.queues.at("critical").size, 2u);
  EXPECT_EQ(e.queues.at("default").size, 1u);
  EXPECT_EQ(e.queues.at("default").latency_seconds, 0) << "INFO does not carry latency";
  EXPECT_EQ(e.scheduled, 1u);
  EXPECT_EQ(e.retries, 2u);
  EXPECT_EQ(e.dead, 3u);
  EXPECT_EQ(e.working, 4u);
  EXPECT_EQ(e.enqueued, 3u);
  EXPECT_EQ(e.processed, 10);
  EXPECT_EQ(e.failures, 5);
  EXPECT_EQ(e.tasks.retries.cycles, 2);
  EXPECT_EQ(e.tasks.retries.jobs, 1);
  EXPECT_EQ(e.tasks.retries.wall, 1500ms);
  EXPECT_EQ(e.tasks.busy.jobs, 3);
  EXPECT_EQ(e.tasks.workers.jobs, 4);
  EXPECT_EQ(e.worker_count, 1u);
  EXPECT_EQ(parsed->server.version, "9.9.9");
  EXPECT_EQ(parsed->server.connections, 3);
  EXPECT_EQ(parsed->server.command_count, 42);
  EXPECT_EQ(parsed->server.used_memory_mb, 7);
  ASSERT_TRUE(parsed->hosts.has_value());
  EXPECT_EQ(*parsed->hosts, *info.hosts);
  EXPECT_EQ(RenderInfoJson(*parsed), RenderInfoJson(info))
      << "what INFO holds survives a round trip";
}

TEST(InfoJsonTest, HostsSurviveARoundTrip) {
  InfoSnapshot info = ExampleSnapshot();
  info.hosts = HostViewsFrom(view_testing::TwoHosts());
  auto parsed = ParseInfoJson(RenderInfoJson(info));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->hosts.has_value());
  EXPECT_EQ(*parsed->hosts, *info.hosts);
  info.hosts->clear();
  parsed = ParseInfoJson(RenderInfoJson(info));
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(parsed->hosts.has_value()) << "an empty array is still a dispatcher's answer";
  EXPECT_TRUE(parsed->hosts->empty());
}

TEST(InfoJsonTest, ParseDefaultsWhatAHostLacks) {
  auto parsed = ParseInfoJson(
      R"({"hosts":[1,{"in_flight":"x","cap":2,"failing_since":"yesterday","unavailable":1,)"
      R"("last_error":7,"breaker_open_until":null},[]]})");
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(parsed->hosts.has_value());
  ASSERT_EQ(parsed->hosts->size(), 1u) << "elements that are not objects are skipped";
  HostView expected;
  expected.host = "?";
  expected.breaker = "?";
  expected.cap = 2;
  EXPECT_EQ(parsed->hosts->at(0), expected);
  parsed = ParseInfoJson(R"({"hosts":{}})");
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->hosts.has_value()) << "hosts that are not an array are no hosts";
}

TEST(InfoJsonTest, ParseRefusesWhatIsNotAnObjectAndDefaultsWhatIsMissing) {
  for (const char* bad : {"", "[]", "nope", "42"}) {
    auto parsed = ParseInfoJson(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message(), "INFO reply is not a JSON object");
  }
  auto parsed = ParseInfoJson(R"({"faktory":{"queues":{"q":"x"}},"server":{"uptime":"soon"}})");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->server.version, "?");
  EXPECT_EQ(parsed->engine.store, "?");
  EXPECT_EQ(parsed->engine.queues.at("q").size, 0u);
  EXPECT_EQ(parsed->engine.now, parsed->engine.started_at);
  EXPECT_FALSE(parsed->hosts.has_value());
}

// The INFO a running engine produces, compared with what the engine's own INFO builder wrote on
// the same scenario before the views moved here (view/testdata/info_before_*.json, recorded from
// the old Engine::Info). Wall times and resident memory vary from run to run: masked on both sides.
class InfoFromEngineTest : public ::testing::Test {
 protected:
  InfoFromEngineTest() {
    config_.fetch_block_ms = 50;
    clock_.Set(FromUnixMicros(1'767'225'600'123'456));  // 2026-01-01T00:00:00.123456Z
    store_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
  }
  void Push(const std::string& json) {
    auto job = ParseJob(json, clock_.Now());
    ASSERT_TRUE(job.ok());
    engine_->Push(std::move(*job), [](Status s) { EXPECT_TRUE(s.ok()); });
  }
  void Fetch(const std::string& queue) {
    bool answered = false;
    engine_->Fetch({queue}, "", [&](auto r) { answered = r.ok() && r->has_value(); });
    EXPECT_TRUE(answered) << "a job waits in " << queue;
  }
  // The scenario the golden files were recorded on.
  void RunScenario() {
    Push(R"({"jid":"golden0001","jobtype":"t","args":[],"queue":"critical"})");
    Push(R"({"jid":"golden0002","jobtype":"t","args":[],"queue":"critical"})");
    Push(R"({"jid":"golden0003","jobtype":"t","args":[]})");
    Push(R"({"jid":"golden0004","jobtype":"t","args":[],"queue":"bulk"})");
    Push(R"({"jid":"golden0005","jobtype":"t","args":[],"at":"2100-01-01T00:00:00Z"})");
    Push(R"({"jid":"golden0006","jobtype":"t","args":[],"retry":0})");
    Push(R"({"jid":"golden0007","jobtype":"t","args":[]})");
    Fetch("default");
    Fetch("default");
    Fetch("bulk");
    engine_->Ack("golden0004", [](Status) {});
    engine_->Fail("golden0003", {}, [](Status) {});
    engine_->Fail("golden0006", {}, [](Status) {});
    engine_->PauseQueues({"paused"}, true, [](Status) {});
    WorkerInfo w;
    w.wid = "w1";
    w.hostname = "h";
    engine_->workers().Connect(w, clock_.Now());
    clock_.Advance(90s);
    engine_->RunScheduledOnce();
    engine_->RunReaperOnce();
    engine_->RunDeadPurgeOnce();
    clock_.Advance(2500ms);
  }
  // INFO as the server assembles it: the engine's snapshot, connections 3, 42 commands.
  std::string Info(std::optional<std::vector<HostView>> hosts) {
    std::optional<Result<EngineSnapshot>> snapshot;
    engine_->Snapshot([&](Result<EngineSnapshot> r) { snapshot = std::move(r); });
    EXPECT_TRUE(snapshot && snapshot->ok());
    InfoSnapshot info;
    info.engine = **snapshot;
    info.server.connections = 3;
    info.server.command_count = 42;
    info.hosts = std::move(hosts);
    return RenderInfoJson(info);
  }
  static std::string Mask(const std::string& doc) {
    std::string out = std::regex_replace(doc, std::regex(R"("wall_time_sec":[^,}]+)"),
                                         R"("wall_time_sec":"<wall>")");
    return std::regex_replace(out, std::regex(R"("used_memory_mb":[^,}]+)"),
                              R"("used_memory_mb":"<rss>")");
  }

  Config config_;
  ManualClock clock_;
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(InfoFromEngineTest, MatchesWhatTheEngineBuiltBefore) {
  RunScenario();
  std::string before = ReadTestdata("info_before_no_hosts.json");
  ASSERT_FALSE(before.empty())
      << "view/testdata/info_before_no_hosts.json (set BULKHEAD_SOURCE_DIR)";
  EXPECT_EQ(Mask(Info(std::nullopt)) + "\n", before);
}

TEST_F(InfoFromEngineTest, MatchesWhatTheEngineBuiltBeforeWithHosts) {
  RunScenario();
  std::string before = ReadTestdata("info_before_hosts.json");
  ASSERT_FALSE(before.empty()) << "view/testdata/info_before_hosts.json (set BULKHEAD_SOURCE_DIR)";
  EXPECT_EQ(Mask(Info(ExampleSnapshot().hosts)) + "\n", before);
}

TEST_F(InfoFromEngineTest, TaskWallTimesAreFloats) {
  RunScenario();
  auto tasks = nlohmann::json::parse(Info(std::nullopt))["faktory"]["tasks"];
  for (const char* task : {"Scheduled", "Retries", "Dead", "Busy", "Workers"}) {
    EXPECT_TRUE(tasks[task]["wall_time_sec"].is_number_float()) << task;
  }
}

}  // namespace
}  // namespace bulkhead
