#include "bulkhead/engine/retry_policy.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

JobRecord Job(nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json doc = {{"jid", "abcdefgh1"}, {"jobtype", "mail"}, {"args", {1}}};
  doc.update(extra);
  JobRecord j;
  j.jid = "abcdefgh1";
  j.jobtype = "mail";
  j.queue = "default";
  j.state = JobState::kWorking;
  j.payload = doc.dump();
  return j;
}

TEST(RetryPolicyTest, BackoffFormulaWithInjectedRandomness) {
  ScriptedRng rng{0, 29, 7};
  EXPECT_EQ(RetryPolicy::Backoff(0, rng), 15s);                 // 0 + 15 + 0*1
  EXPECT_EQ(RetryPolicy::Backoff(0, rng), 15s + 29s);           // 0 + 15 + 29*1
  EXPECT_EQ(RetryPolicy::Backoff(3, rng), 81s + 15s + 7s * 4);  // 3^4 + 15 + 7*4
}

TEST(RetryPolicyTest, FirstFailureGoesToRetriesWithFailureObject) {
  ScriptedRng rng{5};
  RetryPolicy policy([](const std::string&) { return 25; }, rng, 24h * 180);
  ManualClock clock;
  auto d = policy.Decide(Job(), {"IOError", "boom", {"a.rb:1"}}, clock.Now());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->kind, RetryDecision::Kind::kRetry);
  EXPECT_EQ(d->job.state, JobState::kRetry);
  EXPECT_EQ(d->job.score, ToUnixMicros(clock.Now() + 20s));  // 15 + 5*1
  auto f = nlohmann::json::parse(d->job.payload)["failure"];
  EXPECT_EQ(f["retry_count"], 0);
  EXPECT_EQ(f["remaining"], 25);
  EXPECT_EQ(f["errtype"], "IOError");
  EXPECT_EQ(f["message"], "boom");
  EXPECT_EQ(f["backtrace"][0], "a.rb:1");
  EXPECT_TRUE(f.contains("next_at"));
}

TEST(RetryPolicyTest, CountGrowsAndExhaustionIsDead) {
  ScriptedRng rng;
  RetryPolicy policy([](const std::string&) { return 25; }, rng, 24h * 180);
  ManualClock clock;
  JobRecord j = Job({{"retry", 2}});
  auto d1 = policy.Decide(j, {}, clock.Now());
  EXPECT_EQ(d1->kind, RetryDecision::Kind::kRetry);
  auto d2 = policy.Decide(d1->job, {}, clock.Now());
  EXPECT_EQ(d2->kind, RetryDecision::Kind::kRetry);
  EXPECT_EQ(nlohmann::json::parse(d2->job.payload)["failure"]["retry_count"], 1);
  EXPECT_EQ(d2->job.score, ToUnixMicros(clock.Now() + 16s));  // 1 + 15 + 0
  auto d3 = policy.Decide(d2->job, {}, clock.Now());
  EXPECT_EQ(d3->kind, RetryDecision::Kind::kDead);
  EXPECT_EQ(d3->job.score, ToUnixMicros(clock.Now() + 24h * 180));
  auto f = nlohmann::json::parse(d3->job.payload)["failure"];
  EXPECT_EQ(f["retry_count"], 2);
  EXPECT_EQ(f["errtype"], "unknown");
  EXPECT_EQ(f["message"], "unknown");
}

TEST(RetryPolicyTest, ZeroDiscardsMinusOneIsDeadAtOnce) {
  ScriptedRng rng;
  RetryPolicy policy([](const std::string&) { return 25; }, rng, 24h);
  ManualClock clock;
  EXPECT_EQ(policy.Decide(Job({{"retry", 0}}), {}, clock.Now())->kind,
            RetryDecision::Kind::kDiscard);
  EXPECT_EQ(policy.Decide(Job({{"retry", -1}}), {}, clock.Now())->kind, RetryDecision::Kind::kDead);
}

TEST(RetryPolicyTest, MissingOrNullRetryUsesTheJobtypeDefault) {
  ScriptedRng rng;
  RetryPolicy policy([](const std::string& jt) { return jt == "mail" ? 1 : 25; }, rng, 24h);
  ManualClock clock;
  auto d1 = policy.Decide(Job({{"retry", nullptr}}), {}, clock.Now());
  EXPECT_EQ(d1->kind, RetryDecision::Kind::kRetry);
  EXPECT_EQ(policy.Decide(d1->job, {}, clock.Now())->kind, RetryDecision::Kind::kDead);
}

TEST(RetryPolicyTest, ReportsAreTrimmedToFaktoryLimits) {
  FailureReport f{std::string(150, 'e'), std::string(2000, 'm'),
                  std::vector<std::string>(80, "line")};
  f = RetryPolicy::Normalize(f);
  EXPECT_EQ(f.errtype.size(), 100u);
  EXPECT_EQ(f.message.size(), 1000u);
  EXPECT_EQ(f.backtrace.size(), 50u);
}

TEST(RetryPolicyTest, ErrtypeAndMessageLoseSurroundingWhitespaceAsFaktory) {
  FailureReport f = RetryPolicy::Normalize({" Boom\n", "\t went wrong \r\n", {}});
  EXPECT_EQ(f.errtype, "Boom");
  EXPECT_EQ(f.message, "went wrong");
  f = RetryPolicy::Normalize({"  ", "\n", {}});
  EXPECT_EQ(f.errtype, "unknown") << "blank after trimming is empty";
  EXPECT_EQ(f.message, "unknown");
  f = RetryPolicy::Normalize({" " + std::string(120, 'e'), "a b", {}});
  EXPECT_EQ(f.errtype, std::string(100, 'e')) << "trimmed before it is cut to 100";
  EXPECT_EQ(f.message, "a b") << "inner whitespace stays";
}

}  // namespace
}  // namespace bulkhead
