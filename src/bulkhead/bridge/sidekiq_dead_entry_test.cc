#include "bulkhead/bridge/sidekiq_dead_entry.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

using nlohmann::json;

DeadEntryContext Context(SidekiqTimeFormat format = SidekiqTimeFormat::kFloatSeconds) {
  return {.queue = "bulkhead",
          .reason = "webpush: subscription.endpoint: URL scheme must be https",
          .now = FromUnixMicros(1'700'000'000'500'000),
          .format = format};
}

TEST(SidekiqDeadEntryTest, AJobKeepsItsFieldsAndGetsSidekiqsErrorFields) {
  std::string job =
      R"({"class":"webpush","args":[{"subscription":{"endpoint":"http://x"}}],"retry":true,)"
      R"("queue":"bulkhead","jid":"4f8b7c2e1a9d3b6c5e0f1a2b","created_at":1699999999.5})";
  json entry = json::parse(SidekiqDeadEntry(job, Context()));
  EXPECT_EQ(entry["class"], "webpush");
  EXPECT_EQ(entry["jid"], "4f8b7c2e1a9d3b6c5e0f1a2b");
  EXPECT_EQ(entry["args"][0]["subscription"]["endpoint"], "http://x");
  EXPECT_EQ(entry["error_class"], kRefusedErrorClass);
  EXPECT_EQ(entry["error_message"], "webpush: subscription.endpoint: URL scheme must be https");
  EXPECT_EQ(entry["failed_at"].dump(), "1700000000.5");
  json ms = json::parse(SidekiqDeadEntry(job, Context(SidekiqTimeFormat::kIntegerMilliseconds)));
  EXPECT_EQ(ms["failed_at"].dump(), "1700000000500") << "Sidekiq 8's form";
}

TEST(SidekiqDeadEntryTest, AnEntryThatIsNoJobIsKeptWholeAsTheArgumentOfOne) {
  for (std::string text :
       {std::string("not json {"), std::string("[1,2,3]"), std::string("\xff\xfe binary")}) {
    json entry = json::parse(SidekiqDeadEntry(text, Context()));
    EXPECT_EQ(entry["class"], kUnreadableClass);
    EXPECT_EQ(entry["queue"], "bulkhead");
    EXPECT_EQ(entry["retry"], false);
    EXPECT_EQ(entry["jid"].get<std::string>().size(), 24u);
    EXPECT_EQ(entry["error_class"], kRefusedErrorClass);
    ASSERT_EQ(entry["args"].size(), 1u);
    if (text[0] != '\xff') {
      EXPECT_EQ(entry["args"][0], text) << "nothing lost";
    }
  }
}

}  // namespace
}  // namespace bulkhead
