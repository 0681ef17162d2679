// HostView: one delivery host as the views show it — the elements of /api/hosts and INFO "hosts",
// the HOST table of `bulkhead stats` and the bulkhead_host_* gauges. Built from the dispatcher's
// DeliverySnapshot (dispatch/delivery_snapshot.h) on the server's side, parsed back from the INFO
// document (view/info_json.h) on a client's; rendered only by view/ (api_json: the JSON,
// stats_text: the table, delivery_gauges: the gauges).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/dispatch/delivery_snapshot.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

// Field names are the JSON keys of /api/hosts.
struct HostView {
  std::string host;
  int64_t in_flight = 0;
  int64_t cap = 0;                 // the compartment's current in-flight limit
  std::string breaker = "closed";  // BreakerStateName: "closed", "open", "half_open"
  int64_t breaker_openings = 0;
  double latency_p50_ms = 0;  // 0 before the first attempt
  double latency_p99_ms = 0;
  int64_t successes = 0;
  int64_t failures = 0;
  int64_t overloaded = 0;
  int64_t parked = 0;
  bool unavailable = false;  // announced unavailable (bulkhead.host_unavailable)
  std::optional<TimePoint> failing_since;
  std::optional<TimePoint> retry_after_until;
  // Unset while the breaker is closed (see CompartmentSnapshot::breaker_open_until).
  std::optional<TimePoint> breaker_open_until;
  // The reason of the last failed or overloaded attempt and its time; "" and unset before any
  // (see CompartmentSnapshot::last_error).
  std::string last_error;
  std::optional<TimePoint> last_error_at;

  bool operator==(const HostView&) const = default;
};

// One view per host of `snapshot`, in its order (by host).
std::vector<HostView> HostViewsFrom(const DeliverySnapshot& snapshot);

}  // namespace bulkhead
