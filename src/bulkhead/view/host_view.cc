#include "bulkhead/view/host_view.h"

#include "bulkhead/compartment/circuit_breaker.h"

namespace bulkhead {
namespace {

double Millis(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

std::vector<HostView> HostViewsFrom(const DeliverySnapshot& snapshot) {
  std::vector<HostView> views;
  views.reserve(snapshot.hosts.size());
  for (const CompartmentSnapshot& s : snapshot.hosts) {
    HostView v;
    v.host = s.host;
    v.in_flight = s.in_flight;
    v.cap = s.limit;
    v.breaker = BreakerStateName(s.breaker);
    v.breaker_openings = s.breaker_openings;
    v.latency_p50_ms = Millis(s.latency_p50);
    v.latency_p99_ms = Millis(s.latency_p99);
    v.successes = s.successes;
    v.failures = s.failures;
    v.overloaded = s.overloaded;
    v.parked = static_cast<int64_t>(s.parked);
    v.unavailable = s.unavailable;
    v.failing_since = s.failing_since;
    v.retry_after_until = s.retry_after_until;
    v.breaker_open_until = s.breaker_open_until;
    v.last_error = s.last_error;
    v.last_error_at = s.last_error_at;
    views.push_back(std::move(v));
  }
  return views;
}

}  // namespace bulkhead
