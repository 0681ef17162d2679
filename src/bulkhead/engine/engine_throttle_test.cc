// Queue throttling in the engine, on a memory store (inline and deferred) with a simulated
// clock: FETCH skips a full throttled queue, and a FETCH waiting only for a slot is answered when
// one comes back (ACK, FAIL, the reaper, the timeout), at that moment.
#include <gtest/gtest.h>

#include <boost/asio/post.hpp>

#include "bulkhead/engine/engine.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/simulated_clock.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using FetchResult = std::optional<Result<std::optional<std::string>>>;

class EngineThrottleTest : public ::testing::TestWithParam<bool> {
 protected:
  EngineThrottleTest() {
    // Long enough that no FETCH here ends by its block time: each is answered by a slot.
    config_.fetch_block_ms = 3'600'000;
    config_.throttles["thr"] =
        ThrottleConfig{.per_worker = false, .limit = 2, .timeout_seconds = 30};
    config_.throttles["bulk"] =
        ThrottleConfig{.per_worker = true, .limit = 1, .timeout_seconds = 30};
    config_.throttles["slow"] =
        ThrottleConfig{.per_worker = false, .limit = 1, .timeout_seconds = 3600};
    inner_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    if (GetParam()) {
      deferred_ = std::make_unique<DeferredStore>(
          *inner_, [this](std::function<void()> f) { boost::asio::post(io_, std::move(f)); });
    }
    engine_ =
        std::make_unique<Engine>(io_, deferred_ ? *deferred_ : *inner_, config_, clock_, rng_);
  }
  ~EngineThrottleTest() override { engine_.reset(); }

  void Push(const std::string& jid, const std::string& queue) {
    auto job = ParseJob(R"({"jid":")" + jid + R"(","jobtype":"t","args":[],"queue":")" + queue +
                            R"(","reserve_for":60})",
                        clock_.Now());
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    std::optional<Status> out;
    engine_->Push(std::move(*job), [&](Status s) { out = s; });
    RunReady();
    ASSERT_TRUE(out && out->ok());
  }
  // Starts a FETCH by `wid`; its answer lands in `out`.
  void StartFetch(std::vector<std::string> queues, FetchResult& out,
                  const std::string& wid = "wid-1") {
    engine_->Fetch(queues, wid,
                   [&out](Result<std::optional<std::string>> r) { out = std::move(r); });
    RunReady();
  }
  // The jid a finished FETCH got ("" for none; "(waiting)" while it waits).
  static std::string JidOf(const FetchResult& out) {
    if (!out) return "(waiting)";
    if (!out->ok() || !out->value()) return "";
    auto at = (*out)->value().find("\"jid\":\"");
    return (*out)->value().substr(at + 7, (*out)->value().find('"', at + 7) - at - 7);
  }
  std::string FetchNow(std::vector<std::string> queues, const std::string& wid = "wid-1") {
    FetchResult out;
    StartFetch(std::move(queues), out, wid);
    return JidOf(out);
  }
  Status Ack(const std::string& jid) {
    std::optional<Status> out;
    engine_->Ack(jid, [&](Status s) { out = s; });
    RunReady();
    return out.value_or(Status::Internal("no answer"));
  }
  std::vector<ThrottleSnapshot> Throttles() {
    std::optional<Result<EngineSnapshot>> out;
    engine_->Snapshot([&](Result<EngineSnapshot> r) { out = std::move(r); });
    RunReady();
    EXPECT_TRUE(out && out->ok());
    return out && out->ok() ? (*out)->throttles : std::vector<ThrottleSnapshot>{};
  }
  void RunReady() {
    io_.restart();
    io_.poll();
  }
  // Fills thr's two slots with thr-00000 and thr-00001.
  void FillThr() {
    for (int i = 0; i < 4; ++i) Push("thr-0000" + std::to_string(i), "thr");
    ASSERT_EQ(FetchNow({"thr"}), "thr-00000");
    ASSERT_EQ(FetchNow({"thr"}), "thr-00001");
  }

  Config config_;
  SimulatedClock clock_;
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> inner_;
  std::unique_ptr<DeferredStore> deferred_;
  std::unique_ptr<Engine> engine_;
};

INSTANTIATE_TEST_SUITE_P(Answers, EngineThrottleTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Deferred" : "Inline"; });

TEST_P(EngineThrottleTest, AFullThrottledQueueIsSkippedForTheNextListedQueue) {
  FillThr();
  Push("other-0001", "other");
  EXPECT_EQ(FetchNow({"thr", "other"}), "other-0001");
  FetchResult waiting;
  StartFetch({"thr", "other"}, waiting);
  EXPECT_EQ(JidOf(waiting), "(waiting)") << "both empty as far as this FETCH may see";
  auto throttles = Throttles();
  ASSERT_EQ(throttles.size(), 3u);
  EXPECT_EQ(throttles[2].queue, "thr");
  EXPECT_EQ(throttles[2].in_use, 2u);
  EXPECT_EQ(throttles[2].limit, 2);
  EXPECT_EQ(throttles[2].timeout_seconds, 30);
  EXPECT_FALSE(throttles[2].per_worker);
  Push("other-0002", "other");
  EXPECT_EQ(JidOf(waiting), "other-0002");
}

TEST_P(EngineThrottleTest, AWaitingFetchGetsTheSlotAnAckFrees) {
  FillThr();
  FetchResult waiting;
  StartFetch({"thr"}, waiting);
  EXPECT_EQ(JidOf(waiting), "(waiting)");
  ASSERT_TRUE(Ack("thr-00000").ok());
  EXPECT_EQ(JidOf(waiting), "thr-00002") << "at once, the clock unmoved";
}

TEST_P(EngineThrottleTest, AWaitingFetchGetsTheSlotAFailFrees) {
  FillThr();
  FetchResult waiting;
  StartFetch({"thr"}, waiting);
  std::optional<Status> failed;
  engine_->Fail("thr-00001", FailureReport{.errtype = "E", .message = "m"},
                [&](Status s) { failed = s; });
  RunReady();
  ASSERT_TRUE(failed && failed->ok());
  EXPECT_EQ(JidOf(waiting), "thr-00002");
}

TEST_P(EngineThrottleTest, AWaitingFetchGetsTheSlotTheReaperFrees) {
  // A reservation (60 s) shorter than the throttle's timeout (1 h): the reaper ends it first.
  Push("slow-00000", "slow");
  Push("slow-00001", "slow");
  EXPECT_EQ(FetchNow({"slow"}), "slow-00000");
  FetchResult waiting;
  StartFetch({"slow"}, waiting);
  clock_.Advance(60s);
  RunReady();
  EXPECT_EQ(JidOf(waiting), "(waiting)");
  engine_->RunReaperOnce();
  RunReady();
  EXPECT_EQ(JidOf(waiting), "slow-00001");
}

TEST_P(EngineThrottleTest, TheTimeoutFreesASlotExactlyThenAndWakesTheWaitingFetch) {
  FillThr();
  FetchResult waiting;
  StartFetch({"thr"}, waiting);
  clock_.Advance(30s - 1ms);
  RunReady();
  EXPECT_EQ(JidOf(waiting), "(waiting)") << "1 ms before the timeout";
  clock_.Advance(1ms);
  RunReady();
  EXPECT_EQ(JidOf(waiting), "thr-00002") << "at the timeout, both jobs still reserved";
  EXPECT_EQ(Throttles()[2].in_use, 1u);
}

TEST_P(EngineThrottleTest, PerWorkerThrottlesLimitEachWid) {
  for (int i = 0; i < 3; ++i) Push("bulk-0000" + std::to_string(i), "bulk");
  EXPECT_EQ(FetchNow({"bulk"}, "wid-a"), "bulk-00000");
  FetchResult a_waiting;
  StartFetch({"bulk"}, a_waiting, "wid-a");
  EXPECT_EQ(JidOf(a_waiting), "(waiting)");
  EXPECT_EQ(FetchNow({"bulk"}, "wid-b"), "bulk-00001") << "another worker has its own slot";
  auto bulk = Throttles()[0];
  EXPECT_EQ(bulk.queue, "bulk");
  EXPECT_TRUE(bulk.per_worker);
  EXPECT_EQ(bulk.in_use, 2u);
  EXPECT_EQ(bulk.max_per_worker, 1u);
  ASSERT_TRUE(Ack("bulk-00000").ok());
  EXPECT_EQ(JidOf(a_waiting), "bulk-00002");
}

}  // namespace
}  // namespace bulkhead
