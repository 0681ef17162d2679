// The [delivery] rows of the settings table (settings.h): the engine-wide ones and those
// repeated for each delivery type.
#include "bulkhead/config/settings.h"

namespace bulkhead {
namespace {

// Appends `row` once per delivery type, its key prefixed "delivery.TYPE." and its field
// `KindMember` of that type's DeliveryKindSettings. Types innermost so that SettingsMarkdown can
// share a line.
template <auto KindMember>
void AppendForEachKind(std::vector<Setting>& rows, const Setting& row) {
  using C = Config;
  using D = DeliverySettings;
  for (auto [kind, field] :
       {std::pair<const char*, SettingField>{"webpush",
                                             MemberField<&C::delivery, &D::webpush, KindMember>()},
        {"activitypub", MemberField<&C::delivery, &D::activitypub, KindMember>()},
        {"webhook", MemberField<&C::delivery, &D::webhook, KindMember>()}}) {
    Setting r = row;
    r.key = std::string("delivery.") + kind + "." + row.key;
    r.field = field;
    rows.push_back(std::move(r));
  }
}

}  // namespace

// [delivery]: the engine-wide rows.
std::vector<Setting> DeliveryRows() {
  using D = DeliverySettings;
  return {
      {.key = "delivery.global_max_in_flight",
       .field = MemberField<&Config::delivery, &D::global_max_in_flight>(),
       .doc = "delivery attempts in flight across all hosts; shared fairly between hosts when "
              "contended",
       .min = 1},
      {.key = "delivery.host_cap_initial",
       .field = MemberField<&Config::delivery, &D::host_cap_initial>(),
       .doc = "each host's adaptive in-flight cap at the start (AIMD: grows while healthy, halves "
              "on timeouts, 5xx, 429)",
       .values = "host_cap_min..host_cap_max"},
      {.key = "delivery.host_cap_min",
       .field = MemberField<&Config::delivery, &D::host_cap_min>(),
       .doc = "the floor of each host's adaptive cap",
       .min = 1},
      {.key = "delivery.host_cap_max",
       .field = MemberField<&Config::delivery, &D::host_cap_max>(),
       .doc = "the ceiling of each host's adaptive cap",
       .values = "≥ host_cap_min"},
      {.key = "delivery.breaker_failure_threshold",
       .field = MemberField<&Config::delivery, &D::breaker_failure_threshold>(),
       .doc = "consecutive failures (timeouts, connection errors, 5xx, 408, 429, 503) that open a "
              "host's circuit breaker; its jobs then wait parked, no retry spent",
       .min = 1},
      {.key = "delivery.breaker_open_min_seconds",
       .field = MemberField<&Config::delivery, &D::breaker_open_min_seconds>(),
       .doc = "how long the breaker stays open before a probe, the first opening of a series (+ up "
              "to 20 % jitter)",
       .min = 1},
      {.key = "delivery.breaker_open_max_seconds",
       .field = MemberField<&Config::delivery, &D::breaker_open_max_seconds>(),
       .doc = "the open time doubles per reopening up to this",
       .values = "≥ breaker_open_min_seconds"},
      {.key = "delivery.unavailable_after_days",
       .field = MemberField<&Config::delivery, &D::unavailable_after_days>(),
       .doc = "a host failing continuously this long is unavailable (bulkhead.host_unavailable; "
              "cleared by its next healthy answer)",
       .min = 1,
       .max = 365},
      {.key = "delivery.max_retry_after_seconds",
       .field = MemberField<&Config::delivery, &D::max_retry_after_seconds>(),
       .doc = "a Retry-After further ahead is cut to this",
       .min = 1,
       .max = 31536000},
      {.key = "delivery.slow_call_threshold_ms",
       .field = MemberField<&Config::delivery, &D::slow_call_threshold_ms>(),
       .doc = "a success slower than this counts as a failure for the breaker",
       .min = 0,
       .zero_is_off = true},
      {.key = "delivery.crypto_threads",
       .field = MemberField<&Config::delivery, &D::crypto_threads>(),
       .doc = "threads that sign (activitypub) and encrypt (webpush) delivery requests, off the "
              "event loop; 0: one per core",
       .min = 0,
       .max = 256},
  };
}

// [delivery.webpush], [delivery.activitypub], [delivery.webhook]: the same rows for each type.
std::vector<Setting> DeliveryKindRows() {
  using K = DeliveryKindSettings;
  std::vector<Setting> rows;
  AppendForEachKind<&K::connect_timeout_ms>(
      rows, {.key = "connect_timeout_ms",
             .doc = "TCP connect + TLS handshake (and name resolution)",
             .min = 0,
             .zero_is_off = true});
  AppendForEachKind<&K::first_byte_timeout_ms>(rows, {.key = "first_byte_timeout_ms",
                                                      .doc = "request sent → first response byte",
                                                      .min = 0,
                                                      .zero_is_off = true});
  AppendForEachKind<&K::total_timeout_ms>(
      rows, {.key = "total_timeout_ms",
             .doc = "the whole attempt; always on (it is what ends a response that drips, as "
                    "Mastodon's read deadline)",
             .min = 1});
  AppendForEachKind<&K::low_speed_bytes_per_second>(
      rows, {.key = "low_speed_bytes_per_second",
             .doc = "end an attempt when fewer bytes/s than this move for low_speed_seconds; "
                    "set both or neither",
             .details = "also while waiting for the first byte; libcurl averages over its last "
                        "5–6 s, so the cut can come that much later",
             .min = 0,
             .zero_is_off = true});
  AppendForEachKind<&K::low_speed_seconds>(
      rows, {.key = "low_speed_seconds",
             .doc = "how long the speed must stay under low_speed_bytes_per_second",
             .min = 0,
             .zero_is_off = true});
  using C = Config;
  using D = DeliverySettings;
  rows.push_back({.key = "delivery.webpush.http2",
                  .field = MemberField<&C::delivery, &D::webpush, &K::http2>(),
                  .doc = "send webpush requests over HTTP/2 where the push service offers it "
                         "(many streams on one connection); false: HTTP/1.1"});
  // deadline_hours: not for webpush, whose jobs expire with their own ttl. At most a year (the
  // bounds here also keep every duration these become within std::chrono's nanoseconds).
  constexpr int64_t kMaxDeadlineHours = 8760;
  rows.push_back({.key = "delivery.activitypub.deadline_hours",
                  .field = MemberField<&C::delivery, &D::activitypub, &K::deadline_hours>(),
                  .doc = "an activitypub job not delivered this long after its creation is dead "
                         "(\"host unavailable\")",
                  .min = 1,
                  .max = kMaxDeadlineHours});
  rows.push_back({.key = "delivery.webhook.deadline_hours",
                  .field = MemberField<&C::delivery, &D::webhook, &K::deadline_hours>(),
                  .doc = "the same for webhook jobs (webpush jobs use their own ttl)",
                  .min = 1,
                  .max = kMaxDeadlineHours});
  rows.push_back({.key = "activitypub_deadline_hours",
                  .field = MemberField<&C::delivery, &D::activitypub, &K::deadline_hours>(),
                  .doc = "older spelling of delivery.activitypub.deadline_hours",
                  .min = 1,
                  .max = kMaxDeadlineHours,
                  .older_spelling_of = "delivery.activitypub.deadline_hours"});
  rows.push_back({.key = "webhook_deadline_hours",
                  .field = MemberField<&C::delivery, &D::webhook, &K::deadline_hours>(),
                  .doc = "older spelling of delivery.webhook.deadline_hours",
                  .min = 1,
                  .max = kMaxDeadlineHours,
                  .older_spelling_of = "delivery.webhook.deadline_hours"});
  return rows;
}

}  // namespace bulkhead
