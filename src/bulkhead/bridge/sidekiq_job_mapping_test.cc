#include "bulkhead/bridge/sidekiq_job_mapping.h"

#include <gtest/gtest.h>

#include "bulkhead/engine/job_parser.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

using nlohmann::json;

json Map(const std::string& text, SidekiqMappingLimits limits = {}) {
  auto r = MapSidekiqJob(text, limits);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : json();
}

std::string Refusal(const std::string& text, SidekiqMappingLimits limits = {}) {
  auto r = MapSidekiqJob(text, limits);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

TEST(SidekiqJobMappingTest, APushedJobBecomesAFaktoryJobOfItsClass) {
  // As Sidekiq 6.4's Sidekiq::Client.push writes it (client.rb normalize_item, atomic_push).
  json job = Map(
      R"({"class":"webpush","args":[{"subscription":{}}],"retry":true,"queue":"bulkhead",)"
      R"("jid":"4f8b7c2e1a9d3b6c5e0f1a2b","created_at":1700000000.25,"enqueued_at":1700000001.5})");
  EXPECT_EQ(job["jobtype"], "webpush");
  EXPECT_EQ(job["jid"], "4f8b7c2e1a9d3b6c5e0f1a2b");
  EXPECT_EQ(job["queue"], "bulkhead");
  EXPECT_EQ(job["args"], json::array({{{"subscription", json::object()}}}));
  EXPECT_FALSE(job.contains("retry")) << "retry: true is the job type's default";
  EXPECT_EQ(job["created_at"], "2023-11-14T22:13:20.25Z");
  json sidekiq = job["custom"]["sidekiq"];
  EXPECT_EQ(sidekiq["class"], "webpush");
  EXPECT_EQ(sidekiq["enqueued_at"], 1700000001.5);
  EXPECT_FALSE(sidekiq.contains("args")) << "not twice";
  // It passes PUSH's checks.
  auto record = ParseJobDocument(job, FromUnixMicros(1'700'000'100'000'000));
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(record->jobtype, "webpush");
  EXPECT_EQ(record->queue, "bulkhead");
}

TEST(SidekiqJobMappingTest, Sidekiq8MillisecondsAreReadAsMilliseconds) {
  json job = Map(R"({"class":"Mailer","args":[],"jid":"0123456789abcdef01234567",)"
                 R"("created_at":1700000000250,"enqueued_at":1700000001500})");
  EXPECT_EQ(job["created_at"], "2023-11-14T22:13:20.25Z");
  EXPECT_EQ(job["queue"], "default") << "Sidekiq's default queue";
}

TEST(SidekiqJobMappingTest, ActiveJobWrappersGiveTheWrappedClass) {
  for (const char* wrapper : {kActiveJobWrapper, kSidekiqActiveJobWrapper}) {
    json job = Map(std::string(R"({"class":")") + wrapper +
                   R"(","wrapped":"NotifyJob","args":[{"job_class":"NotifyJob","arguments":[1]}],)"
                   R"("jid":"0123456789abcdef01234567","queue":"mailers"})");
    EXPECT_EQ(job["jobtype"], "NotifyJob") << wrapper;
    EXPECT_EQ(job["args"][0]["job_class"], "NotifyJob") << "the arguments as ActiveJob wrote them";
    EXPECT_EQ(job["custom"]["sidekiq"]["class"], wrapper);
  }
  EXPECT_EQ(Map(R"({"class":"Plain","wrapped":"Other","args":[]})")["jobtype"], "Plain")
      << "only the wrappers are unwrapped";
}

TEST(SidekiqJobMappingTest, RetryFollowsSidekiqsRules) {
  auto retry = [](const std::string& fields) {
    return FaktoryRetryOf(json::parse("{" + fields + "}"));
  };
  EXPECT_EQ(retry(R"("retry":true)"), std::nullopt);
  EXPECT_EQ(retry(""), std::nullopt);
  EXPECT_EQ(retry(R"("retry":null)"), std::nullopt);
  EXPECT_EQ(retry(R"("retry":false)"), 0) << "not retried, not kept: Faktory's discard";
  EXPECT_EQ(retry(R"("retry":5)"), 5);
  EXPECT_EQ(retry(R"("retry":5,"dead":false)"), 5);
  EXPECT_EQ(retry(R"("retry":0)"), -1) << "Sidekiq sends it to the morgue at once";
  EXPECT_EQ(retry(R"("retry":0,"dead":false)"), 0) << "...unless dead: false";
  EXPECT_EQ(retry(R"("retry":-3)"), -1);
  EXPECT_EQ(retry(R"("retry":"5")"), std::nullopt) << "retry_attempts_from: not an Integer";
  EXPECT_EQ(Map(R"({"class":"A","args":[],"retry":3})")["retry"], 3);
}

TEST(SidekiqJobMappingTest, WhatCannotBeTakenIsRefusedWithItsReason) {
  EXPECT_NE(Refusal("not json").find("not JSON"), std::string::npos);
  EXPECT_EQ(Refusal("[1,2]"), "the job is not a JSON object");
  EXPECT_EQ(Refusal(R"({"args":[]})"), "the job has no class");
  EXPECT_EQ(Refusal(R"({"class":"","args":[]})"), "class must be a non-empty string");
  EXPECT_EQ(Refusal(R"({"class":7,"args":[]})"), "class must be a non-empty string");
  EXPECT_EQ(Refusal(R"({"class":"Bad\u0007Class","args":[]})"), "class holds a control character");
  EXPECT_EQ(Refusal(R"({"class":"Bad\nClass","args":[]})"), "class holds a control character");
  EXPECT_EQ(Refusal(std::string(R"({"class":")") + kActiveJobWrapper +
                    R"(","wrapped":"A\tB","args":[]})"),
            "wrapped holds a control character");
  EXPECT_EQ(Refusal(R"({"class":"A","args":{}})"), "args must be an array");
  EXPECT_EQ(Refusal(R"({"class":"A"})"), "args must be an array");
  std::string big = R"({"class":"A","args":[")" + std::string(2000, 'x') + R"("]})";
  EXPECT_EQ(Refusal(big, {.max_job_bytes = 1024}),
            "the job is " + std::to_string(big.size()) +
                " bytes; at most 1024 are taken (sidekiq.max_job_bytes)");
  std::string deep(100, '[');
  EXPECT_NE(Refusal(R"({"class":"A","args":)" + deep, {.max_json_depth = 8}).find("nested"),
            std::string::npos);
}

}  // namespace
}  // namespace bulkhead
