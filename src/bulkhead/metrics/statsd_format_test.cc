#include "bulkhead/metrics/statsd_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace bulkhead {
namespace {

using ::testing::ElementsAre;

struct SmallRegistry {
  SmallRegistry() {
    processed = &(*registry.AddCounter("bulkhead_jobs_processed_total", "P."))->Get();
    size = *registry.AddGauge("bulkhead_queue_size", "S.", {"queue"});
    const double bounds[] = {0.5};
    runtime = *registry.AddHistogram("bulkhead_job_runtime_seconds", "R.", {"jobtype"}, bounds);
  }
  Registry registry;
  Counter* processed;
  GaugeFamily* size;
  HistogramFamily* runtime;
};

TEST(StatsdFormatTest, DogStatsdUsesTagsAndCounterDeltas) {
  SmallRegistry r;
  r.processed->Increment(5);
  r.size->WithLabels({"push"}).Set(12);
  r.runtime->WithLabels({"Deliver"}).Observe(0.25);
  StatsdFormatter f(StatsdFlavor::kDogStatsd, "bulkhead", {{"env", "prod"}, {"canary", ""}});
  EXPECT_THAT(
      f.Format(r.registry.Collect()),
      ElementsAre(
          "bulkhead.job_runtime_seconds.count:1|c|#env:prod,canary,jobtype:Deliver",
          "bulkhead.job_runtime_seconds.sum:0.25|c|#env:prod,canary,jobtype:Deliver",
          "bulkhead.job_runtime_seconds.bucket:1|c|#env:prod,canary,jobtype:Deliver,le:0.5",
          "bulkhead.job_runtime_seconds.bucket:1|c|#env:prod,canary,jobtype:Deliver,le:+Inf",
          "bulkhead.jobs_processed_total:5|c|#env:prod,canary",
          "bulkhead.queue_size:12|g|#env:prod,canary,queue:push"));
  // Second emission: counters send only what happened since; gauges their current value.
  r.processed->Increment(2);
  r.runtime->WithLabels({"Deliver"}).Observe(3);
  EXPECT_THAT(
      f.Format(r.registry.Collect()),
      ElementsAre(
          "bulkhead.job_runtime_seconds.count:1|c|#env:prod,canary,jobtype:Deliver",
          "bulkhead.job_runtime_seconds.sum:3|c|#env:prod,canary,jobtype:Deliver",
          "bulkhead.job_runtime_seconds.bucket:0|c|#env:prod,canary,jobtype:Deliver,le:0.5",
          "bulkhead.job_runtime_seconds.bucket:1|c|#env:prod,canary,jobtype:Deliver,le:+Inf",
          "bulkhead.jobs_processed_total:2|c|#env:prod,canary",
          "bulkhead.queue_size:12|g|#env:prod,canary,queue:push"));
}

TEST(StatsdFormatTest, PlainStatsdManglesLabelsIntoTheName) {
  SmallRegistry r;
  r.size->WithLabels({"push.high"}).Set(3);
  r.runtime->WithLabels({"ActivityPub::Deliver"}).Observe(1);
  StatsdFormatter f(StatsdFlavor::kPlain, "mastodon.bulkhead", {});
  EXPECT_THAT(
      f.Format(r.registry.Collect()),
      ElementsAre(
          "mastodon.bulkhead.job_runtime_seconds.count.jobtype.ActivityPub__Deliver:1|c",
          "mastodon.bulkhead.job_runtime_seconds.sum.jobtype.ActivityPub__Deliver:1|c",
          "mastodon.bulkhead.job_runtime_seconds.bucket.jobtype.ActivityPub__Deliver.le.0_5:0|c",
          "mastodon.bulkhead.job_runtime_seconds.bucket.jobtype.ActivityPub__Deliver.le.inf:1|c",
          "mastodon.bulkhead.jobs_processed_total:0|c",
          "mastodon.bulkhead.queue_size.queue.push_high:3|g"));
}

TEST(StatsdFormatTest, EmptyPrefixKeepsTheFullMetricName) {
  Registry registry;
  (*registry.AddGauge("bulkhead_working_jobs", "W."))->Get().Set(4);
  StatsdFormatter f(StatsdFlavor::kPlain, "", {});
  EXPECT_THAT(f.Format(registry.Collect()), ElementsAre("bulkhead_working_jobs:4|g"));
}

TEST(StatsdFormatTest, NegativeGaugeIsResetFirstInPlainStatsdOnly) {
  Registry registry;
  (*registry.AddGauge("bulkhead_x", "X."))->Get().Set(-3);
  StatsdFormatter plain(StatsdFlavor::kPlain, "b", {});
  EXPECT_THAT(plain.Format(registry.Collect()), ElementsAre("b.x:0|g\nb.x:-3|g"));
  StatsdFormatter dog(StatsdFlavor::kDogStatsd, "b", {});
  EXPECT_THAT(dog.Format(registry.Collect()), ElementsAre("b.x:-3|g"));
}

TEST(StatsdFormatTest, NonFiniteValuesAreNotSentAndTagValuesAreSanitised) {
  Registry registry;
  GaugeFamily* g = *registry.AddGauge("bulkhead_g", "G.", {"host"});
  g->WithLabels({"a,b|c#d e"}).Set(1);
  g->WithLabels({"nan.example"}).Set(std::nan(""));
  StatsdFormatter f(StatsdFlavor::kDogStatsd, "b", {});
  EXPECT_THAT(f.Format(registry.Collect()), ElementsAre("b.g:1|g|#host:a_b_c_d_e"));
}

TEST(StatsdFormatTest, CounterResetSendsTheNewValue) {
  Registry registry;
  double value = 10;
  ASSERT_TRUE(registry
                  .AddCallback(MetricType::kCounter, "bulkhead_c_total", "C.", {},
                               [&]() -> Result<std::vector<MetricSample>> {
                                 return std::vector<MetricSample>{{{}, value}};
                               })
                  .ok());
  StatsdFormatter f(StatsdFlavor::kPlain, "b", {});
  EXPECT_THAT(f.Format(registry.Collect()), ElementsAre("b.c_total:10|c"));
  value = 4;  // the source restarted
  EXPECT_THAT(f.Format(registry.Collect()), ElementsAre("b.c_total:4|c"));
  value = 6;
  EXPECT_THAT(f.Format(registry.Collect()), ElementsAre("b.c_total:2|c"));
}

TEST(StatsdFormatTest, PacksLinesUpToTheDatagramLimit) {
  EXPECT_THAT(PackDatagrams({"aaaa", "bbbb", "cccc"}, 9), ElementsAre("aaaa\nbbbb", "cccc"));
  EXPECT_THAT(PackDatagrams({"aaaa", "bbbb"}, 8), ElementsAre("aaaa", "bbbb"));
  EXPECT_THAT(PackDatagrams({"toolongline", "x"}, 4), ElementsAre("toolongline", "x"));
  EXPECT_TRUE(PackDatagrams({}, 100).empty());
}

TEST(StatsdFormatTest, ParsesFlavorAndTags) {
  EXPECT_EQ(*ParseStatsdFlavor("dogstatsd"), StatsdFlavor::kDogStatsd);
  EXPECT_EQ(*ParseStatsdFlavor("statsd"), StatsdFlavor::kPlain);
  EXPECT_FALSE(ParseStatsdFlavor("graphite").ok());
  EXPECT_EQ(*ParseStatsdTag("env:prod"), std::make_pair(std::string("env"), std::string("prod")));
  EXPECT_EQ(*ParseStatsdTag("url:http://x"),
            std::make_pair(std::string("url"), std::string("http://x")));
  EXPECT_EQ(*ParseStatsdTag("canary"), std::make_pair(std::string("canary"), std::string()));
  EXPECT_FALSE(ParseStatsdTag("").ok());
  EXPECT_FALSE(ParseStatsdTag(":x").ok());
  EXPECT_FALSE(ParseStatsdTag("a,b").ok());
  EXPECT_FALSE(ParseStatsdTag("a b").ok());
}

}  // namespace
}  // namespace bulkhead
