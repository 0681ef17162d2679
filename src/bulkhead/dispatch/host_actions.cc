// Dispatcher's operator actions on one host (dispatcher.h ProbeHostNow, ForgetHostFailures).
#include "bulkhead/dispatch/dispatcher.h"

namespace bulkhead {

Status Dispatcher::ProbeHostNow(const std::string& host) {
  Compartment* c = compartments_.Find(host);
  if (c == nullptr) return Status::NotFound("no delivery host \"" + host + "\"");
  TimePoint now = clock_.Now();
  CompartmentState state = c->State(now);
  if (!state.breaker_open_until) {
    return Status::FailedPrecondition("the breaker of " + host + " is not open");
  }
  state.breaker_open_until = now;
  state.retry_after_until.reset();
  compartments_.Restore(host, state, now);
  host_states_.AfterResult(host, now);
  Pump();
  return Status::Ok();
}

Status Dispatcher::ForgetHostFailures(const std::string& host) {
  Compartment* c = compartments_.Find(host);
  if (c == nullptr) return Status::NotFound("no delivery host \"" + host + "\"");
  TimePoint now = clock_.Now();
  CompartmentState state;
  state.breaker_openings = c->breaker().openings();
  c->ForgetLastError();
  compartments_.Restore(host, state, now);
  host_states_.AfterResult(host, now);
  Pump();
  return Status::Ok();
}

}  // namespace bulkhead
