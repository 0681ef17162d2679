#include "bulkhead/dispatch/dispatcher_config.h"

#include <algorithm>

namespace bulkhead {

void ApplyDeliveryDefaults(Config& config) {
  auto& webpush = config.jobtypes[std::string(JobKindName(JobKind::kWebPush))];
  if (!webpush.retry) webpush.retry = kDefaultWebPushRetry;
  auto& activitypub = config.jobtypes[std::string(JobKindName(JobKind::kActivityPub))];
  if (!activitypub.retry) activitypub.retry = kDefaultActivityPubRetry;
}

const Deadlines& DispatcherConfig::DeadlinesFor(JobKind kind) const {
  switch (kind) {
    case JobKind::kWebPush:
      return webpush_deadlines;
    case JobKind::kActivityPub:
      return activitypub_deadlines;
    case JobKind::kWebhook:
      break;
  }
  return webhook_deadlines;
}

namespace {

// The transport deadlines one [delivery.KIND] table asks for.
Deadlines ToDeadlines(const DeliveryKindSettings& k) {
  Deadlines d;
  d.connect = std::chrono::milliseconds(k.connect_timeout_ms);
  d.first_byte = std::chrono::milliseconds(k.first_byte_timeout_ms);
  d.total = std::chrono::milliseconds(k.total_timeout_ms);
  d.low_speed_limit = k.low_speed_bytes_per_second;
  d.low_speed_time = std::chrono::seconds(k.low_speed_seconds);
  return d;
}

HostCompartmentsConfig ToCompartmentsConfig(const DeliverySettings& d) {
  HostCompartmentsConfig registry;
  registry.global_max_in_flight = d.global_max_in_flight;
  CompartmentConfig& compartment = registry.compartment;
  compartment.limit.initial_limit = d.host_cap_initial;
  compartment.limit.min_limit = d.host_cap_min;
  compartment.limit.max_limit = d.host_cap_max;
  compartment.breaker.failure_threshold = d.breaker_failure_threshold;
  compartment.breaker.base_open_interval = std::chrono::seconds(d.breaker_open_min_seconds);
  compartment.breaker.max_open_interval = std::chrono::seconds(d.breaker_open_max_seconds);
  compartment.unavailable_after = std::chrono::hours(24 * d.unavailable_after_days);
  compartment.slow_call_threshold = std::chrono::milliseconds(d.slow_call_threshold_ms);
  // A host failing longer than the unavailable period keeps its verdict while jobs keep coming.
  registry.failing_retention =
      std::max(registry.failing_retention, compartment.unavailable_after + std::chrono::hours(24));
  return registry;
}

}  // namespace

DispatcherConfig MakeDispatcherConfig(const Config& config) {
  const DeliverySettings& d = config.delivery;
  DispatcherConfig dc;
  dc.outcomes_queue = config.delivery_outcomes_queue;
  dc.outcome_args = config.delivery_outcome_args == "positional" ? OutcomeArgs::kPositional
                                                                 : OutcomeArgs::kObject;
  dc.jobs.allow_private_targets = config.allow_private_targets;
  dc.jobs.activitypub_deadline = std::chrono::hours(d.activitypub.deadline_hours);
  dc.jobs.webhook_deadline = std::chrono::hours(d.webhook.deadline_hours);
  dc.max_retry_after = std::chrono::seconds(d.max_retry_after_seconds);
  dc.webpush_deadlines = ToDeadlines(d.webpush);
  dc.activitypub_deadlines = ToDeadlines(d.activitypub);
  dc.webhook_deadlines = ToDeadlines(d.webhook);
  dc.webpush_http2 = d.webpush.http2;
  dc.compartments = ToCompartmentsConfig(d);
  if (!config.relay.empty()) {
    // The push relay's apps (compartments "apns:NAME", "fcm:NAME"): APNs takes up to 1000
    // streams per connection and answers in milliseconds, so an app's cap may grow that far
    // (still within global_max_in_flight); it starts where a busy app needs it.
    AdaptiveLimitConfig relay = dc.compartments.compartment.limit;
    relay.initial_limit = std::max(relay.initial_limit, 64);
    relay.max_limit = std::max(relay.max_limit, 1000);
    dc.compartments.cap_overrides = {{"apns:", relay}, {"fcm:", relay}};
  }
  return dc;
}

}  // namespace bulkhead
