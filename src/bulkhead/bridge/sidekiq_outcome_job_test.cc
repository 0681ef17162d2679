#include "bulkhead/bridge/sidekiq_outcome_job.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

using nlohmann::json;

OutcomeRecord Gone() {
  OutcomeRecord r;
  r.event = kEventWebPushGone;
  r.at = FromUnixMicros(1'700'000'000'412'000);
  r.host = "push.example";
  r.status = 410;
  r.reason = "http 410";
  r.jid = "6a1c2f0e9b3d4c57";
  r.jobtype = "webpush";
  r.url = "https://push.example/sub/1";
  r.context = {{"web_push_subscription_id", 42}};
  return r;
}

TEST(SidekiqOutcomeJobTest, AnOutcomeIsASidekiqJobWithTheOutcomeObject) {
  TimePoint now = FromUnixMicros(1'700'000'001'250'000);
  json job = json::parse(SidekiqOutcomeJob(Gone(), "bh-gone-6a1c2f0e9b3d4c57", now, {}));
  EXPECT_EQ(job["class"], "Bulkhead::WebpushGone");
  EXPECT_EQ(job["queue"], "default");
  EXPECT_EQ(job["retry"], true);
  ASSERT_EQ(job["args"].size(), 1u);
  EXPECT_EQ(job["args"][0], ToJson(Gone())) << "exactly the outcome object";
  EXPECT_EQ(job["args"][0]["context"]["web_push_subscription_id"], 42);
  EXPECT_EQ(job["jid"], SidekiqJidFor("bh-gone-6a1c2f0e9b3d4c57"));
  EXPECT_EQ(job["jid"].get<std::string>().size(), 24u);
  EXPECT_EQ(job["jid"].get<std::string>().find_first_not_of("0123456789abcdef"), std::string::npos);
  // Sidekiq 6 and 7 (client.rb: Time.now.to_f): float seconds.
  EXPECT_TRUE(job["created_at"].is_number_float());
  EXPECT_EQ(job["created_at"].dump(), "1700000001.25");
  EXPECT_EQ(job["enqueued_at"], job["created_at"]);
}

TEST(SidekiqOutcomeJobTest, Sidekiq8FormAndConfiguredNames) {
  SidekiqOutcomeJobOptions options{.queue = "push",
                                   .classes = {.webpush_gone = "App::PushGone"},
                                   .format = SidekiqTimeFormat::kIntegerMilliseconds};
  TimePoint now = FromUnixMicros(1'700'000'001'250'000);
  json job = json::parse(SidekiqOutcomeJob(Gone(), "bh-gone-x", now, options));
  EXPECT_EQ(job["class"], "App::PushGone");
  EXPECT_EQ(job["queue"], "push");
  EXPECT_TRUE(job["created_at"].is_number_integer());
  EXPECT_EQ(job["created_at"].dump(), "1700000001250");
  EXPECT_EQ(job["enqueued_at"].dump(), "1700000001250");
}

TEST(SidekiqOutcomeJobTest, EachEventHasItsClassAndTheSameEventTheSameJid) {
  SidekiqOutcomeClasses classes;
  EXPECT_EQ(classes.For(kEventDeliveryDead), "Bulkhead::DeliveryDead");
  EXPECT_EQ(classes.For(kEventHostUnavailable), "Bulkhead::HostUnavailable");
  EXPECT_EQ(classes.For(kEventHostAvailable), "Bulkhead::HostAvailable");
  EXPECT_EQ(classes.For("token_gone"), "Bulkhead::TokenGone") << "an event of a later version";
  EXPECT_EQ(SidekiqJidFor("bh-dead-1"), SidekiqJidFor("bh-dead-1"));
  EXPECT_NE(SidekiqJidFor("bh-dead-1"), SidekiqJidFor("bh-dead-2"));
}

}  // namespace
}  // namespace bulkhead
