#include "bulkhead/engine/job_parser.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

const TimePoint kNow = FromUnixMicros(1'700'000'000'000'000);

std::string ErrorOf(std::string_view line) {
  auto r = ParseJob(line, kNow);
  return r.ok() ? "OK" : r.status().message();
}

TEST(JobParserTest, ReferenceServerErrorTexts) {
  EXPECT_EQ(ErrorOf(R"({"jobtype":"a","args":[]})"), "jobs must have a reasonable jid parameter");
  EXPECT_EQ(ErrorOf(R"({"jid":"short","jobtype":"a","args":[]})"),
            "jobs must have a reasonable jid parameter");
  EXPECT_EQ(ErrorOf(R"({"jid":"12345678","args":[]})"), "jobs must have a jobtype parameter");
  EXPECT_EQ(ErrorOf(R"({"jid":"12345678","jobtype":"","args":[]})"),
            "jobs must have a jobtype parameter");
  EXPECT_EQ(ErrorOf(R"({"jid":"12345678","jobtype":"a"})"), "jobs must have an args parameter");
  EXPECT_EQ(ErrorOf(R"({"jid":"12345678","jobtype":"a","args":null})"),
            "jobs must have an args parameter");
  EXPECT_EQ(ErrorOf(R"({"jid":"12345678","jobtype":"a","args":[],"reserve_for":86401})"),
            "jobs cannot be reserved for more than one day");
  EXPECT_EQ(ErrorOf(R"({"jid":"12345678","jobtype":"a","args":[],"queue":"a b"})"),
            "queue names must match \\A[a-zA-Z0-9._-]+\\z");
  EXPECT_EQ(ErrorOf(R"({"jid":"12345678","jobtype":"a","args":[],"at":"soon"})"),
            "invalid timestamp for 'at': \"soon\": expected YYYY-MM-DD");
  EXPECT_EQ(ErrorOf("[1,2]"), "job must be a JSON object");
  EXPECT_EQ(ErrorOf("{nope").rfind("invalid JSON: parse error at line 1, column ", 0), 0u)
      << ErrorOf("{nope");
}

TEST(JobParserTest, HostileJsonIsAnErrorNotACrash) {
  EXPECT_NE(ErrorOf(R"({"jid":"12345678","jobtype":"a","args":[1e400]})")
                .find("number overflow parsing '1e400'"),
            std::string::npos);
  std::string deep = R"({"jid":"12345678","jobtype":"a","args":)" + std::string(75000, '[') +
                     std::string(75000, ']') + "}";
  EXPECT_EQ(ErrorOf(deep), "invalid JSON: nested deeper than 64 levels (max_json_depth)");
  EXPECT_EQ(ErrorOf(R"({"jid":"12345678","jobtype":"a","args":[],"reserve_for":1e300})"),
            "jobs cannot be reserved for more than one day");
  auto deeper_allowed =
      ParseJob(R"({"jid":"12345678","jobtype":"a","args":[[[[[[[[[[1]]]]]]]]]]})", kNow, 11);
  EXPECT_TRUE(deeper_allowed.ok());
  EXPECT_FALSE(
      ParseJob(R"({"jid":"12345678","jobtype":"a","args":[[[[[[[[[[1]]]]]]]]]]})", kNow, 10).ok());
}

TEST(JobParserTest, DefaultsAndNormalisation) {
  auto r = ParseJob(R"({"jid":"12345678","jobtype":"a","args":[1],"priority":5})", kNow);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->queue, "default");
  EXPECT_EQ(r->state, JobState::kQueued);
  EXPECT_EQ(r->reserve_for_s, 1800);
  auto doc = nlohmann::json::parse(r->payload);
  EXPECT_EQ(doc["queue"], "default");
  EXPECT_EQ(doc["created_at"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(doc["enqueued_at"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(doc["priority"], 5) << "unknown fields are kept";
}

TEST(JobParserTest, MissingOrNullRetryIsFilledWithTheJobtypeDefault) {
  RetryDefault retry_for = [](const std::string& jobtype) { return jobtype == "webpush" ? 5 : 25; };
  for (const char* line : {R"({"jid":"12345678","jobtype":"a","args":[]})",
                           R"({"jid":"12345678","jobtype":"a","args":[],"retry":null})"}) {
    auto r = ParseJob(line, kNow, kDefaultMaxJsonDepth, retry_for);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(nlohmann::json::parse(r->payload)["retry"], 25) << line;
  }
  auto typed = ParseJob(R"({"jid":"12345678","jobtype":"webpush","args":[]})", kNow,
                        kDefaultMaxJsonDepth, retry_for);
  EXPECT_EQ(nlohmann::json::parse(typed->payload)["retry"], 5) << "the jobtype's own default";
  auto zero = ParseJob(R"({"jid":"12345678","jobtype":"a","args":[],"retry":0})", kNow,
                       kDefaultMaxJsonDepth, retry_for);
  EXPECT_EQ(nlohmann::json::parse(zero->payload)["retry"], 0) << "a given retry is kept";
  auto scheduled = ParseJobDocument(
      nlohmann::json::parse(
          R"({"jid":"12345678","jobtype":"a","args":[],"at":"2030-01-01T00:00:00Z"})"),
      kNow, retry_for);
  EXPECT_EQ(nlohmann::json::parse(scheduled->payload)["retry"], 25) << "scheduled jobs too";
  auto without = ParseJob(R"({"jid":"12345678","jobtype":"a","args":[]})", kNow);
  EXPECT_FALSE(nlohmann::json::parse(without->payload).contains("retry"))
      << "no default given: left to the retry policy";
}

TEST(JobParserTest, EmptyOrNullAtIsDroppedNotEchoed) {
  for (const char* line : {R"({"jid":"12345678","jobtype":"a","args":[],"at":""})",
                           R"({"jid":"12345678","jobtype":"a","args":[],"at":null})"}) {
    auto r = ParseJob(line, kNow);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->state, JobState::kQueued);
    auto doc = nlohmann::json::parse(r->payload);
    EXPECT_FALSE(doc.contains("at")) << line;
    EXPECT_TRUE(doc.contains("enqueued_at"));
  }
  auto past =
      ParseJob(R"({"jid":"12345678","jobtype":"a","args":[],"at":"2020-01-01T00:00:00Z"})", kNow);
  EXPECT_EQ(nlohmann::json::parse(past->payload)["at"], "2020-01-01T00:00:00Z")
      << "a real time is kept";
}

TEST(JobParserTest, AJobThatOnlyGainsMembersKeepsItsOwnText) {
  std::string sent = R"( {"jid":"12345678", "jobtype":"a","args":[1.50,"x,}"],"n":1e2} )";
  auto r = ParseJob(sent, kNow, kDefaultMaxJsonDepth, [](const std::string&) { return 7; });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(
      r->payload,
      R"({"jid":"12345678", "jobtype":"a","args":[1.50,"x,}"],"n":1e2,"queue":"default",)"
      R"("retry":7,"created_at":"2023-11-14T22:13:20Z","enqueued_at":"2023-11-14T22:13:20Z"})");
  auto full = R"({"jid":"12345678","jobtype":"a","args":[],"queue":"q","retry":1,)"
              R"("created_at":"2020-01-01T00:00:00Z","at":"2020-01-01T00:00:00Z"})";
  EXPECT_EQ(ParseJob(full, kNow)->payload,
            std::string(full).substr(0, std::string(full).size() - 1) +
                R"(,"enqueued_at":"2023-11-14T22:13:20Z"})");
}

TEST(JobParserTest, AJobWhoseMembersChangeIsWrittenOutAgain) {
  auto written = [](std::string_view sent) {
    auto r = ParseJob(sent, kNow);
    EXPECT_TRUE(r.ok()) << sent << ": " << r.status().ToString();
    return r.ok() ? r->payload : std::string();
  };
  // A member replaced or removed: the document as edited, keys sorted.
  EXPECT_EQ(written(R"({"jid":"12345678","jobtype":"a","args":[],"queue":null,)"
                    R"("created_at":"x","enqueued_at":"old"})"),
            R"({"args":[],"created_at":"x","enqueued_at":"2023-11-14T22:13:20Z","jid":"12345678",)"
            R"("jobtype":"a","queue":"default"})");
  EXPECT_EQ(nlohmann::json::parse(written(R"({"jid":"12345678","jobtype":"a","args":[],"at":""})"))
                .contains("at"),
            false);
  // A key given twice: stored once, with the value the job was read with (the last).
  EXPECT_EQ(written(R"({"jid":"12345678","jobtype":"a","args":[],"queue":"q1","queue":"q2",)"
                    R"("created_at":"x"})"),
            R"({"args":[],"created_at":"x","enqueued_at":"2023-11-14T22:13:20Z","jid":"12345678",)"
            R"("jobtype":"a","queue":"q2"})");
  // A key written with a backslash-u escape: written out plainly, so that the payload screens
  // see the key as "bid".
  EXPECT_NE(written(R"({"jid":"12345678","jobtype":"a","args":[],"custom":{"\u0062id":"b"}})")
                .find(R"("custom":{"bid":"b"})"),
            std::string::npos);
  // No text given (a document the server built): written out.
  auto built = ParseJobDocument(
      nlohmann::json::parse(R"({"jobtype":"a","jid":"12345678","args":[],"created_at":"x"})"),
      kNow);
  EXPECT_EQ(built->payload, R"({"args":[],"created_at":"x","enqueued_at":"2023-11-14T22:13:20Z",)"
                            R"("jid":"12345678","jobtype":"a","queue":"default"})");
}

TEST(JobParserTest, ReserveForIsClampedUpTo60) {
  auto r = ParseJob(R"({"jid":"12345678","jobtype":"a","args":[],"reserve_for":5})", kNow);
  EXPECT_EQ(r->reserve_for_s, 60);
}

TEST(JobParserTest, FutureAtIsScheduledPastAtIsQueued) {
  auto future =
      ParseJob(R"({"jid":"12345678","jobtype":"a","args":[],"at":"2023-11-14T22:13:21.5Z"})", kNow);
  EXPECT_EQ(future->state, JobState::kScheduled);
  EXPECT_EQ(future->score, ToUnixMicros(kNow + 1500ms));
  EXPECT_FALSE(nlohmann::json::parse(future->payload).contains("enqueued_at"));
  auto past =
      ParseJob(R"({"jid":"12345678","jobtype":"a","args":[],"at":"2020-01-01T00:00:00Z"})", kNow);
  EXPECT_EQ(past->state, JobState::kQueued);
}

// Without a "custom" object none of the options kept there applies: PUSH skips its screens.
TEST(JobParserTest, AJobWithoutACustomObjectIsMarkedSo) {
  auto no_custom = [](std::string_view extra) {
    auto job = ParseJob(
        std::string(R"({"jid":"12345678","jobtype":"a","args":[])") + std::string(extra) + "}",
        kNow);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() && job->no_custom;
  };
  EXPECT_TRUE(no_custom(""));
  EXPECT_TRUE(no_custom(R"(,"custom":null)"));
  EXPECT_TRUE(no_custom(R"(,"custom":"bid")"));
  EXPECT_TRUE(no_custom(R"(,"args2":{"custom":{"bid":"b-1"}})"));
  EXPECT_FALSE(no_custom(R"(,"custom":{})"));
  EXPECT_FALSE(no_custom(R"(,"custom":{"bid":"b-1"})"));
  EXPECT_FALSE(JobRecord{}.no_custom);  // a record built elsewhere: not known
}

}  // namespace
}  // namespace bulkhead
