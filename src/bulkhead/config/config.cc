#include "bulkhead/config/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <set>

namespace bulkhead {

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

Status ValidateKind(const std::string& kind, const DeliveryKindSettings& k) {
  auto bad = [&](const std::string& m) {
    return Status::InvalidArgument("delivery." + kind + "." + m);
  };
  if (k.connect_timeout_ms < 0) return bad("connect_timeout_ms must be 0 (off) or more");
  if (k.first_byte_timeout_ms < 0) return bad("first_byte_timeout_ms must be 0 (off) or more");
  if (k.total_timeout_ms < 1) return bad("total_timeout_ms must be at least 1");
  if (k.connect_timeout_ms > k.total_timeout_ms) {
    return bad("connect_timeout_ms (" + std::to_string(k.connect_timeout_ms) +
               ") must not exceed total_timeout_ms (" + std::to_string(k.total_timeout_ms) + ")");
  }
  if (k.first_byte_timeout_ms > k.total_timeout_ms) {
    return bad("first_byte_timeout_ms (" + std::to_string(k.first_byte_timeout_ms) +
               ") must not exceed total_timeout_ms (" + std::to_string(k.total_timeout_ms) + ")");
  }
  if (k.low_speed_bytes_per_second < 0 || k.low_speed_seconds < 0) {
    return bad("low_speed_bytes_per_second and low_speed_seconds must be 0 or more");
  }
  if ((k.low_speed_bytes_per_second > 0) != (k.low_speed_seconds > 0)) {
    return bad(
        "low_speed_bytes_per_second and low_speed_seconds must be set together (both 0 "
        "turns the low-speed cut off)");
  }
  if (kind == "webpush") {
    if (k.deadline_hours != 0) return bad("deadline_hours: webpush jobs expire with their own ttl");
  } else if (k.deadline_hours < 1) {
    return bad("deadline_hours must be at least 1");
  }
  return Status::Ok();
}

Status ValidateDelivery(const DeliverySettings& d) {
  auto bad = [](const std::string& m) { return Status::InvalidArgument("delivery." + m); };
  if (d.global_max_in_flight < 1) return bad("global_max_in_flight must be at least 1");
  if (d.host_cap_min < 1) return bad("host_cap_min must be at least 1");
  if (d.host_cap_max < d.host_cap_min) {
    return bad("host_cap_max (" + std::to_string(d.host_cap_max) +
               ") must be at least host_cap_min (" + std::to_string(d.host_cap_min) + ")");
  }
  if (d.host_cap_initial < d.host_cap_min || d.host_cap_initial > d.host_cap_max) {
    return bad("host_cap_initial (" + std::to_string(d.host_cap_initial) +
               ") must be between host_cap_min and host_cap_max (" +
               std::to_string(d.host_cap_min) + ".." + std::to_string(d.host_cap_max) + ")");
  }
  if (d.breaker_failure_threshold < 1) return bad("breaker_failure_threshold must be at least 1");
  if (d.breaker_open_min_seconds < 1) return bad("breaker_open_min_seconds must be at least 1");
  if (d.breaker_open_max_seconds < d.breaker_open_min_seconds) {
    return bad("breaker_open_max_seconds (" + std::to_string(d.breaker_open_max_seconds) +
               ") must be at least breaker_open_min_seconds (" +
               std::to_string(d.breaker_open_min_seconds) + ")");
  }
  if (d.unavailable_after_days < 1) return bad("unavailable_after_days must be at least 1");
  if (d.max_retry_after_seconds < 1) return bad("max_retry_after_seconds must be at least 1");
  if (d.slow_call_threshold_ms < 0) return bad("slow_call_threshold_ms must be 0 (off) or more");
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
  auto bad = [](const std::string& m) { return Status::InvalidArgument(m); };
  if (!ParseHostPort(listen).ok()) return ParseHostPort(listen).status();
  if (!ParseHostPort(http).ok()) return ParseHostPort(http).status();
  if (durability != "process" && durability != "power") {
    return bad("durability must be \"process\" or \"power\", not \"" + durability + "\"");
  }
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return bad("tls_cert_file and tls_key_file must be set together (the certificate and its key)");
  }
  if (max_connections < 1) return bad("max_connections must be at least 1");
  if (max_line_bytes < 1024) return bad("max_line_bytes must be at least 1024");
  if (line_timeout_seconds < 1) return bad("line_timeout_seconds must be at least 1");
  if (handshake_timeout_seconds < 1) return bad("handshake_timeout_seconds must be at least 1");
  if (max_json_depth < 8 || max_json_depth > 1000) {
    return bad("max_json_depth must be between 8 and 1000");
  }
  if (unsent_replies_pause_bytes < 4096)
    return bad("unsent_replies_pause_bytes must be at least 4096");
  if (max_unsent_reply_bytes < 2 * unsent_replies_pause_bytes) {
    return bad("max_unsent_reply_bytes (" + std::to_string(max_unsent_reply_bytes) +
               ") must be at least 2 x unsent_replies_pause_bytes (" +
               std::to_string(2 * unsent_replies_pause_bytes) + ")");
  }
  if (http_max_connections < 1) return bad("http_max_connections must be at least 1");
  if (login_failure_delay_ms < 0 || login_failure_delay_ms > 30000) {
    return bad("login_failure_delay_ms must be between 0 (off) and 30000");
  }
  if (fetch_block_ms < 0 || fetch_block_ms > 4000) {
    return bad("fetch_block_ms must be between 0 and 4000 (clients give up at 5 s)");
  }
  if (scheduler_interval_ms < 10) return bad("scheduler_interval_ms must be at least 10");
  if (reaper_interval_ms < 10) return bad("reaper_interval_ms must be at least 10");
  if (dead_ttl_days < 1) return bad("dead_ttl_days must be at least 1");
  if (default_retry < -1) return bad("default_retry must be -1 or more");
  if (vapid_subject.rfind("mailto:", 0) != 0 && vapid_subject.rfind("https://", 0) != 0) {
    return bad("vapid_subject must start with mailto: or https://");
  }
  if (delivery_outcomes_queue.empty()) return bad("delivery_outcomes_queue must not be empty");
  if (Status s = ValidateDelivery(delivery); !s.ok()) return s;
  for (const auto& [name, jt] : jobtypes) {
    if (jt.retry && *jt.retry < -1) return bad("jobtypes." + name + ".retry must be -1 or more");
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

namespace {

// The value of an integer node; nullopt for any other type. (toml++'s value<int64_t>() also
// converts floats, which is undefined behaviour for 1e30.)
std::optional<int64_t> IntegerOf(const toml::node& node) {
  if (const auto* i = node.as_integer()) return i->get();
  return std::nullopt;
}

// Reads one integer setting `name` (for messages) of a [delivery...] table into `out`, at least
// `min`; the range checks that relate settings to each other are Config::Validate's.
template <typename T>
Status ReadInt(const std::string& path, const std::string& name, const toml::node& node, T& out) {
  auto v = IntegerOf(node);
  if (!v || *v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max()) {
    return Status::InvalidArgument("config file " + path + ": " + name +
                                   " must be an integer (line " +
                                   std::to_string(node.source().begin.line) + ")");
  }
  out = static_cast<T>(*v);
  return Status::Ok();
}

Status LoadKindTable(const std::string& path, const std::string& prefix, const toml::table& t,
                     DeliveryKindSettings& k) {
  for (auto&& [key_view, node] : t) {
    std::string key(key_view.str());
    std::string name = prefix + "." + key;
    Status s;
    if (key == "connect_timeout_ms")
      s = ReadInt(path, name, node, k.connect_timeout_ms);
    else if (key == "first_byte_timeout_ms")
      s = ReadInt(path, name, node, k.first_byte_timeout_ms);
    else if (key == "total_timeout_ms")
      s = ReadInt(path, name, node, k.total_timeout_ms);
    else if (key == "low_speed_bytes_per_second") {
      s = ReadInt(path, name, node, k.low_speed_bytes_per_second);
    } else if (key == "low_speed_seconds")
      s = ReadInt(path, name, node, k.low_speed_seconds);
    else if (key == "deadline_hours" && prefix != "delivery.webpush") {
      s = ReadInt(path, name, node, k.deadline_hours);
    } else if (key == "deadline_hours") {
      s = Status::InvalidArgument("config file " + path + ": " + name +
                                  " is not a setting: webpush jobs expire with their own ttl");
    } else {
      s = Status::InvalidArgument("config file " + path + ": unknown key " + name);
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status LoadDeliveryTable(const std::string& path, const toml::node& node, const toml::table& root,
                         DeliverySettings& d) {
  const toml::table* t = node.as_table();
  if (!t) return Status::InvalidArgument("config file " + path + ": delivery must be a table");
  for (auto&& [key_view, value] : *t) {
    std::string key(key_view.str());
    std::string name = "delivery." + key;
    Status s;
    if (key == "webpush" || key == "activitypub" || key == "webhook") {
      const toml::table* kt = value.as_table();
      if (!kt)
        return Status::InvalidArgument("config file " + path + ": " + name + " must be a table");
      DeliveryKindSettings& k = key == "webpush"       ? d.webpush
                                : key == "activitypub" ? d.activitypub
                                                       : d.webhook;
      if (kt->contains("deadline_hours") && root.contains(key + "_deadline_hours")) {
        return Status::InvalidArgument("config file " + path + ": set either " + key +
                                       "_deadline_hours or " + name + ".deadline_hours, not both");
      }
      s = LoadKindTable(path, name, *kt, k);
    } else if (key == "global_max_in_flight")
      s = ReadInt(path, name, value, d.global_max_in_flight);
    else if (key == "host_cap_initial")
      s = ReadInt(path, name, value, d.host_cap_initial);
    else if (key == "host_cap_min")
      s = ReadInt(path, name, value, d.host_cap_min);
    else if (key == "host_cap_max")
      s = ReadInt(path, name, value, d.host_cap_max);
    else if (key == "breaker_failure_threshold") {
      s = ReadInt(path, name, value, d.breaker_failure_threshold);
    } else if (key == "breaker_open_min_seconds") {
      s = ReadInt(path, name, value, d.breaker_open_min_seconds);
    } else if (key == "breaker_open_max_seconds") {
      s = ReadInt(path, name, value, d.breaker_open_max_seconds);
    } else if (key == "unavailable_after_days") {
      s = ReadInt(path, name, value, d.unavailable_after_days);
    } else if (key == "max_retry_after_seconds") {
      s = ReadInt(path, name, value, d.max_retry_after_seconds);
    } else if (key == "slow_call_threshold_ms") {
      s = ReadInt(path, name, value, d.slow_call_threshold_ms);
    } else {
      s = Status::InvalidArgument("config file " + path + ": unknown key " + name);
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Result<Config> LoadConfigFile(const std::string& path, Config base) {
  toml::table tbl;
  try {
    tbl = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    std::string msg = "config file " + path + ": " + std::string(e.description());
    if (e.source().begin) {
      msg += " (line " + std::to_string(e.source().begin.line) + ")";
    }
    return Status::InvalidArgument(msg);
  }
  Config c = std::move(base);
  uint32_t line = 0;  // of the setting being read, for messages
  auto at = [&line]() { return line > 0 ? " (line " + std::to_string(line) + ")" : std::string(); };
  auto err = [&](const std::string& key, const std::string& want) {
    return Status::InvalidArgument("config file " + path + ": " + key + " must be " + want + at());
  };
  for (auto&& [k, binding] : tbl) {
    const toml::node& node = binding;  // a lambda cannot capture a structured binding (clang < 16)
    line = node.source().begin.line;
    std::string key(k.str());
    auto str = [&](std::string& out) -> Status {
      if (auto v = node.value<std::string>()) {
        out = *v;
        return Status::Ok();
      }
      return err(key, "a string");
    };
    auto integer = [&](auto& out) -> Status {
      using T = std::remove_reference_t<decltype(out)>;
      auto v = IntegerOf(node);
      if (!v) return err(key, "an integer");
      if (*v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max()) {
        return err(key, "an integer between " + std::to_string(std::numeric_limits<T>::min()) +
                            " and " + std::to_string(std::numeric_limits<T>::max()));
      }
      out = static_cast<T>(*v);
      return Status::Ok();
    };
    Status s;
    if (key == "listen")
      s = str(c.listen);
    else if (key == "http")
      s = str(c.http);
    else if (key == "data_dir")
      s = str(c.data_dir);
    else if (key == "store")
      s = str(c.store);
    else if (key == "durability")
      s = str(c.durability);
    else if (key == "password")
      s = str(c.password);
    else if (key == "tls_cert_file")
      s = str(c.tls_cert_file);
    else if (key == "tls_key_file")
      s = str(c.tls_key_file);
    else if (key == "log_level")
      s = str(c.log_level);
    else if (key == "vapid_private_key_file")
      s = str(c.vapid_private_key_file);
    else if (key == "vapid_subject")
      s = str(c.vapid_subject);
    else if (key == "delivery_outcomes_queue")
      s = str(c.delivery_outcomes_queue);
    else if (key == "activitypub_deadline_hours") {
      // The older spelling of [delivery.activitypub] deadline_hours (checked for conflicts below).
      s = integer(c.delivery.activitypub.deadline_hours);
    } else if (key == "webhook_deadline_hours") {
      s = integer(c.delivery.webhook.deadline_hours);
    } else if (key == "max_connections")
      s = integer(c.max_connections);
    else if (key == "max_line_bytes")
      s = integer(c.max_line_bytes);
    else if (key == "line_timeout_seconds")
      s = integer(c.line_timeout_seconds);
    else if (key == "handshake_timeout_seconds")
      s = integer(c.handshake_timeout_seconds);
    else if (key == "max_json_depth")
      s = integer(c.max_json_depth);
    else if (key == "unsent_replies_pause_bytes")
      s = integer(c.unsent_replies_pause_bytes);
    else if (key == "max_unsent_reply_bytes")
      s = integer(c.max_unsent_reply_bytes);
    else if (key == "http_max_connections")
      s = integer(c.http_max_connections);
    else if (key == "login_failure_delay_ms")
      s = integer(c.login_failure_delay_ms);
    else if (key == "fetch_block_ms")
      s = integer(c.fetch_block_ms);
    else if (key == "scheduler_interval_ms")
      s = integer(c.scheduler_interval_ms);
    else if (key == "reaper_interval_ms")
      s = integer(c.reaper_interval_ms);
    else if (key == "dead_ttl_days")
      s = integer(c.dead_ttl_days);
    else if (key == "default_retry")
      s = integer(c.default_retry);
    else if (key == "worker_timeout_seconds")
      s = integer(c.worker_timeout_seconds);
    else if (key == "allow_private_targets") {
      if (auto v = node.value<bool>())
        c.allow_private_targets = *v;
      else
        s = err(key, "true or false");
    } else if (key == "statsd") {
      const toml::table* st = node.as_table();
      if (!st) return err(key, "a table");
      for (auto&& [sk, sv] : *st) {
        std::string name = "statsd." + std::string(sk.str());
        if (sk.str() == "address" || sk.str() == "prefix" || sk.str() == "flavor") {
          auto v = sv.value<std::string>();
          if (!v) return err(name, "a string");
          (sk.str() == "address"  ? c.statsd.address
           : sk.str() == "prefix" ? c.statsd.prefix
                                  : c.statsd.flavor) = *v;
        } else if (sk.str() == "interval") {
          auto v = IntegerOf(sv);
          if (!v || *v < 1) return err(name, "a whole number of seconds, at least 1");
          c.statsd.interval_seconds = static_cast<int>(*v);
        } else if (sk.str() == "tags") {
          const toml::array* arr = sv.as_array();
          if (!arr) return err(name, "an array of \"key:value\" strings");
          c.statsd.tags.clear();
          for (auto&& t : *arr) {
            auto v = t.value<std::string>();
            if (!v) return err(name, "an array of \"key:value\" strings");
            c.statsd.tags.push_back(*v);
          }
        } else {
          return Status::InvalidArgument("config file " + path + ": unknown key " + name);
        }
      }
    } else if (key == "delivery") {
      s = LoadDeliveryTable(path, node, tbl, c.delivery);
    } else if (key == "jobtypes") {
      const toml::table* jts = node.as_table();
      if (!jts) return err(key, "a table of [jobtypes.NAME] tables");
      for (auto&& [name, jnode] : *jts) {
        const toml::table* jt = jnode.as_table();
        std::string prefix = "jobtypes." + std::string(name.str());
        if (!jt) return err(prefix, "a table");
        for (auto&& [jk, jv] : *jt) {
          if (jk.str() == "retry") {
            auto v = IntegerOf(jv);
            if (!v) return err(prefix + ".retry", "an integer");
            c.jobtypes[std::string(name.str())].retry = static_cast<int>(*v);
          } else {
            return Status::InvalidArgument("config file " + path + ": unknown key " + prefix + "." +
                                           std::string(jk.str()));
          }
        }
      }
    } else {
      return Status::InvalidArgument("config file " + path + ": unknown key " + key + at());
    }
    if (!s.ok()) return s;
  }
  // Faktory's convention: tls/public.crt and tls/private.key beside the configuration.
  if (c.tls_cert_file.empty() && c.tls_key_file.empty()) {
    std::filesystem::path dir = std::filesystem::path(path).parent_path() / "tls";
    std::error_code ec;
    if (std::filesystem::exists(dir / "public.crt", ec) &&
        std::filesystem::exists(dir / "private.key", ec)) {
      c.tls_cert_file = (dir / "public.crt").string();
      c.tls_key_file = (dir / "private.key").string();
    }
  }
  return c;
}

}  // namespace bulkhead
