// The cron scheduler through the engine, on a memory store (inline and deferred) with a
// simulated clock: each due time is pushed once, as time passes, across a restart and with two
// engines on one store.
#include "bulkhead/engine/cron_scheduler.h"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "bulkhead/engine/engine.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/simulated_clock.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

CronEntry Entry(const std::string& name, const std::string& schedule, const std::string& job) {
  return CronEntry{name, *CronSchedule::Parse(schedule), job};
}

class CronSchedulerTest : public ::testing::TestWithParam<bool> {
 protected:
  CronSchedulerTest() {
    inner_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    // Answers later (Deferred) or at once (Inline); either way a test may fail its cron claims.
    deferred_ = std::make_unique<DeferredStore>(*inner_, [this](std::function<void()> f) {
      if (GetParam()) {
        boost::asio::post(io_, std::move(f));
      } else {
        f();
      }
    });
    config_.cron = {
        Entry("minutely", "* * * * *", R"({"jobtype":"Tick","queue":"cron","args":[]})")};
  }
  Store& store() { return *deferred_; }
  DeferredCronClaims& claims() {
    return static_cast<DeferredCronClaims&>(deferred_->cron_claims());
  }
  std::unique_ptr<Engine> StartEngine() {
    auto engine = std::make_unique<Engine>(io_, store(), config_, clock_, rng_);
    engine->Start();
    RunReady();
    return engine;
  }
  void Advance(Duration d) {
    clock_.Advance(d);
    RunReady();
  }
  void RunReady() {
    io_.restart();
    io_.poll();
  }
  size_t Queued(const std::string& queue) {
    RunReady();
    StoreStats s;
    inner_->Stats([&](Result<StoreStats> r) { s = *r; });
    auto it = s.queues.find(queue);
    return it == s.queues.end() ? 0 : it->second.size;
  }
  CronEntrySnapshot CronOf(Engine& engine, size_t i = 0) {
    std::optional<EngineSnapshot> snap;
    engine.Snapshot([&](Result<EngineSnapshot> r) { snap = *r; });
    RunReady();
    return snap->cron.at(i);
  }

  Config config_;
  // 2023-11-14T22:14:30Z: half a minute after the due time 22:14:00.
  SimulatedClock clock_{FromUnixMicros(1'700'000'070'000'000)};
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> inner_;
  std::unique_ptr<DeferredStore> deferred_;
};

INSTANTIATE_TEST_SUITE_P(Answers, CronSchedulerTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Deferred" : "Inline"; });

TEST_P(CronSchedulerTest, EachDueTimeIsPushedOnceAsTimePasses) {
  auto engine = StartEngine();
  // 22:14:00 is less than a minute old at start: fired.
  EXPECT_EQ(Queued("cron"), 1u);
  Advance(29s);  // 22:14:59
  EXPECT_EQ(Queued("cron"), 1u);
  Advance(1s);  // 22:15:00
  EXPECT_EQ(Queued("cron"), 2u);
  Advance(1s);
  Advance(58s);  // 22:15:59
  EXPECT_EQ(Queued("cron"), 2u);
  Advance(1s);  // 22:16:00
  EXPECT_EQ(Queued("cron"), 3u);
  CronEntrySnapshot c = CronOf(*engine);
  EXPECT_EQ(c.name, "minutely");
  EXPECT_EQ(c.schedule, "* * * * *");
  EXPECT_EQ(c.enqueued, 3);
  EXPECT_EQ(c.lost, 0);
  EXPECT_EQ(FormatRfc3339(*c.last_run), "2023-11-14T22:16:00Z");
  EXPECT_EQ(FormatRfc3339(c.next_run), "2023-11-14T22:17:00Z");
  // Each push is a copy of the template with its own jid.
  std::vector<std::string> jids;
  for (int i = 0; i < 3; ++i) {
    inner_->Fetch({"cron"}, clock_.Now(), [&](auto r) {
      json doc = json::parse((*r)->payload);
      EXPECT_EQ(doc["jobtype"], "Tick");
      EXPECT_EQ(doc["args"], json::array());
      jids.push_back(doc["jid"]);
    });
  }
  ASSERT_EQ(jids.size(), 3u);
  EXPECT_NE(jids[0], jids[1]);
  EXPECT_NE(jids[1], jids[2]);
}

TEST_P(CronSchedulerTest, ARestartNeitherSkipsNorRepeatsARecentDueTime) {
  auto engine = StartEngine();
  EXPECT_EQ(Queued("cron"), 1u);  // 22:14:00
  Advance(30s);                   // 22:15:00
  EXPECT_EQ(Queued("cron"), 2u);
  // Restart at 22:15:20: 22:15:00 was claimed before the restart, so it is not pushed again.
  engine.reset();
  Advance(20s);
  engine = StartEngine();
  EXPECT_EQ(Queued("cron"), 2u);
  EXPECT_EQ(FormatRfc3339(*CronOf(*engine).last_run), "2023-11-14T22:15:00Z");
  // Down from 22:15:50 to 22:16:40: 22:16:00 is less than a minute old when it comes back.
  Advance(30s);
  engine.reset();
  Advance(50s);
  engine = StartEngine();
  EXPECT_EQ(Queued("cron"), 3u);
  // Down for longer than a minute: the missed due times are skipped, the next one fires.
  engine.reset();
  Advance(150s);  // 22:19:10
  engine = StartEngine();
  EXPECT_EQ(Queued("cron"), 4u);  // 22:19:00 only
  EXPECT_EQ(CronOf(*engine).enqueued, 1);
}

TEST_P(CronSchedulerTest, ALateLookFiresEveryDueTimeOfTheLastMinute) {
  config_.cron = {Entry("every20s", "@every 20s", R"({"jobtype":"Fast","args":[]})")};
  auto engine = StartEngine();
  EXPECT_EQ(Queued("default"), 1u);  // 22:14:20, the latest at start
  Advance(59s);                      // 22:15:29: 22:14:40, 22:15:00 and 22:15:20, in order
  EXPECT_EQ(Queued("default"), 4u);
  EXPECT_EQ(FormatRfc3339(*CronOf(*engine).last_run), "2023-11-14T22:15:20Z");
  Advance(91s);  // 22:17:00: only those less than a minute old (22:16:20, 22:16:40, 22:17:00)
  EXPECT_EQ(Queued("default"), 7u);
}

TEST_P(CronSchedulerTest, DueTimesWhoseClaimsFailedTogetherFireOnceTheStoreAnswersAgain) {
  config_.cron = {Entry("every20s", "@every 20s", R"({"jobtype":"Fast","args":[]})")};
  auto engine = StartEngine();
  EXPECT_EQ(Queued("default"), 1u);  // 22:14:20
  claims().FailWith(Status::Unavailable("no primary"));
  Advance(40s);  // 22:15:10: one look claims 22:14:40 and 22:15:00, and both claims fail
  EXPECT_EQ(Queued("default"), 1u);
  claims().FailWith(Status::Ok());
  Advance(1s);  // the next look starts again from the earliest failed due time
  EXPECT_EQ(Queued("default"), 3u);
  EXPECT_EQ(FormatRfc3339(*CronOf(*engine).last_run), "2023-11-14T22:15:00Z");
  Advance(10s);  // 22:15:21: 22:15:20, once
  EXPECT_EQ(Queued("default"), 4u);
  EXPECT_EQ(CronOf(*engine).enqueued, 4);
}

TEST_P(CronSchedulerTest, TwoEnginesOnOneStoreFireOnce) {
  config_.cron.push_back(Entry("every20s", "@every 20s", R"({"jobtype":"Fast","args":[]})"));
  auto a = StartEngine();
  auto b = StartEngine();
  for (int i = 0; i < 120; ++i) Advance(1s);  // to 22:16:30
  EXPECT_EQ(Queued("cron"), 3u);              // 22:14, 22:15, 22:16
  EXPECT_EQ(Queued("default"), 7u);           // 22:14:20 ... 22:16:20, every 20 s
  EXPECT_EQ(CronOf(*a, 0).enqueued + CronOf(*b, 0).enqueued, 3);
  EXPECT_EQ(CronOf(*a, 1).enqueued + CronOf(*b, 1).enqueued, 7);
}

TEST_P(CronSchedulerTest, ANotUniquePushIsLoggedAndCountedLost) {
  config_.cron = {
      Entry("uniq", "* * * * *", R"({"jobtype":"Once","args":[],"custom":{"unique_for":3600}})")};
  auto engine = StartEngine();
  Advance(30s);
  EXPECT_EQ(Queued("default"), 1u);
  CronEntrySnapshot c = CronOf(*engine);
  EXPECT_EQ(c.enqueued, 1);
  EXPECT_EQ(c.lost, 1);
  EXPECT_EQ(FormatRfc3339(*c.last_run), "2023-11-14T22:15:00Z");
}

}  // namespace
}  // namespace bulkhead
