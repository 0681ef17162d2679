#include "bulkhead/store/redis_job_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

JobRecord Job() {
  JobRecord j;
  j.jid = "codec0001";
  j.queue = "default";
  j.jobtype = "Mail|100%\nnew";
  j.payload = R"({"args":[1],"enqueued_at":"2026-12-01T10:00:00Z","jid":"codec0001"})";
  j.state = JobState::kWorking;
  j.score = 1'796'122'913'000'000;
  j.enqueued_us = 1'796'119'200'000'000;
  j.reserve_for_s = 600;
  return j;
}

TEST(RedisJobCodecTest, RoundTripsEveryField) {
  JobRecord j = Job();
  std::string v = EncodeRedisJob(j, "node-a");
  EXPECT_TRUE(v.starts_with("4|600|1796119200000000|node-a|default|Mail|100%25%0Anew\n"));
  auto back = DecodeRedisJob(j.jid, v, j.score);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->jid, j.jid);
  EXPECT_EQ(back->queue, j.queue);
  EXPECT_EQ(back->jobtype, j.jobtype);
  EXPECT_EQ(back->payload, j.payload);
  EXPECT_EQ(back->state, j.state);
  EXPECT_EQ(back->score, j.score);
  EXPECT_EQ(back->enqueued_us, j.enqueued_us);
  EXPECT_EQ(back->reserve_for_s, j.reserve_for_s);
}

TEST(RedisJobCodecTest, OnlyWorkingJobsNameTheirNode) {
  JobRecord j = Job();
  j.state = JobState::kRetry;
  EXPECT_TRUE(EncodeRedisJob(j, "node-a").starts_with("2|600|1796119200000000||default|"));
}

TEST(RedisJobCodecTest, AStaleEnqueuedAtIsRewrittenFromTheHeader) {
  JobRecord j = Job();
  std::string v = EncodeRedisJob(j);
  // What the scheduler's script writes when it moves the job into its queue.
  v.replace(v.find("1796119200000000"), 16, "+1796122913000000");
  auto back = DecodeRedisJob(j.jid, v, 0);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->enqueued_us, 1'796'122'913'000'000);
  EXPECT_EQ(nlohmann::json::parse(back->payload)["enqueued_at"], "2026-12-01T11:01:53Z");
}

TEST(RedisJobCodecTest, HeadersAloneDecodeWithoutPayload) {
  JobRecord j = Job();
  std::string v = EncodeRedisJob(j, "n");
  auto back = DecodeRedisJobHeader(j.jid, v.substr(0, v.find('\n')), 7);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->jobtype, j.jobtype);
  EXPECT_TRUE(back->payload.empty());
  EXPECT_EQ(back->score, 7);
}

TEST(RedisJobCodecTest, DamagedValuesNameTheJobAndTheProblem) {
  EXPECT_EQ(DecodeRedisJob("x1", "no newline", 0).status().message(), "stored job x1: no header");
  EXPECT_EQ(DecodeRedisJob("x2", "9|1|0||q|t\n{}", 0).status().message(),
            "stored job x2: unknown state \"9\"");
  EXPECT_EQ(DecodeRedisJob("x3", "0|1|0|q\n{}", 0).status().message(),
            "stored job x3: header has fewer than 6 fields");
  EXPECT_EQ(DecodeRedisJob("x4", "0|ab|0||q|t\n{}", 0).status().message(),
            "stored job x4: reserve_for is not a number");
}

}  // namespace
}  // namespace bulkhead
