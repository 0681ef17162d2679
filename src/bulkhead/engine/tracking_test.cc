// Job tracking through the engine (TRACK SET/GET, jobs followed from PUSH, reserve_until, expiry
// through the purge task) on a memory store with a simulated clock, inline and behind
// DeferredStore. The record rules themselves are store_test.cc's.
#include "bulkhead/engine/tracking.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "bulkhead/engine/engine.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/store/testing/deferred_store.h"
#include "bulkhead/util/simulated_clock.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class TrackingTest : public ::testing::TestWithParam<bool> {
 protected:
  TrackingTest() {
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
  Status Push(const std::string& text) {
    auto job = ParseJob(text, clock_.Now());
    if (!job.ok()) return job.status();
    std::optional<Status> out;
    engine_->Push(std::move(*job), [&](Status s) { out = s; });
    RunReady();
    return out.value_or(Status::Internal("no answer"));
  }
  Status Set(const std::string& text) {
    std::optional<Status> out;
    engine_->tracking().Set(text, kDefaultMaxJsonDepth, [&](Status s) { out = s; });
    RunReady();
    return out.value_or(Status::Internal("no answer"));
  }
  json Get(const std::string& jid) {
    std::optional<Result<std::string>> out;
    engine_->tracking().Get(jid, [&](Result<std::string> r) { out = std::move(r); });
    RunReady();
    EXPECT_TRUE(out && out->ok());
    return out && out->ok() ? json::parse(**out) : json();
  }
  std::string FetchJid() {
    std::optional<Result<std::optional<std::string>>> out;
    engine_->Fetch({"default"}, "", [&](auto r) { out = std::move(r); });
    RunReady();
    if (!out || !out->ok() || !out->value()) return "";
    return json::parse(***out)["jid"];
  }
  int64_t ReservedUntil(const std::string& jid) {
    RunReady();
    int64_t until = 0;
    inner_->GetWorking(jid, [&](Result<std::optional<JobRecord>> r) {
      if (r.ok() && r->has_value()) until = (*r)->score;
    });
    return until;
  }

  Config config_;
  SimulatedClock clock_;  // before io_ and engine_: outlives their timers
  ScriptedRng rng_;
  boost::asio::io_context io_;
  std::unique_ptr<Store> inner_;
  std::unique_ptr<DeferredStore> deferred_;
  std::unique_ptr<Engine> engine_;
};

TEST_P(TrackingTest, AJobPushedWithTrackIsFollowedAndReserveUntilOnlyExtends) {
  ASSERT_TRUE(Push(R"({"jid":"tracked-0001","jobtype":"R","args":[],"reserve_for":60,)"
                   R"("custom":{"track":1}})")
                  .ok());
  EXPECT_EQ(Get("tracked-0001"), (json{{"jid", "tracked-0001"},
                                       {"state", "enqueued"},
                                       {"updated_at", FormatRfc3339(clock_.Now())}}));
  ASSERT_EQ(FetchJid(), "tracked-0001");
  EXPECT_EQ(Get("tracked-0001")["state"], "working");
  int64_t reserved = ReservedUntil("tracked-0001");
  EXPECT_EQ(reserved, ToUnixMicros(clock_.Now() + 60s));
  std::string later = FormatRfc3339(clock_.Now() + 2h);
  ASSERT_TRUE(
      Set(R"({"jid":"tracked-0001","percent":40,"reserve_until":")" + later + R"("})").ok());
  EXPECT_EQ(ReservedUntil("tracked-0001"), ToUnixMicros(clock_.Now() + 2h));
  std::string sooner = FormatRfc3339(clock_.Now() + 10s);
  ASSERT_TRUE(Set(R"({"jid":"tracked-0001","reserve_until":")" + sooner + R"("})").ok());
  EXPECT_EQ(ReservedUntil("tracked-0001"), ToUnixMicros(clock_.Now() + 2h)) << "never shortens";
  EXPECT_EQ(Get("tracked-0001")["percent"], 40);
  std::optional<Status> acked;
  engine_->Ack("tracked-0001", [&](Status s) { acked = s; });
  RunReady();
  EXPECT_EQ(Get("tracked-0001")["state"], "success");
}

TEST_P(TrackingTest, UntrackedJobsAreUnknownAndThePurgeTaskDeletesOldRecords) {
  ASSERT_TRUE(Push(R"({"jid":"plain-00001","jobtype":"R","args":[]})").ok());
  EXPECT_EQ(Get("plain-00001"),
            (json{{"jid", "plain-00001"}, {"state", "unknown"}, {"updated_at", ""}}));
  ASSERT_TRUE(Set(R"({"jid":"plain-00001","desc":"working on it"})").ok());
  EXPECT_EQ(Get("plain-00001")["desc"], "working on it");
  EXPECT_EQ(Get("plain-00001")["state"], "unknown");
  clock_.Advance(30min);
  engine_->RunDeadPurgeOnce();
  RunReady();
  EXPECT_EQ(Get("plain-00001")["updated_at"], "");
}

TEST_P(TrackingTest, BadTrackSetNamesTheField) {
  EXPECT_EQ(Set(R"({"percent":1})").message(), "TRACK SET needs a jid");
  EXPECT_EQ(Set(R"({"jid":"j","percent":-1})").message(),
            "TRACK SET: percent must be an integer from 0 to 100");
  EXPECT_EQ(Set(R"({"jid":"j","reserve_until":")" + FormatRfc3339(clock_.Now() + 25h) + R"("})")
                .message(),
            "TRACK SET: reserve_until is more than a day ahead (jobs cannot be reserved for more "
            "than one day)");
}

INSTANTIATE_TEST_SUITE_P(Stores, TrackingTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Deferred" : "Inline"; });

}  // namespace
}  // namespace bulkhead
