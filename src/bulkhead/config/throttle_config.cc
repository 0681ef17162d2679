#include "bulkhead/config/throttle_config.h"

#include <toml++/toml.h>

namespace bulkhead {
namespace {

Status Bad(const std::string& queue, const std::string& problem) {
  return Status::InvalidArgument("throttles." + queue + ": " + problem);
}

// Reads one `QUEUE = { ... }` entry; sets *where to the node at fault on error.
Status ReadOne(const std::string& queue, const toml::node& node, ThrottleConfig& t,
               const toml::node** where) {
  *where = &node;
  const toml::table* table = node.as_table();
  if (!table) {
    return Bad(queue,
               "must be a table such as { concurrency = 5, timeout = 60 } or "
               "{ worker = 2, timeout = 60 }");
  }
  bool has_concurrency = false, has_worker = false, has_timeout = false;
  for (auto&& [key, value] : *table) {
    *where = &value;
    std::string k(key.str());
    if (k != "concurrency" && k != "worker" && k != "timeout") {
      return Bad(queue, "unknown key " + k + " (expected concurrency or worker, and timeout)");
    }
    const auto* integer = value.as_integer();
    if (!integer) return Bad(queue, k + " must be an integer");
    int64_t n = integer->get();
    int64_t max = k == "timeout" ? kMaxThrottleTimeoutSeconds : kMaxThrottleLimit;
    if (n <= 0 || n > max) {
      return Bad(queue, k + " must be 1 to " + std::to_string(max) + ", not " + std::to_string(n));
    }
    if (k == "timeout") {
      has_timeout = true;
      t.timeout_seconds = static_cast<int>(n);
    } else {
      (k == "worker" ? has_worker : has_concurrency) = true;
      t.per_worker = k == "worker";
      t.limit = static_cast<int>(n);
    }
  }
  *where = &node;
  if (has_concurrency && has_worker) {
    return Bad(queue, "set either concurrency (for all workers) or worker (per worker), not both");
  }
  if (!has_concurrency && !has_worker) {
    return Bad(queue, "needs concurrency = N (for all workers) or worker = N (per worker)");
  }
  if (!has_timeout) {
    return Bad(queue,
               "needs timeout = SECONDS (how long a job may hold its slot without ACK or FAIL; "
               "Faktory requires one)");
  }
  return Status::Ok();
}

}  // namespace

Status ReadThrottles(const toml::node& node, ThrottleConfigs& out, const toml::node** where) {
  *where = &node;
  const toml::table* table = node.as_table();
  if (!table) {
    return Status::InvalidArgument(
        "throttles must be a table: [throttles] QUEUE = { concurrency = N, timeout = SECONDS }");
  }
  for (auto&& [name, entry] : *table) {
    std::string queue(name.str());
    ThrottleConfig t;
    if (Status s = ReadOne(queue, entry, t, where); !s.ok()) return s;
    out[queue] = t;
  }
  return Status::Ok();
}

Status ValidateThrottle(const std::string& queue, const ThrottleConfig& t) {
  if (queue.empty()) return Bad(queue, "the queue name is empty");
  if (t.limit <= 0 || t.limit > kMaxThrottleLimit) {
    return Bad(queue, std::string(t.per_worker ? "worker" : "concurrency") + " must be 1 to " +
                          std::to_string(kMaxThrottleLimit));
  }
  if (t.timeout_seconds <= 0 || t.timeout_seconds > kMaxThrottleTimeoutSeconds) {
    return Bad(queue, "timeout must be 1 to " + std::to_string(kMaxThrottleTimeoutSeconds));
  }
  return Status::Ok();
}

}  // namespace bulkhead
