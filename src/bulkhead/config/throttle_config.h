// ThrottleConfig: the [throttles] table of the config file, Faktory Enterprise's form
// (docs/research/faktory-enterprise.md §1):
//
//   [throttles]
//   push = { concurrency = 5, timeout = 60 }  # at most 5 jobs of queue `push` reserved at once,
//                                             # across all workers and all nodes
//   bulk = { worker = 2, timeout = 60 }       # at most 2 per worker process (per wid)
//
// The table key is the queue name. Exactly one of `concurrency` and `worker` (1..100000) and a
// `timeout` (seconds, 1..86400) are required: Faktory says "all throttles must have a timeout", so
// a throttle without one is refused rather than given a default.
#pragma once

#include <map>
#include <string>

#include "bulkhead/util/status.h"

namespace toml {
inline namespace v3 {
class node;
}  // namespace v3
}  // namespace toml

namespace bulkhead {

struct ThrottleConfig {
  // True: `worker = N` (N per wid); false: `concurrency = N` (N in all).
  bool per_worker = false;
  int limit = 0;
  // A slot is released this long after its FETCH even without ACK or FAIL.
  int timeout_seconds = 0;

  bool operator==(const ThrottleConfig&) const = default;
};

// Queue name -> its throttle.
using ThrottleConfigs = std::map<std::string, ThrottleConfig>;

inline constexpr int kMaxThrottleLimit = 100000;
inline constexpr int kMaxThrottleTimeoutSeconds = 86400;

// Reads the [throttles] table into `out` (entries replace those of the same queue). The error
// names `throttles.QUEUE` and the problem; the caller adds the file and line (of `*where`, the node
// at fault, set whenever an error is returned).
Status ReadThrottles(const toml::node& table, ThrottleConfigs& out, const toml::node** where);

// Checks one throttle's ranges; the error names `throttles.QUEUE`.
Status ValidateThrottle(const std::string& queue, const ThrottleConfig& t);

}  // namespace bulkhead
