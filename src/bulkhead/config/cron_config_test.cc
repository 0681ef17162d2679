#include "bulkhead/config/cron_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

Result<std::vector<CronEntry>> Read(const std::string& text) {
  toml::table root = toml::parse(text);
  const toml::node* cron = root.get("cron");
  if (!cron) return std::vector<CronEntry>{};
  return ReadCronEntries(*cron);
}

TEST(CronConfigTest, FaktorysFormWithDefaultsAndNames) {
  auto entries = Read(R"(
[[cron]]
  schedule = "*/5 * * * *"
  [cron.job]
    type = "FiveJob"
    queue = "critical"
    args = [1, "two", {k = 3}]
    retry = 3
    reserve_for = 600
    [cron.job.custom]
      expires_in = 60
      unique_for = 65.0

[[cron]]
  schedule = "@hourly"
  [cron.job]
    type = "FiveJob"

[[cron]]
  schedule = "@every 30s"
  name = "pinger"
  [cron.job]
    type = "Ping"
)");
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  ASSERT_EQ(entries->size(), 3u);
  const CronEntry& five = (*entries)[0];
  EXPECT_EQ(five.name, "FiveJob");
  EXPECT_EQ(five.schedule.text(), "*/5 * * * *");
  EXPECT_EQ(nlohmann::json::parse(five.job_json),
            nlohmann::json::parse(R"({"jobtype":"FiveJob","queue":"critical",
              "args":[1,"two",{"k":3}],"retry":3,"reserve_for":600,
              "custom":{"expires_in":60,"unique_for":65.0}})"));
  EXPECT_EQ((*entries)[1].name, "FiveJob#2");
  EXPECT_EQ(nlohmann::json::parse((*entries)[1].job_json),
            nlohmann::json::parse(R"({"jobtype":"FiveJob","queue":"default","args":[]})"));
  EXPECT_EQ((*entries)[2].name, "pinger");
}

TEST(CronConfigTest, ErrorsNameTheEntryAndField) {
  const std::pair<const char*, const char*> cases[] = {
      {"cron = 5", "cron must be an array of [[cron]] tables (line 1)"},
      {"[[cron]]\n[cron.job]\ntype = \"A\"", "cron entry 1 (A): schedule is missing (line 1)"},
      {"[[cron]]\nschedule = 5\n[cron.job]\ntype = \"A\"",
       "cron entry 1 (A): schedule must be a string (line 2)"},
      {"[[cron]]\nschedule = \"61 * * * *\"\n[cron.job]\ntype = \"A\"",
       "cron entry 1 (A): schedule: minute: 61 is out of range 0-59 (line 2)"},
      {"[[cron]]\nschedule = \"* * * * *\"", "cron entry 1: [cron.job] is missing (line 1)"},
      {"[[cron]]\nschedule = \"* * * * *\"\n[cron.job]\nqueue = \"q\"",
       "cron entry 1: job.type is missing (line 3)"},
      {"[[cron]]\nschedule = \"* * * * *\"\n[cron.job]\ntype = \"A\"\nqueue = \"a b\"",
       "cron entry 1 (A): job.queue must match [a-zA-Z0-9._-]+ (a Faktory queue name) (line 5)"},
      {"[[cron]]\nschedule = \"* * * * *\"\n[cron.job]\ntype = \"A\"\nargs = 1",
       "cron entry 1 (A): job.args must be an array (line 5)"},
      {"[[cron]]\nschedule = \"* * * * *\"\n[cron.job]\ntype = \"A\"\nretry = \"3\"",
       "cron entry 1 (A): job.retry must be an integer (line 5)"},
      {"[[cron]]\nschedule = \"* * * * *\"\n[cron.job]\ntype = \"A\"\npriority = 5",
       "cron entry 1 (A): unknown key job.priority (type, queue, args, retry, reserve_for, "
       "custom) (line 5)"},
      {"[[cron]]\nschedule = \"* * * * *\"\nevery = 5\n[cron.job]\ntype = \"A\"",
       "cron entry 1 (A): unknown key every (schedule, name or [cron.job]) (line 3)"},
      {"[[cron]]\nschedule = \"* * * * *\"\nname = \"x\"\n[cron.job]\ntype = \"A\"\n"
       "[[cron]]\nschedule = \"@daily\"\nname = \"x\"\n[cron.job]\ntype = \"B\"",
       "cron entry 2 (x): name \"x\" is taken by an earlier entry (line 6)"},
  };
  for (auto [text, error] : cases) {
    auto entries = Read(text);
    ASSERT_FALSE(entries.ok()) << text;
    EXPECT_EQ(entries.status().message(), error) << text;
  }
}

}  // namespace
}  // namespace bulkhead
