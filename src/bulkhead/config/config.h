// Config: every setting of `bulkhead serve`, with its default, loadable from a TOML file and then
// overridden by command-line flags. The password comes from the file or BULKHEAD_PASSWORD, never
// from a flag (flags are visible in `ps`). Which TOML key and flag set which member, with its doc
// and range: the settings table (settings.h says what it drives; its rows are in settings.cc). A
// new setting is a member here and a row in settings.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/config/relay_config.h"
#include "bulkhead/config/throttle_config.h"
#include "bulkhead/util/cron_schedule.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct JobtypeConfig {
  // Retries for jobs of this type whose payload has no `retry` (or null).
  std::optional<int> retry;
};

// [[cron]] (cron_config.h reads it): a job pushed whenever `schedule` is due, UTC.
struct CronEntry {
  // Its identity in the store (the claim of each due time is kept under it): `name`, or the job
  // type, with "#2", "#3", ... for later entries of the same type.
  std::string name;
  CronSchedule schedule;
  // [cron.job] as a JSON object: "jobtype" (from `type`), "queue", "args", and "retry",
  // "reserve_for", "custom" when given. Each firing pushes a copy with a fresh jid.
  std::string job_json;
};

// [statsd]: optional StatsD / DogStatsD emission of the same figures as /metrics.
struct StatsdSettings {
  std::string address;  // "host:port"; empty: StatsD off
  std::string prefix = "bulkhead";
  std::vector<std::string> tags;  // DogStatsD "key:value"
  int interval_seconds = 10;
  std::string flavor = "statsd";  // "statsd" or "dogstatsd"
};

// [delivery.webpush], [delivery.activitypub], [delivery.webhook]: how long one delivery attempt
// of that job type may take, and (activitypub, webhook) how long the job may keep trying.
struct DeliveryKindSettings {
  // TCP connect plus TLS handshake (and name resolution). 0 = off (the total deadline still holds).
  int connect_timeout_ms = 5000;
  // From the request being sent to the first response byte. 0 = off.
  int first_byte_timeout_ms = 10000;
  // The whole attempt, from its start to the last response byte. At least 1.
  int total_timeout_ms = 30000;
  // Low-speed cut: the attempt ends when fewer than low_speed_bytes_per_second move for
  // low_speed_seconds (also while waiting for the first byte; libcurl measures the speed over its
  // last 5-6 s, so the cut can come that much later). 0 and 0 = off: a response that drips is
  // then ended by the total deadline, as in Mastodon.
  int64_t low_speed_bytes_per_second = 0;
  int low_speed_seconds = 0;
  // activitypub and webhook only: a job not delivered this long after its creation is dead ("host
  // unavailable"). webpush jobs expire with their own `ttl` (0 here).
  int deadline_hours = 0;
  // webpush only: HTTP/2 where the push service offers it (delivery.webpush.http2).
  bool http2 = true;
};

// [delivery]: the delivery engine's compartments, breakers and bounds (see docs/architecture.md).
struct DeliverySettings {
  // Attempts in flight across all hosts (shared fairly between hosts when contended). 1024: at
  // 1 s per answer, about the deliveries/s one node's event loop carries (docs/operations.md,
  // "Sizing deliveries"), and with the other caps within a hard RLIMIT_NOFILE of 4096.
  int global_max_in_flight = 1024;
  // Per-host adaptive in-flight cap: start, floor and ceiling.
  int host_cap_initial = 4;
  int host_cap_min = 1;
  int host_cap_max = 32;
  // Consecutive failures that open a host's circuit breaker, and how long it stays open: the first
  // opening of a series for breaker_open_min_seconds, doubling per reopening up to
  // breaker_open_max_seconds.
  int breaker_failure_threshold = 5;
  int breaker_open_min_seconds = 30;
  int breaker_open_max_seconds = 600;
  // A host failing continuously this long is marked unavailable (bulkhead.host_unavailable).
  int unavailable_after_days = 7;
  // A Retry-After further ahead than this is cut to it.
  int max_retry_after_seconds = 3600;
  // A success slower than this counts as a failure for the breaker. 0 = off.
  int slow_call_threshold_ms = 10000;
  // Threads that build delivery requests (activitypub signatures, webpush encryption) off the
  // event loop. 0 = one per core the process may run on.
  int crypto_threads = 0;
  DeliveryKindSettings webpush;
  DeliveryKindSettings activitypub{.deadline_hours = 48};
  DeliveryKindSettings webhook{.deadline_hours = 24};
};

// [sidekiq]: the Sidekiq bridge (bridge/sidekiq_bridge.h; docs/deliveries.md "From Sidekiq"):
// jobs taken from Sidekiq queues in the application's Redis, outcome jobs written there as Sidekiq
// jobs. Off while `redis` is empty.
struct SidekiqSettings {
  std::string redis;    // the application's Sidekiq Redis: redis://, rediss://, redis-sentinel://
  std::string ca_file;  // rediss:// only: the CA bundle; empty: the system's
  std::vector<std::string> queues = {"bulkhead"};  // taken from, in priority order
  std::string outcomes_queue = "default";          // outcome jobs go there
  // The Sidekiq worker class of each outcome event.
  std::string webpush_gone_class = "Bulkhead::WebpushGone";
  std::string delivery_dead_class = "Bulkhead::DeliveryDead";
  std::string host_unavailable_class = "Bulkhead::HostUnavailable";
  std::string host_available_class = "Bulkhead::HostAvailable";
  // created_at/enqueued_at/failed_at written: "seconds" (floats: Sidekiq 6, 7) or "milliseconds"
  // (integers: Sidekiq 8).
  std::string timestamps = "seconds";
  int taken_ttl_seconds = 86400;  // how long a taken job's mark outlives a crash
  int batch = 1000;               // jobs moved per script call while there is a backlog
  int64_t max_job_bytes = 1024 * 1024;
  // This node's name in the application's Redis; empty: the Redis store's node id on a shared
  // store, else the host name.
  std::string node;
  // Sidekiq's dead set trimming (its dead_max_jobs, dead_timeout_in_seconds).
  int dead_max_jobs = 10000;
  int dead_timeout_days = 180;

  bool enabled() const { return !redis.empty(); }
};

struct Config {
  std::string listen = "127.0.0.1:7419";  // Faktory protocol
  std::string http = "127.0.0.1:7420";    // /healthz, /api, /metrics, the dashboard
  // The dashboard's path prefix ("" or "/bulkhead" behind a proxy at a sub-path): dashboard/.
  std::string http_base_path;
  std::string data_dir = "./data";
  // Store URL; empty means sqlite:<data_dir>/bulkhead.db.
  std::string store;
  // "process" or "power" (SQLite), or "replicated" (Redis): see the settings table.
  std::string durability = "process";
  // Redis stores: every key starts with "{redis_namespace}:" (one Cluster hash slot per namespace).
  std::string redis_namespace = "bulkhead";
  // rediss:// only: the CA bundle that verifies the server's certificate; empty: the system's.
  std::string redis_ca_file;
  // durability = "replicated": how long a write waits for a replica (WAIT) before it is refused.
  int redis_wait_timeout_ms = 1000;
  // Redis node liveness: how often a node refreshes its alive key, how long the key outlives a
  // silent node, how often each node gives back the reservations of nodes whose key is gone.
  int redis_heartbeat_ms = 5000;
  int redis_heartbeat_ttl_ms = 15000;
  int redis_reap_ms = 5000;
  // Flag only (`--salvage-damaged-jobs`, a one-off recovery step):
  // StoreOptions::salvage_damaged_jobs.
  bool salvage_damaged_jobs = false;
  // Tests only, not a setting (no file key, no flag): see StoreOptions::max_page_count_for_tests.
  int64_t store_max_page_count_for_tests = 0;
  std::string password;  // empty: no password
  // TLS for both listeners (PEM files; both or neither). Empty: plain TCP and HTTP. A config file
  // whose folder holds tls/public.crt and tls/private.key (Faktory's convention) sets them.
  std::string tls_cert_file;
  std::string tls_key_file;
  int max_connections = 2000;
  int64_t max_line_bytes = 16 * 1024 * 1024;
  int line_timeout_seconds = 10;
  int handshake_timeout_seconds = 2;
  // Bounds on what one client can make the server hold (docs/operations.md, "Hostile or broken
  // clients: the limits"). Arrays and objects in a command's JSON nest at most this deep.
  int max_json_depth = 64;
  // Jobs one PUSHB may hold: each costs about 1 KB while its PUSHB is parsed and checked, so that
  // a 16 MiB line of `{}` elements (5 million) would take gigabytes.
  int max_pushb_jobs = 100000;
  // While a connection's unsent replies reach unsent_replies_pause_bytes its commands are not
  // read (protocol/session.h); past UnsentReplyCap() it is closed and logged.
  int64_t unsent_replies_pause_bytes = 1024 * 1024;
  int64_t max_unsent_reply_bytes = 64 * 1024 * 1024;
  // HTTP connections at once; at the cap the connection waiting longest for its next request (an
  // idle keep-alive, or one slow to send its request) is closed to make room, and when every
  // connection is busy the new one gets 503 (http/http_server.h).
  int http_max_connections = 256;
  // After repeated wrong passwords from one address, its next HELLO is checked no sooner than
  // this, doubling per further failure up to 30 s (the first failure costs nothing). 0 = off.
  int login_failure_delay_ms = 250;
  int fetch_block_ms = 2000;
  int scheduler_interval_ms = 1000;  // scheduled and retry sets polled this often
  int reaper_interval_ms = 5000;     // expired reservations checked this often
  int dead_ttl_days = 180;
  int default_retry = 25;
  int worker_timeout_seconds = 60;  // a worker silent this long is dropped
  bool allow_private_targets = false;
  // Deliveries: the CA bundle (PEM) that verifies targets' certificates; empty: the system's.
  std::string delivery_ca_file;
  // Outbound delivery (built-in webpush/activitypub/webhook jobs).
  std::string vapid_private_key_file;  // empty: <data_dir>/vapid.pem (created once)
  std::string vapid_subject = "mailto:postmaster@localhost";  // VAPID `sub`: mailto: or https:
  std::string delivery_outcomes_queue = "bulkhead";           // where outcome jobs are pushed
  // "object" (one OutcomeRecord object) or "positional" (the arguments of earlier versions).
  std::string delivery_outcome_args = "object";
  // [delivery] and its per-type tables. The older top-level keys activitypub_deadline_hours and
  // webhook_deadline_hours still set delivery.activitypub/webhook.deadline_hours.
  DeliverySettings delivery;
  std::string log_level = "info";
  std::map<std::string, JobtypeConfig> jobtypes;
  StatsdSettings statsd;
  SidekiqSettings sidekiq;
  // [throttles]: queue -> its throttle (throttle_config.h).
  ThrottleConfigs throttles;
  std::vector<CronEntry> cron;  // [[cron]]
  // The push relay's listener ("host:port"; empty: no relay) and its apps ([[relay.apns]],
  // [[relay.fcm]]: relay_config.h). docs/relay.md.
  std::string relay_listen;
  RelaySettings relay;

  // The store URL in effect.
  std::string StoreUrl() const;
  // Unsent reply bytes past which a connection is closed: max_unsent_reply_bytes, raised to
  // 4 x max_line_bytes so that the largest job always fits in one reply.
  int64_t UnsentReplyCap() const;
  // Retries for a job of `jobtype` that does not say.
  int RetryFor(const std::string& jobtype) const;
  // Each setting's range (its row in settings.cc), then the rules relating settings to each other;
  // InvalidArgument names the setting.
  Status Validate() const;
};

// True for the Redis store URLs: redis://, rediss://, redis-sentinel://.
bool IsRedisStoreUrl(std::string_view url);

// Reads a TOML file over `base` (settings absent from the file keep their base value), each key
// through its row in the settings table (config_file.cc). Unknown keys, wrong types and values
// out of a setting's range are errors that name the file, the key, the value and the line, so
// typos do not pass silently. The rules relating settings to each other are Validate's.
Result<Config> LoadConfigFile(const std::string& path, Config base = {});
// LoadConfigFile(path), or the defaults when `path` is empty (no --config given).
Result<Config> LoadConfigOrDefaults(const std::string& path);

// Splits "HOST:PORT" ("[::1]:7419" for IPv6). InvalidArgument names the bad address.
struct HostPort {
  std::string host;
  uint16_t port = 0;
};
Result<HostPort> ParseHostPort(const std::string& s);

}  // namespace bulkhead
