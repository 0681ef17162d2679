// Config: every setting of `bulkhead serve`, with its default, loadable from a TOML file and then
// overridden by command-line flags. The password comes from the file or BULKHEAD_PASSWORD, never
// from a flag (flags are visible in `ps`).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/util/status.h"

namespace bulkhead {

struct JobtypeConfig {
  // Retries for jobs of this type whose payload has no `retry` (or null).
  std::optional<int> retry;
};

// [statsd]: optional StatsD / DogStatsD emission of the same figures as /metrics.
struct StatsdSettings {
  std::string address;                // "host:port"; empty: StatsD off
  std::string prefix = "bulkhead";
  std::vector<std::string> tags;      // DogStatsD "key:value"
  int interval_seconds = 10;
  std::string flavor = "statsd";      // "statsd" or "dogstatsd"
};

struct Config {
  std::string listen = "127.0.0.1:7419";  // Faktory protocol
  std::string http = "127.0.0.1:7420";    // /healthz, /api, /metrics
  std::string data_dir = "./data";
  // Store URL; empty means sqlite:<data_dir>/bulkhead.db.
  std::string store;
  std::string durability = "process";  // "process" or "power" (see docs/architecture.md)
  std::string password;                // empty: no password
  int max_connections = 2000;
  int64_t max_line_bytes = 16 * 1024 * 1024;
  int line_timeout_seconds = 10;
  int handshake_timeout_seconds = 2;
  int fetch_block_ms = 2000;
  int scheduler_interval_ms = 1000;  // scheduled and retry sets polled this often
  int reaper_interval_ms = 5000;     // expired reservations checked this often
  int dead_ttl_days = 180;
  int default_retry = 25;
  int worker_timeout_seconds = 60;  // a worker silent this long is dropped
  bool allow_private_targets = false;
  // Outbound delivery (built-in webpush/activitypub/webhook jobs).
  std::string vapid_private_key_file;               // empty: <data_dir>/vapid.pem (created once)
  std::string vapid_subject = "mailto:postmaster@localhost";  // VAPID `sub`: mailto: or https:
  std::string delivery_outcomes_queue = "bulkhead";  // where outcome jobs are pushed
  int activitypub_deadline_hours = 48;              // activitypub jobs older than this are dead
  int webhook_deadline_hours = 24;                  // webhook jobs older than this are dead
  std::string log_level = "info";
  std::map<std::string, JobtypeConfig> jobtypes;
  StatsdSettings statsd;

  // The store URL in effect.
  std::string StoreUrl() const;
  // Retries for a job of `jobtype` that does not say.
  int RetryFor(const std::string& jobtype) const;
  // Range and consistency checks; InvalidArgument names the setting.
  Status Validate() const;
};

// Reads a TOML file over `base` (settings absent from the file keep their base value). Unknown
// keys are errors that name the key and the file, so typos do not pass silently.
Result<Config> LoadConfigFile(const std::string& path, Config base = {});

// Splits "HOST:PORT" ("[::1]:7419" for IPv6). InvalidArgument names the bad address.
struct HostPort {
  std::string host;
  uint16_t port = 0;
};
Result<HostPort> ParseHostPort(const std::string& s);

}  // namespace bulkhead
