#include "bulkhead/dispatch/dispatcher_config.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

TEST(ApplyDeliveryDefaultsTest, RetryDefaultsAreMastodonsUnlessConfigured) {
  Config plain;
  ApplyDeliveryDefaults(plain);
  EXPECT_EQ(plain.RetryFor("webpush"), 5);
  EXPECT_EQ(plain.RetryFor("activitypub"), 16) << "ActivityPub::DeliveryWorker retry: 16";
  EXPECT_EQ(plain.RetryFor("webhook"), plain.default_retry);
  Config configured;
  configured.jobtypes["webpush"].retry = 9;
  configured.jobtypes["activitypub"].retry = 3;
  ApplyDeliveryDefaults(configured);
  EXPECT_EQ(configured.RetryFor("webpush"), 9);
  EXPECT_EQ(configured.RetryFor("activitypub"), 3);
}

TEST(MakeDispatcherConfigTest, DefaultsMatchTheCompiledInOnes) {
  Config config;
  DispatcherConfig dc = MakeDispatcherConfig(config);
  DispatcherConfig compiled;
  EXPECT_EQ(dc.outcomes_queue, compiled.outcomes_queue);
  EXPECT_EQ(dc.outcome_args, OutcomeArgs::kObject);
  EXPECT_EQ(dc.outcome_args, compiled.outcome_args);
  EXPECT_EQ(dc.max_retry_after, compiled.max_retry_after);
  EXPECT_EQ(dc.jobs.activitypub_deadline, compiled.jobs.activitypub_deadline);
  EXPECT_EQ(dc.jobs.webhook_deadline, compiled.jobs.webhook_deadline);
  for (JobKind kind : {JobKind::kWebPush, JobKind::kActivityPub, JobKind::kWebhook}) {
    const Deadlines& d = dc.DeadlinesFor(kind);
    const Deadlines& c = compiled.DeadlinesFor(kind);
    EXPECT_EQ(d.connect, c.connect) << JobKindName(kind);
    EXPECT_EQ(d.first_byte, c.first_byte) << JobKindName(kind);
    EXPECT_EQ(d.total, c.total) << JobKindName(kind);
    EXPECT_EQ(d.low_speed_limit, c.low_speed_limit) << JobKindName(kind);
    EXPECT_EQ(d.low_speed_time, c.low_speed_time) << JobKindName(kind);
  }
  EXPECT_EQ(dc.webhook_deadlines.connect, std::chrono::milliseconds(5000));
  EXPECT_EQ(dc.webhook_deadlines.first_byte, std::chrono::milliseconds(10000));
  EXPECT_EQ(dc.webhook_deadlines.total, std::chrono::milliseconds(30000));
  const HostCompartmentsConfig& r = dc.compartments;
  const HostCompartmentsConfig& rc = compiled.compartments;
  EXPECT_EQ(r.global_max_in_flight, rc.global_max_in_flight);
  EXPECT_EQ(r.failing_retention, rc.failing_retention);
  EXPECT_EQ(r.compartment.limit.initial_limit, rc.compartment.limit.initial_limit);
  EXPECT_EQ(r.compartment.limit.min_limit, rc.compartment.limit.min_limit);
  EXPECT_EQ(r.compartment.limit.max_limit, rc.compartment.limit.max_limit);
  EXPECT_EQ(r.compartment.breaker.failure_threshold, rc.compartment.breaker.failure_threshold);
  EXPECT_EQ(r.compartment.breaker.base_open_interval, rc.compartment.breaker.base_open_interval);
  EXPECT_EQ(r.compartment.breaker.max_open_interval, rc.compartment.breaker.max_open_interval);
  EXPECT_EQ(r.compartment.unavailable_after, rc.compartment.unavailable_after);
  EXPECT_EQ(r.compartment.slow_call_threshold, rc.compartment.slow_call_threshold);
}

TEST(MakeDispatcherConfigTest, EverySettingReachesItsPlace) {
  Config config;
  config.delivery_outcomes_queue = "outcomes";
  config.delivery_outcome_args = "positional";
  config.allow_private_targets = true;
  DeliverySettings& d = config.delivery;
  d.global_max_in_flight = 64;
  d.host_cap_initial = 3;
  d.host_cap_min = 2;
  d.host_cap_max = 9;
  d.breaker_failure_threshold = 7;
  d.breaker_open_min_seconds = 11;
  d.breaker_open_max_seconds = 99;
  d.unavailable_after_days = 30;
  d.max_retry_after_seconds = 120;
  d.slow_call_threshold_ms = 0;
  d.webpush = {.connect_timeout_ms = 1000,
               .first_byte_timeout_ms = 2000,
               .total_timeout_ms = 3000,
               .low_speed_bytes_per_second = 10,
               .low_speed_seconds = 4};
  d.activitypub.total_timeout_ms = 20000;
  d.activitypub.deadline_hours = 72;
  d.webhook.first_byte_timeout_ms = 0;
  d.webhook.deadline_hours = 6;
  ASSERT_TRUE(config.Validate().ok()) << config.Validate().ToString();
  DispatcherConfig dc = MakeDispatcherConfig(config);
  using std::chrono::milliseconds;
  EXPECT_EQ(dc.outcomes_queue, "outcomes");
  EXPECT_EQ(dc.outcome_args, OutcomeArgs::kPositional);
  EXPECT_TRUE(dc.jobs.allow_private_targets);
  EXPECT_EQ(dc.jobs.activitypub_deadline, hours(72));
  EXPECT_EQ(dc.jobs.webhook_deadline, hours(6));
  EXPECT_EQ(dc.max_retry_after, seconds(120));
  EXPECT_EQ(dc.DeadlinesFor(JobKind::kWebPush).connect, milliseconds(1000));
  EXPECT_EQ(dc.DeadlinesFor(JobKind::kWebPush).first_byte, milliseconds(2000));
  EXPECT_EQ(dc.DeadlinesFor(JobKind::kWebPush).total, milliseconds(3000));
  EXPECT_EQ(dc.DeadlinesFor(JobKind::kWebPush).low_speed_limit, 10);
  EXPECT_EQ(dc.DeadlinesFor(JobKind::kWebPush).low_speed_time, seconds(4));
  EXPECT_EQ(dc.DeadlinesFor(JobKind::kActivityPub).total, milliseconds(20000));
  EXPECT_EQ(dc.DeadlinesFor(JobKind::kActivityPub).connect, milliseconds(5000));
  EXPECT_EQ(dc.DeadlinesFor(JobKind::kWebhook).first_byte, milliseconds(0));
  EXPECT_EQ(dc.DeadlinesFor(JobKind::kWebhook).total, milliseconds(30000));
  const CompartmentConfig& c = dc.compartments.compartment;
  EXPECT_EQ(dc.compartments.global_max_in_flight, 64);
  EXPECT_EQ(c.limit.initial_limit, 3);
  EXPECT_EQ(c.limit.min_limit, 2);
  EXPECT_EQ(c.limit.max_limit, 9);
  EXPECT_EQ(c.breaker.failure_threshold, 7);
  EXPECT_EQ(c.breaker.base_open_interval, seconds(11));
  EXPECT_EQ(c.breaker.max_open_interval, seconds(99));
  EXPECT_EQ(c.unavailable_after, hours(24 * 30));
  EXPECT_GT(dc.compartments.failing_retention, c.unavailable_after)
      << "a failing host is remembered longer than it takes to become unavailable";
  EXPECT_EQ(c.slow_call_threshold, Duration::zero());
}

}  // namespace
}  // namespace bulkhead
