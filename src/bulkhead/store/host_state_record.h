// HostStateRecord: the failing state of one delivery destination host, as the store keeps it. The
// delivery engine (dispatch/Dispatcher) writes one while a host is failing and deletes it once the
// host is healthy again, so that a restart neither re-attempts a dead host's parked jobs nor
// restarts the period after which the host counts as unavailable. The store does not interpret
// the fields.
#pragma once

#include <cstdint>
#include <string>

namespace bulkhead {

struct HostStateRecord {
  std::string host;
  // Times are microseconds since the epoch; 0 means "none".
  // Circuit breaker: when it was last opened until (open, or half-open once past); 0 = closed.
  int64_t breaker_open_until_us = 0;
  // Openings in the breaker's current series (drives the growth of the open interval) and in all.
  int32_t breaker_series_openings = 0;
  int64_t breaker_openings = 0;
  // Since when the host has been failing continuously.
  int64_t failing_since_us = 0;
  // bulkhead.host_unavailable was announced (and bulkhead.host_available not yet).
  bool unavailable = false;
  // No attempt before this (the host's Retry-After).
  int64_t retry_after_until_us = 0;

  bool operator==(const HostStateRecord&) const = default;
};

}  // namespace bulkhead
