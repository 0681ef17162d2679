#include "bulkhead/config/settings.h"

#include <algorithm>
#include <limits>
#include <map>

namespace bulkhead {
namespace {

std::string CheckHostPort(const std::string& value) {
  auto parsed = ParseHostPort(value);
  return parsed.ok() ? "" : "is an " + parsed.status().message();
}

std::string CheckOptionalHostPort(const std::string& value) {
  return value.empty() ? "" : CheckHostPort(value);
}

std::string CheckVapidSubject(const std::string& value) {
  if (value.rfind("mailto:", 0) == 0 || value.rfind("https://", 0) == 0) return "";
  return "must start with mailto: or https://, not \"" + value + "\"";
}

std::string CheckNotEmpty(const std::string& value) {
  return value.empty() ? "must not be empty" : "";
}

// Inside a Redis hash tag: no braces (they would end the tag), nothing Redis keys or logs mangle.
std::string CheckRedisNamespace(const std::string& value) {
  if (value.empty() || value.size() > 64) return "must be 1 to 64 characters";
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return "may hold only letters, digits, '_', '-' and '.', not \"" + value + "\"";
  }
  return "";
}

// The dashboard's prefix: "" or "/seg[/seg...]", nothing a URL or an HTML attribute must escape.
std::string CheckBasePath(const std::string& value) {
  if (value.empty()) return "";
  std::string problem =
      "must be empty or /SEGMENT[/SEGMENT...] (letters, digits, '-', '_', '.'), "
      "not \"" +
      value + "\"";
  if (value.size() > 100 || value.front() != '/' || value.back() == '/') return problem;
  char prev = 0;
  for (char c : value) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/';
    if (!ok || (c == '/' && prev == '/')) return problem;
    prev = c;
  }
  return "";
}

// Where and how the server listens and keeps its data.
std::vector<Setting> ServingRows() {
  return {
      {.key = "listen",
       .field = MemberField<&Config::listen>(),
       .doc = "Faktory protocol address",
       .flag = "--listen",
       .check = CheckHostPort,
       .values = "HOST:PORT"},
      {.key = "http",
       .field = MemberField<&Config::http>(),
       .doc = "HTTP address for /healthz, /metrics and /api",
       .details = "routes: `/healthz`, `/metrics`, `/api/info`, `/api/workers`, `/api/hosts`, "
                  "`/api/keys`, `/api/backup`",
       .flag = "--http",
       .check = CheckHostPort,
       .values = "HOST:PORT"},
      {.key = "http_base_path",
       .field = MemberField<&Config::http_base_path>(),
       .doc = "path prefix of the web dashboard, e.g. /bulkhead behind a reverse proxy",
       .details = "the dashboard answers at `<http_base_path>/`; `/api`, `/metrics` and "
                  "`/healthz` stay where they are",
       .flag = "--http-base-path",
       .check = CheckBasePath,
       .values = "empty, or /SEGMENT[/SEGMENT…] of letters, digits, `-`, `_`, `.`"},
      {.key = "store",
       .field = MemberField<&Config::store>(),
       .doc = "store URL: sqlite:PATH, memory: (nothing kept), or Redis (several nodes)",
       .details = "Redis: `redis://[:PASSWORD@]HOST:PORT[/DB]`, `rediss://…` (TLS, verified), "
                  "`redis-sentinel://HOST:PORT[,HOST:PORT…]/MASTER[/DB]` (the primary as the "
                  "sentinels name it, followed through a fail-over)",
       .flag = "--store",
       .shown_default = "sqlite:<data_dir>/bulkhead.db"},
      {.key = "data_dir",
       .field = MemberField<&Config::data_dir>(),
       .doc = "data directory: the default store and keys live there",
       .flag = "--data-dir"},
      {.key = "durability",
       .field = MemberField<&Config::durability>(),
       .doc = "process: an answered change survives kill -9 (the redo log, SQLite "
              "synchronous=NORMAL); power: fsync every commit (FULL); replicated (Redis): a "
              "replica has every write before it is answered",
       .details = "with Redis, `process` and `power` keep Redis's own persistence settings; "
                  "`replicated` answers PUSH, ACK and FAIL only once `WAIT` saw a replica take the "
                  "write (docs/operations.md, \"Running several nodes\")",
       .allowed = {"process", "power", "replicated"}},
      {.key = "redis_namespace",
       .field = MemberField<&Config::redis_namespace>(),
       .doc = "Redis stores: the prefix of every key, {NAMESPACE}: (one Cluster slot)",
       .check = CheckRedisNamespace,
       .values = "letters, digits, _ - ."},
      {.key = "redis_ca_file",
       .field = MemberField<&Config::redis_ca_file>(),
       .doc = "rediss:// stores: CA bundle (PEM) that verifies the server; empty: the system's"},
      {.key = "redis_wait_timeout_ms",
       .field = MemberField<&Config::redis_wait_timeout_ms>(),
       .doc = "durability = replicated: how long a write waits for a replica before it is refused",
       .min = 1,
       .max = 60000},
      {.key = "redis_heartbeat_ms",
       .field = MemberField<&Config::redis_heartbeat_ms>(),
       .doc = "Redis stores: how often a node refreshes its alive key ({NAMESPACE}:alive:NODE)",
       .min = 10,
       .max = 60000},
      {.key = "redis_heartbeat_ttl_ms",
       .field = MemberField<&Config::redis_heartbeat_ttl_ms>(),
       .doc = "Redis stores: a node silent this long is presumed dead (its alive key expires)",
       .details = "must exceed `redis_heartbeat_ms`; a dead node's reservations are given back "
                  "within this plus `redis_reap_ms`",
       .min = 20,
       .max = 600000},
      {.key = "redis_reap_ms",
       .field = MemberField<&Config::redis_reap_ms>(),
       .doc = "Redis stores: how often a node gives back the reservations of dead nodes",
       .min = 10,
       .max = 60000},
      {.key = "password",
       .field = MemberField<&Config::password>(),
       .doc = "password clients must present (or BULKHEAD_PASSWORD; never a flag)",
       .details = "clients send the Faktory pwdhash; `/api/keys`, `/api/backup` and "
                  "`POST /api/workers/…` need `Authorization: Bearer <password>`"},
      {.key = "tls_cert_file",
       .field = MemberField<&Config::tls_cert_file>(),
       .doc = "PEM certificate (chain): both ports then speak TLS only",
       .details = "clients use `tcp+tls://`, the HTTP port is HTTPS; set with `tls_key_file` or "
                  "neither. A config file with `tls/public.crt` and `tls/private.key` beside it "
                  "sets both (Faktory's convention). `SIGHUP` reloads them",
       .flag = "--tls-cert-file",
       .shown_default = "none (plain TCP)"},
      {.key = "tls_key_file",
       .field = MemberField<&Config::tls_key_file>(),
       .doc = "PEM private key of tls_cert_file",
       .flag = "--tls-key-file",
       .shown_default = "none (plain TCP)"},
  };
}

// Bounds on what clients can make the server hold (docs/operations.md "Limits").
std::vector<Setting> LimitRows() {
  return {
      {.key = "max_connections",
       .field = MemberField<&Config::max_connections>(),
       .doc = "Faktory connections at once; further ones are refused with a clear error",
       .details = "at start the soft `RLIMIT_NOFILE` is raised to the hard limit, and a "
                  "configuration whose caps (`max_connections` + 64 + `http_max_connections` + "
                  "`delivery.global_max_in_flight` + 64) do not fit is refused",
       .min = 1},
      {.key = "max_line_bytes",
       .field = MemberField<&Config::max_line_bytes>(),
       .doc = "longest command line",
       .min = 1024},
      {.key = "line_timeout_seconds",
       .field = MemberField<&Config::line_timeout_seconds>(),
       .doc = "a half-sent line must complete within this, or keep arriving at 1 KiB/s or more",
       .min = 1},
      {.key = "handshake_timeout_seconds",
       .field = MemberField<&Config::handshake_timeout_seconds>(),
       .doc = "HELLO must arrive within this",
       .min = 1},
      {.key = "max_json_depth",
       .field = MemberField<&Config::max_json_depth>(),
       .doc = "arrays/objects in a command's JSON nest at most this deep; deeper is -ERR naming "
              "the limit",
       .min = 8,
       .max = 1000},
      {.key = "max_pushb_jobs",
       .field = MemberField<&Config::max_pushb_jobs>(),
       .doc = "jobs one PUSHB may hold (each costs about 1 KB while it is parsed); more is -ERR "
              "naming the limit",
       .min = 1,
       .max = 10000000},
      {.key = "unsent_replies_pause_bytes",
       .field = MemberField<&Config::unsent_replies_pause_bytes>(),
       .doc = "while more replies than this wait for a client that does not read, its commands "
              "are not read",
       .min = 4096},
      {.key = "max_unsent_reply_bytes",
       .field = MemberField<&Config::max_unsent_reply_bytes>(),
       .doc = "past this (and at least 4 × max_line_bytes) the connection is closed and logged",
       .values = "≥ 2 × unsent_replies_pause_bytes"},
      {.key = "http_max_connections",
       .field = MemberField<&Config::http_max_connections>(),
       .doc = "HTTP connections at once; at the cap the one waiting longest for a request is "
              "closed, else 503",
       .min = 1},
      {.key = "login_failure_delay_ms",
       .field = MemberField<&Config::login_failure_delay_ms>(),
       .doc = "after repeated wrong passwords from one address, its next HELLO is checked no "
              "sooner than this, doubling per failure up to 30 s (the first failure is free)",
       .min = 0,
       .max = 30000,
       .zero_is_off = true},
      {.key = "fetch_block_ms",
       .field = MemberField<&Config::fetch_block_ms>(),
       .doc = "how long FETCH waits for a job (clients give up at 5 s)",
       .min = 0,
       .max = 4000},
  };
}

// Jobs, delivery outputs and logging.
std::vector<Setting> JobRows() {
  return {
      {.key = "scheduler_interval_ms",
       .field = MemberField<&Config::scheduler_interval_ms>(),
       .doc = "how often due scheduled/retry jobs move to their queues",
       .min = 10},
      {.key = "reaper_interval_ms",
       .field = MemberField<&Config::reaper_interval_ms>(),
       .doc = "how often expired reservations are failed",
       .min = 10},
      {.key = "dead_ttl_days",
       .field = MemberField<&Config::dead_ttl_days>(),
       .doc = "how long dead jobs are kept",
       .min = 1},
      {.key = "default_retry",
       .field = MemberField<&Config::default_retry>(),
       .doc = "retries for jobs without retry (-1: straight to dead); [jobtypes.NAME] retry sets "
              "it per job type",
       .details = "e.g. `[jobtypes.webpush]` `retry = 5` (the delivery defaults are Mastodon's: "
                  "`webpush` 5, `activitypub` 16)",
       .min = -1},
      {.key = "worker_timeout_seconds",
       .field = MemberField<&Config::worker_timeout_seconds>(),
       .doc = "a worker silent this long is dropped"},
      {.key = "allow_private_targets",
       .field = MemberField<&Config::allow_private_targets>(),
       .doc = "allow deliveries to private/loopback addresses and plain http",
       .flag = "--allow-private-targets"},
      {.key = "relay_listen",
       .field = MemberField<&Config::relay_listen>(),
       .doc = "the push relay's address (docs/relay.md); empty: no relay",
       .details = "TLS as the other ports (tls_cert_file); the apps are [[relay.apns]] and "
                  "[[relay.fcm]] tables",
       .flag = "--relay-listen",
       .check = CheckOptionalHostPort,
       .values = "empty, or HOST:PORT"},
      {.key = "delivery_ca_file",
       .field = MemberField<&Config::delivery_ca_file>(),
       .doc = "PEM CA bundle that verifies delivery targets' certificates; empty: the system's",
       .details = "for webhook receivers behind a private CA; certificates and host names are "
                  "always verified"},
      {.key = "log_level",
       .field = MemberField<&Config::log_level>(),
       .doc = "log level",
       .flag = "--log-level",
       .allowed = {"trace", "debug", "info", "warn", "warning", "error", "err", "critical", "off"}},
      {.key = "vapid_private_key_file",
       .field = MemberField<&Config::vapid_private_key_file>(),
       .doc = "Web Push VAPID key (PEM, or Mastodon's VAPID_PRIVATE_KEY=/VAPID_PUBLIC_KEY= "
              "lines), created (PEM, mode 0600) on first start",
       .details = "VAPID_PRIVATE_KEY and VAPID_PUBLIC_KEY in the environment (Mastodon's "
                  "names and form) win over it; with `store = \"memory:\"` and no file, a key for "
                  "this process only; `bulkhead vapid-key` prints the public key in effect, "
                  "`bulkhead vapid-key import` writes Mastodon's key into the file "
                  "(docs/operations.md, \"The VAPID key\")",
       .shown_default = "<data_dir>/vapid.pem"},
      {.key = "vapid_subject",
       .field = MemberField<&Config::vapid_subject>(),
       .doc = "VAPID contact sent to push services",
       .check = CheckVapidSubject,
       .values = "mailto:… or https://…"},
      {.key = "delivery_outcomes_queue",
       .field = MemberField<&Config::delivery_outcomes_queue>(),
       .doc = "queue for the bulkhead.webpush_gone, bulkhead.delivery_dead, "
              "bulkhead.host_unavailable, bulkhead.host_available and "
              "bulkhead.relay_token_gone jobs",
       .check = CheckNotEmpty,
       .values = "not empty"},
      {.key = "delivery_outcome_args",
       .field = MemberField<&Config::delivery_outcome_args>(),
       .doc = "the arguments of those jobs: object = one JSON object (docs/deliveries.md, "
              "\"Outcome jobs\"); positional = the positional arguments of earlier versions",
       .details = "positional is deprecated and goes in the next release",
       .allowed = {"object", "positional"}},
  };
}

// [statsd]
std::vector<Setting> StatsdRows() {
  using S = StatsdSettings;
  return {
      {.key = "statsd.address",
       .field = MemberField<&Config::statsd, &S::address>(),
       .doc = "StatsD/DogStatsD target host:port; the same figures as /metrics, sent every "
              "statsd.interval",
       .shown_default = "none (off)"},
      {.key = "statsd.prefix",
       .field = MemberField<&Config::statsd, &S::prefix>(),
       .doc = "metric name prefix"},
      {.key = "statsd.flavor",
       .field = MemberField<&Config::statsd, &S::flavor>(),
       .doc = "plain StatsD, or DogStatsD (with tags)",
       .allowed = {"statsd", "dogstatsd"}},
      {.key = "statsd.tags",
       .field = MemberField<&Config::statsd, &S::tags>(),
       .doc = "DogStatsD \"key:value\" tags sent with every figure",
       .shown_default = "[]"},
      {.key = "statsd.interval",
       .field = MemberField<&Config::statsd, &S::interval_seconds>(),
       .doc = "seconds between two sends",
       .min = 1},
  };
}

std::vector<Setting> BuildSettings() {
  std::vector<Setting> all;
  for (auto* part : {&ServingRows, &LimitRows, &JobRows, &DeliveryRows, &DeliveryKindRows,
                     &StatsdRows, &SidekiqRows}) {
    for (Setting& row : part()) all.push_back(std::move(row));
  }
  return all;
}

// The member type's bounds.
std::pair<int64_t, int64_t> TypeBounds(const Setting& s) {
  if (std::holds_alternative<int& (*)(Config&)>(s.field)) {
    return {std::numeric_limits<int>::min(), std::numeric_limits<int>::max()};
  }
  return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
}

std::string Bound(int64_t v, bool zero_is_off) {
  return std::to_string(v) + (zero_is_off && v == 0 ? " (off)" : "");
}

std::string IntegerProblem(const Setting& s, int64_t v) {
  auto [type_min, type_max] = TypeBounds(s);
  int64_t lo = std::max(s.min.value_or(type_min), type_min);
  int64_t hi = std::min(s.max.value_or(type_max), type_max);
  if (v >= lo && v <= hi) return "";
  std::string not_v = ", not " + std::to_string(v);
  if (s.min && s.max) {
    return "must be between " + Bound(lo, s.zero_is_off) + " and " + std::to_string(hi) + not_v;
  }
  if (s.min && v < lo) {
    return lo == 0 && s.zero_is_off ? "must be 0 (off) or more" + not_v
                                    : "must be at least " + std::to_string(lo) + not_v;
  }
  if (s.max && v > hi) return "must be at most " + std::to_string(hi) + not_v;
  return "must be an integer between " + std::to_string(lo) + " and " + std::to_string(hi) + not_v;
}

// `s` in double quotes, `"` and `\` escaped: a TOML basic string, and how messages show values.
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string StringProblem(const Setting& s, const std::string& v) {
  if (!s.allowed.empty() && std::find(s.allowed.begin(), s.allowed.end(), v) == s.allowed.end()) {
    std::string want;
    for (size_t i = 0; i < s.allowed.size(); ++i) {
      if (i > 0) want += i + 1 == s.allowed.size() ? " or " : ", ";
      want += Quoted(s.allowed[i]);
    }
    return (s.allowed.size() > 2 ? "must be one of " : "must be ") + want + ", not " + Quoted(v);
  }
  return s.check ? s.check(v) : "";
}

// Whether `value` holds the alternative the setting's member takes.
bool SameType(const Setting& s, const SettingValue& value) {
  switch (TypeOf(s)) {
    case SettingType::kString:
      return std::holds_alternative<std::string>(value);
    case SettingType::kInteger:
      return std::holds_alternative<int64_t>(value);
    case SettingType::kBool:
      return std::holds_alternative<bool>(value);
    case SettingType::kStringList:
      return std::holds_alternative<std::vector<std::string>>(value);
  }
  return false;
}

}  // namespace

const std::vector<Setting>& Settings() {
  static const std::vector<Setting> settings = BuildSettings();
  return settings;
}

const Setting* FindSetting(const std::string& key) {
  static const std::map<std::string, const Setting*> by_key = [] {
    std::map<std::string, const Setting*> m;
    for (const Setting& s : Settings()) m[s.key] = &s;
    return m;
  }();
  auto it = by_key.find(key);
  return it == by_key.end() ? nullptr : it->second;
}

SettingType TypeOf(const Setting& setting) {
  return std::visit(
      [](auto field) {
        using T = std::remove_reference_t<decltype(field(std::declval<Config&>()))>;
        if constexpr (std::is_same_v<T, std::string>) return SettingType::kString;
        if constexpr (std::is_same_v<T, bool>) return SettingType::kBool;
        if constexpr (std::is_same_v<T, std::vector<std::string>>) return SettingType::kStringList;
        return SettingType::kInteger;
      },
      setting.field);
}

std::string ExpectedType(const Setting& setting) {
  switch (TypeOf(setting)) {
    case SettingType::kString:
      return "a string";
    case SettingType::kInteger:
      return "an integer";
    case SettingType::kBool:
      return "true or false";
    case SettingType::kStringList:
      return "an array of strings";
  }
  return "";
}

SettingValue GetSetting(const Setting& setting, const Config& config) {
  // The field only reads here; it takes Config& because SetSetting writes through it.
  Config& c = const_cast<Config&>(config);
  return std::visit([&](auto field) -> SettingValue { return field(c); }, setting.field);
}

std::string SettingProblem(const Setting& setting, const SettingValue& value) {
  if (!SameType(setting, value)) return "must be " + ExpectedType(setting);
  if (const auto* i = std::get_if<int64_t>(&value)) return IntegerProblem(setting, *i);
  if (const auto* s = std::get_if<std::string>(&value)) return StringProblem(setting, *s);
  return "";
}

Status SetSetting(const Setting& setting, const SettingValue& value, Config& config,
                  const std::string& name) {
  if (std::string problem = SettingProblem(setting, value); !problem.empty()) {
    return Status::InvalidArgument((name.empty() ? setting.key : name) + " " + problem);
  }
  std::visit(
      [&](auto field) {
        auto& member = field(config);
        using T = std::remove_reference_t<decltype(member)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          member = static_cast<T>(std::get<int64_t>(value));
        } else {
          member = std::get<T>(value);
        }
      },
      setting.field);
  return Status::Ok();
}

Status ValidateSettings(const Config& config) {
  for (const Setting& s : Settings()) {
    if (std::string problem = SettingProblem(s, GetSetting(s, config)); !problem.empty()) {
      return Status::InvalidArgument(s.key + " " + problem);
    }
  }
  return Status::Ok();
}

std::string TomlLiteral(const SettingValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return Quoted(*s);
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  std::string out = "[";
  for (const std::string& s : std::get<std::vector<std::string>>(value)) {
    out += (out.size() > 1 ? ", " : "") + Quoted(s);
  }
  return out + "]";
}

}  // namespace bulkhead
