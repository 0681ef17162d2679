#include "bulkhead/engine/published_roster.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

WorkerInfo Worker(const std::string& wid) {
  WorkerInfo w;
  w.wid = wid;
  w.hostname = "box-" + wid;
  w.pid = 4242;
  w.labels = {"ruby", "sidekiq"};
  w.state = WorkerState::kQuiet;
  w.started_at = FromUnixMicros(1'767'225'600'123'456);
  w.last_beat = FromUnixMicros(1'767'225'692'654'321);
  w.connections = 3;
  w.rss_kb = 81920;
  return w;
}

void ExpectSame(const WorkerInfo& a, const WorkerInfo& b) {
  EXPECT_EQ(a.wid, b.wid);
  EXPECT_EQ(a.hostname, b.hostname);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.last_beat, b.last_beat);
  EXPECT_EQ(a.connections, b.connections);
  EXPECT_EQ(a.rss_kb, b.rss_kb);
}

TEST(PublishedRosterTest, EveryFieldSurvivesTheRoundTrip) {
  std::map<std::string, WorkerInfo> roster{{"w1", Worker("w1")}, {"w 2|\n", Worker("w 2|\n")}};
  auto back = DecodeRoster(EncodeRoster(roster));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 2u);
  ExpectSame((*back)[0], roster.at("w 2|\n"));  // in wid order
  ExpectSame((*back)[1], roster.at("w1"));
  auto none = DecodeRoster(EncodeRoster({}));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(PublishedRosterTest, AWidOfInvalidUtf8IsWrittenReplacedNotThrown) {
  std::map<std::string, WorkerInfo> roster{{"w\xff", Worker("w\xff")}};
  auto back = DecodeRoster(EncodeRoster(roster));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].wid, "w\xEF\xBF\xBD");
}

TEST(PublishedRosterTest, MembersOfAnotherTypeOrMissingReadAsDefaults) {
  auto back = DecodeRoster(R"([{"wid":"w1","pid":"nope","labels":[1,"x"],"state":"sleepy"}])");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].pid, 0);
  EXPECT_EQ((*back)[0].labels, std::vector<std::string>{"x"});
  EXPECT_EQ((*back)[0].state, WorkerState::kRunning);
  EXPECT_EQ((*back)[0].hostname, "");
}

TEST(PublishedRosterTest, TextThatIsNoRosterIsRefusedNamingTheProblem) {
  EXPECT_EQ(DecodeRoster("{}").status().message(), "a published roster must be a JSON array");
  EXPECT_EQ(DecodeRoster(R"([{"wid":"a"},{"pid":1}])").status().message(),
            "worker 1 of a published roster has no string \"wid\"");
  Status bad = DecodeRoster("[{").status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message().rfind("a published roster: invalid JSON", 0), 0u) << bad.message();
}

}  // namespace
}  // namespace bulkhead
