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

// A job as the server writes it (nlohmann::json: keys sorted, compact).
JobRecord ServerJob() {
  JobRecord j;
  j.jid = "bench-0000000001";
  j.queue = "bench";
  j.jobtype = "noop";
  j.enqueued_us = 1'796'119'200'123'400;
  j.payload = R"({"args":[{"jid":"inner","queue":"x"}],"created_at":"2026-12-01T10:00:00.1234Z",)"
              R"("custom":{"a":[1,2]},"enqueued_at":"2026-12-01T10:00:00.1234Z",)"
              R"("jid":"bench-0000000001","jobtype":"noop","queue":"bench","retry":25})";
  return j;
}

TEST(RedisJobCodecTest, StoresWithoutWhatTheHeaderAndTheFieldHoldAndGivesItBack) {
  JobRecord j = ServerJob();
  std::string v = EncodeRedisJob(j);
  std::string stored = v.substr(v.find('\n') + 1);
  EXPECT_TRUE(stored.starts_with("~CEJTQ")) << stored;
  // The members of the nested objects stay.
  EXPECT_NE(stored.find(R"({"jid":"inner","queue":"x"})"), std::string::npos) << stored;
  EXPECT_EQ(stored.find("bench-0000000001"), std::string::npos) << stored;
  EXPECT_LT(v.size(), j.payload.size()) << v;
  auto back = DecodeRedisJob(j.jid, v, 0);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->payload, j.payload);
}

// A jid or jobtype that JSON writes with escapes, or beyond ASCII, is left out and given back
// byte for byte too (the plain-ASCII shortcut must not change what is written).
TEST(RedisJobCodecTest, MembersWrittenWithEscapesOrBeyondAsciiComeBackExactly) {
  for (std::string jobtype : {"Say \"hi\"\\now", "R\xc3\xa9sum\xc3\xa9", "tab\there", "del\x7f"}) {
    JobRecord j = ServerJob();
    j.jid = "jid-" + jobtype;
    j.jobtype = jobtype;
    auto doc = nlohmann::json::parse(j.payload);
    doc["jid"] = j.jid;
    doc["jobtype"] = j.jobtype;
    j.payload = doc.dump();
    std::string v = EncodeRedisJob(j);
    EXPECT_TRUE(v.substr(v.find('\n') + 1).starts_with("~CEJTQ")) << jobtype;
    auto back = DecodeRedisJob(j.jid, v, 0);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->payload, j.payload) << jobtype;
  }
}

TEST(RedisJobCodecTest, KeepsWhatItCouldNotGiveBackExactly) {
  JobRecord j = ServerJob();
  // created_at in another form than the server writes, enqueued_at other than the header's.
  j.payload = R"({"created_at":"2026-12-01T11:00:00+01:00","enqueued_at":"2026-12-01T10:00:00Z",)"
              R"("jid":"bench-0000000001","queue":"other"})";
  std::string v = EncodeRedisJob(j);
  EXPECT_TRUE(v.substr(v.find('\n') + 1).starts_with("~J~{")) << v;
  auto back = DecodeRedisJob(j.jid, v, 0);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->payload, j.payload);
  // Not sorted, or not compact: stored whole.
  for (std::string payload :
       {R"({"jid":"bench-0000000001","args":[]})", R"({"args":[], "jid":"bench-0000000001"})"}) {
    j.payload = payload;
    v = EncodeRedisJob(j);
    EXPECT_EQ(v.substr(v.find('\n') + 1), payload);
    back = DecodeRedisJob(j.jid, v, 0);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->payload, payload);
  }
}

TEST(RedisJobCodecTest, AStaleEnqueuedAtLeftOutComesBackAsTheHeadersTime) {
  JobRecord j = ServerJob();
  std::string v = EncodeRedisJob(j);
  v.replace(v.find("1796119200123400"), 16, "+1796122913000000");
  auto back = DecodeRedisJob(j.jid, v, 0);
  ASSERT_TRUE(back.ok());
  auto doc = nlohmann::json::parse(back->payload);
  EXPECT_EQ(doc["enqueued_at"], "2026-12-01T11:01:53Z");
  EXPECT_EQ(doc["created_at"], "2026-12-01T10:00:00.1234Z");
  doc["enqueued_at"] = "2026-12-01T10:00:00.1234Z";
  EXPECT_EQ(doc.dump(), j.payload);
}

TEST(RedisJobCodecTest, DamagedValuesNameTheJobAndTheProblem) {
  EXPECT_EQ(DecodeRedisJob("x1", "no newline", 0).status().message(), "stored job x1: no header");
  EXPECT_EQ(DecodeRedisJob("x2", "9|1|0||q|t\n{}", 0).status().message(),
            "stored job x2: unknown state \"9\"");
  EXPECT_EQ(DecodeRedisJob("x3", "0|1|0|q\n{}", 0).status().message(),
            "stored job x3: header has fewer than 6 fields");
  EXPECT_EQ(DecodeRedisJob("x4", "0|ab|0||q|t\n{}", 0).status().message(),
            "stored job x4: reserve_for is not a number");
  EXPECT_EQ(DecodeRedisJob("x5", "0|1|0||q|t\n~CJ~{}", 0).status().message(),
            "stored job x5: damaged compact payload");
}

}  // namespace
}  // namespace bulkhead
