#include "bulkhead/config/config.h"

#include <algorithm>
#include <charconv>

#include "bulkhead/config/settings.h"

namespace bulkhead {

bool IsRedisStoreUrl(std::string_view url) {
  return url.starts_with("redis://") || url.starts_with("rediss://") ||
         url.starts_with("redis-sentinel://");
}

std::string Config::StoreUrl() const {
  if (!store.empty()) return store;
  std::string dir = data_dir.empty() ? "." : data_dir;
  return "sqlite:" + dir + "/bulkhead.db";
}

int64_t Config::UnsentReplyCap() const {
  // A fetched job with its failure history is up to about twice a command line.
  return std::max(max_unsent_reply_bytes, 4 * max_line_bytes);
}

int Config::RetryFor(const std::string& jobtype) const {
  auto it = jobtypes.find(jobtype);
  if (it != jobtypes.end() && it->second.retry) return *it->second.retry;
  return default_retry;
}

namespace {

// The rules relating a type's settings to each other; each setting's own range is its row's.
Status ValidateKind(const std::string& kind, const DeliveryKindSettings& k) {
  auto bad = [&](const std::string& m) {
    return Status::InvalidArgument("delivery." + kind + "." + m);
  };
  if (k.connect_timeout_ms > k.total_timeout_ms) {
    return bad("connect_timeout_ms (" + std::to_string(k.connect_timeout_ms) +
               ") must not exceed total_timeout_ms (" + std::to_string(k.total_timeout_ms) + ")");
  }
  if (k.first_byte_timeout_ms > k.total_timeout_ms) {
    return bad("first_byte_timeout_ms (" + std::to_string(k.first_byte_timeout_ms) +
               ") must not exceed total_timeout_ms (" + std::to_string(k.total_timeout_ms) + ")");
  }
  if ((k.low_speed_bytes_per_second > 0) != (k.low_speed_seconds > 0)) {
    return bad(
        "low_speed_bytes_per_second and low_speed_seconds must be set together (both 0 "
        "turns the low-speed cut off)");
  }
  // Not a row (config_file.cc refuses the key); code may still set it.
  if (kind == "webpush" && k.deadline_hours != 0) {
    return bad("deadline_hours: webpush jobs expire with their own ttl");
  }
  return Status::Ok();
}

// The rules relating [delivery] settings to each other.
// [sidekiq]: the queues taken (a list: each name checked here), and a CA file only for rediss://.
Status ValidateSidekiq(const SidekiqSettings& k) {
  if (!k.enabled()) return Status::Ok();
  if (k.queues.empty()) return Status::InvalidArgument("sidekiq.queues must name a queue");
  for (const std::string& q : k.queues) {
    if (std::string problem = SidekiqQueueNameProblem(q); !problem.empty()) {
      return Status::InvalidArgument("sidekiq.queues: \"" + q + "\" " + problem);
    }
  }
  if (!k.ca_file.empty() && !k.redis.starts_with("rediss://")) {
    return Status::InvalidArgument("sidekiq.ca_file is for a rediss:// sidekiq.redis");
  }
  return Status::Ok();
}

Status ValidateDelivery(const DeliverySettings& d) {
  auto bad = [](const std::string& m) { return Status::InvalidArgument("delivery." + m); };
  if (d.host_cap_max < d.host_cap_min) {
    return bad("host_cap_max (" + std::to_string(d.host_cap_max) +
               ") must be at least host_cap_min (" + std::to_string(d.host_cap_min) + ")");
  }
  if (d.host_cap_initial < d.host_cap_min || d.host_cap_initial > d.host_cap_max) {
    return bad("host_cap_initial (" + std::to_string(d.host_cap_initial) +
               ") must be between host_cap_min and host_cap_max (" +
               std::to_string(d.host_cap_min) + ".." + std::to_string(d.host_cap_max) + ")");
  }
  if (d.breaker_open_max_seconds < d.breaker_open_min_seconds) {
    return bad("breaker_open_max_seconds (" + std::to_string(d.breaker_open_max_seconds) +
               ") must be at least breaker_open_min_seconds (" +
               std::to_string(d.breaker_open_min_seconds) + ")");
  }
  for (const auto& [name, kind] :
       {std::pair<std::string, const DeliveryKindSettings*>{"webpush", &d.webpush},
        {"activitypub", &d.activitypub},
        {"webhook", &d.webhook}}) {
    if (Status s = ValidateKind(name, *kind); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Status Config::Validate() const {
  // Each setting's own type, range and allowed values: its row in the settings table.
  if (Status s = ValidateSettings(*this); !s.ok()) return s;
  // The rules that relate settings to each other.
  auto bad = [](const std::string& m) { return Status::InvalidArgument(m); };
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return bad("tls_cert_file and tls_key_file must be set together (the certificate and its key)");
  }
  if (max_unsent_reply_bytes < 2 * unsent_replies_pause_bytes) {
    return bad("max_unsent_reply_bytes (" + std::to_string(max_unsent_reply_bytes) +
               ") must be at least 2 x unsent_replies_pause_bytes (" +
               std::to_string(2 * unsent_replies_pause_bytes) + ")");
  }
  if (Status s = ValidateDelivery(delivery); !s.ok()) return s;
  bool redis = IsRedisStoreUrl(StoreUrl());
  if (durability == "replicated" && !redis) {
    return bad(
        "durability = \"replicated\" needs a Redis store (redis://, rediss:// or "
        "redis-sentinel://), not " +
        StoreUrl());
  }
  if (durability == "power" && redis) {
    return bad(
        "durability = \"power\" is for SQLite stores: with Redis, set its own "
        "appendfsync, or use \"replicated\"");
  }
  if (!redis_ca_file.empty() && !StoreUrl().starts_with("rediss://")) {
    // Only the scheme: a redis:// URL may hold a password.
    return bad("redis_ca_file is for rediss:// stores, not " +
               StoreUrl().substr(0, StoreUrl().find(':') + 1) + " ones");
  }
  if (redis_heartbeat_ttl_ms <= redis_heartbeat_ms) {
    return bad("redis_heartbeat_ttl_ms (" + std::to_string(redis_heartbeat_ttl_ms) +
               ") must exceed redis_heartbeat_ms (" + std::to_string(redis_heartbeat_ms) + ")");
  }
  if (Status s = ValidateSidekiq(sidekiq); !s.ok()) return s;
  for (const auto& [name, jt] : jobtypes) {
    if (jt.retry && *jt.retry < -1) return bad("jobtypes." + name + ".retry must be -1 or more");
  }
  for (const auto& [queue, t] : throttles) {
    if (Status s = ValidateThrottle(queue, t); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<HostPort> ParseHostPort(const std::string& s) {
  auto bad = [&] {
    return Status::InvalidArgument("invalid address \"" + s + "\": expected HOST:PORT");
  };
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return bad();
  HostPort hp;
  hp.host = s.substr(0, colon);
  if (hp.host.front() == '[' && hp.host.back() == ']')
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  unsigned port = 0;
  auto [p, ec] = std::from_chars(s.data() + colon + 1, s.data() + s.size(), port);
  if (ec != std::errc() || p != s.data() + s.size() || port > 65535) return bad();
  hp.port = static_cast<uint16_t>(port);
  return hp;
}

}  // namespace bulkhead
