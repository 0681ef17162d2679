// Batches through the engine (BATCH NEW/OPEN/COMMIT/STATUS, members joining at PUSH, callbacks
// through the scheduler, expiry through the purge task) on a memory store with a simulated clock,
// inline and behind DeferredStore. The counting rules themselves are store_test.cc's.
#include "bulkhead/engine/batches.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <regex>

#include "bulkhead/engine/engine.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/simulated_clock.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class BatchesTest : public ::testing::TestWithParam<bool> {
 protected:
  BatchesTest() {
    config_.fetch_block_ms = 50;
    inner_ = std::move(*OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); }));
    if (GetParam()) {
      deferred_ = std::make_unique<DeferredStore>(
          *inner_, [this](std::function<void()> f) { boost::asio::post(io_, std::move(f)); });
    }
    engine_ =
        std::make_unique<Engine>(io_, deferred_ ? *deferred_ : *inner_, config_, clock_, rng_);
  }
  void RunReady() {
    io_.restart();
    io_.poll();
  }
  template <typename T>
  T Await(const std::function<void(std::function<void(T)>)>& call) {
    std::optional<T> out;
    call([&](T v) { out.emplace(std::move(v)); });
    RunReady();
    EXPECT_TRUE(out.has_value()) << "never answered";
    return out ? std::move(*out) : T(Status::Internal("no answer"));
  }
  Result<std::string> New(const std::string& text) {
    return Await<Result<std::string>>(
        [&](auto cb) { engine_->batches().New(text, kDefaultMaxJsonDepth, cb); });
  }
  Result<std::string> Status(const std::string& bid) {
    return Await<Result<std::string>>([&](auto cb) { engine_->batches().GetStatus(bid, cb); });
  }
  bulkhead::Status Commit(const std::string& bid) {
    return Await<bulkhead::Status>([&](auto cb) { engine_->batches().Commit(bid, cb); });
  }
  bulkhead::Status Push(const std::string& text) {
    auto job = ParseJob(text, clock_.Now());
    if (!job.ok()) return job.status();
    return Await<bulkhead::Status>([&](auto cb) { engine_->Push(std::move(*job), cb); });
  }
  // The job FETCH hands out from `queue` now, as JSON, or null.
  json Fetch(const std::string& queue) {
    std::optional<Result<std::optional<std::string>>> out;
    engine_->Fetch({queue}, "", [&](auto r) { out = std::move(r); });
    RunReady();
    if (!out) {
      clock_.Advance(std::chrono::milliseconds(config_.fetch_block_ms));
      RunReady();
    }
    if (!out || !out->ok() || !out->value()) return nullptr;
    return json::parse(***out);
  }
  bulkhead::Status Ack(const std::string& jid) {
    return Await<bulkhead::Status>([&](auto cb) { engine_->Ack(jid, cb); });
  }
  json StatusJson(const std::string& bid) {
    auto s = Status(bid);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? json::parse(*s) : json();
  }
  BatchCounts Counts() {
    std::optional<Result<EngineSnapshot>> out;
    engine_->Snapshot([&](Result<EngineSnapshot> r) { out = std::move(r); });
    RunReady();
    return out && out->ok() ? (*out)->batches : BatchCounts{};
  }

  Config config_;
  SimulatedClock clock_;  // before io_ and engine_: outlives their timers
  DefaultRng rng_{42};
  boost::asio::io_context io_;
  std::unique_ptr<Store> inner_;
  std::unique_ptr<DeferredStore> deferred_;
  std::unique_ptr<Engine> engine_;
};

constexpr char kTwoCallbacks[] =
    R"({"bid":"","description":"d","success":{"jid":"cb-success-0001","jobtype":"S","args":[]},)"
    R"("complete":{"jid":"cb-complete-001","jobtype":"C","args":[],"queue":"cbs"}})";

TEST_P(BatchesTest, BidsAreB14Base64UrlCharacters) {
  for (int i = 0; i < 20; ++i) {
    auto bid = New(kTwoCallbacks);
    ASSERT_TRUE(bid.ok()) << bid.status().ToString();
    EXPECT_TRUE(std::regex_match(*bid, std::regex("b-[A-Za-z0-9_-]{14}"))) << *bid;
  }
  EXPECT_EQ(Counts().created, 20);
}

TEST_P(BatchesTest, StatusIsFaktorysJsonAndCallbacksRunThroughTheScheduler) {
  auto bid = New(kTwoCallbacks);
  ASSERT_TRUE(bid.ok());
  json st = StatusJson(*bid);
  EXPECT_EQ(st, (json{{"bid", *bid},
                      {"description", "d"},
                      {"created_at", "2023-11-14T22:13:20Z"},
                      {"total", 0},
                      {"pending", 0},
                      {"failed", 0},
                      {"complete_st", ""},
                      {"success_st", ""}}))
      << "no parent_bid for a top-level batch";
  ASSERT_TRUE(
      Push(R"({"jid":"member-0001","jobtype":"W","args":[],"custom":{"bid":")" + *bid + R"("}})")
          .ok());
  EXPECT_EQ(
      Push(R"({"jid":"member-0002","jobtype":"W","args":[],"custom":{"bid":"b-none"}})").message(),
      "No such batch b-none");
  ASSERT_TRUE(Commit(*bid).ok());
  json member = Fetch("default");
  ASSERT_EQ(member["jid"], "member-0001");
  ASSERT_TRUE(Ack("member-0001").ok());
  EXPECT_EQ(StatusJson(*bid)["complete_st"], "1");
  EXPECT_TRUE(Fetch("cbs").is_null()) << "due in the scheduled set until the scheduler runs";
  engine_->RunScheduledOnce();
  RunReady();
  json cb = Fetch("cbs");
  EXPECT_EQ(cb["jid"], "cb-complete-001");
  EXPECT_EQ(cb["custom"], (json{{"_bid", *bid}, {"_cb", "complete"}}));
  ASSERT_TRUE(Ack("cb-complete-001").ok());
  engine_->RunScheduledOnce();
  RunReady();
  cb = Fetch("default");
  EXPECT_EQ(cb["jid"], "cb-success-0001");
  EXPECT_EQ(cb["custom"]["_cb"], "success");
  ASSERT_TRUE(Ack("cb-success-0001").ok());
  st = StatusJson(*bid);
  EXPECT_EQ(st["complete_st"], "2");
  EXPECT_EQ(st["success_st"], "2");
  EXPECT_EQ(Counts().succeeded, 1);
}

TEST_P(BatchesTest, AnExpiredReservationCountsAsAFailedRun) {
  auto bid = New(R"({"complete":{"jid":"cb-complete-002","jobtype":"C","args":[]}})");
  ASSERT_TRUE(bid.ok());
  ASSERT_TRUE(Push(R"({"jid":"member-slow1","jobtype":"W","args":[],"reserve_for":60,)"
                   R"("custom":{"bid":")" +
                   *bid + R"("}})")
                  .ok());
  ASSERT_TRUE(Commit(*bid).ok());
  ASSERT_EQ(Fetch("default")["jid"], "member-slow1");
  clock_.Advance(61s);
  engine_->RunReaperOnce();
  RunReady();
  json st = StatusJson(*bid);
  EXPECT_EQ(st["failed"], 1);
  EXPECT_EQ(st["pending"], 1);
  EXPECT_EQ(st["complete_st"], "1") << "it ran once (and failed): complete fires";
}

TEST_P(BatchesTest, ThePurgeTaskDeletesUncommittedBatchesAfterThirtyMinutes) {
  auto bid = New(kTwoCallbacks);
  ASSERT_TRUE(bid.ok());
  clock_.Advance(30min - 1s);
  engine_->RunDeadPurgeOnce();
  RunReady();
  EXPECT_TRUE(Status(*bid).ok());
  EXPECT_EQ(Counts().expired, 0);
  clock_.Advance(1s);
  engine_->RunDeadPurgeOnce();
  RunReady();
  EXPECT_EQ(Status(*bid).status().message(), "No such batch " + *bid);
  EXPECT_EQ(Counts().expired, 1);
}

TEST_P(BatchesTest, BadBatchNewNamesTheProblem) {
  EXPECT_EQ(New("{}").status().message(),
            "BATCH NEW needs a success or complete callback job (neither was given)");
  EXPECT_EQ(New(R"({"bid":"b-x","success":{"jid":"cb-success-0001","jobtype":"S","args":[]}})")
                .status()
                .message(),
            "BATCH NEW: bid must be empty (the server assigns it)");
  EXPECT_EQ(New(R"({"success":{"jid":"short","jobtype":"S","args":[]}})").status().message(),
            "BATCH NEW: invalid success callback: jobs must have a reasonable jid parameter");
  EXPECT_EQ(Counts().created, 0);
}

INSTANTIATE_TEST_SUITE_P(Stores, BatchesTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Deferred" : "Inline"; });

}  // namespace
}  // namespace bulkhead
