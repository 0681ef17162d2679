// Fault: how the replay's faulty push endpoint misbehaves. Each one is a way a remote host hurt a
// real delivery pipeline; the names are the `bulkhead replay --fault` values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/util/status.h"

namespace bulkhead {

enum class Fault {
  kNone,       // healthy: 201 Created at once (the baseline, and the healthy endpoint)
  kBlackhole,  // accepts, reads the request, never answers (the incident's relay)
  kSlowDrip,   // sends headers, then one body byte every 5 s
  kRefuse,     // nothing listens: connect is refused
  kReset,      // reads the request, then resets the connection
  k5xx,        // answers 500 Internal Server Error at once
  k429,        // answers 429 Too Many Requests with Retry-After
  kLate,       // answers 201 after 40 s
};

// "blackhole", "slow-drip", "refuse", "reset", "5xx", "429", "late" (and "none").
// InvalidArgument lists the valid names.
Result<Fault> ParseFault(std::string_view name);
std::string_view FaultName(Fault fault);
// Completes "a host that ...", e.g. "accepts and never answers".
std::string_view FaultDescription(Fault fault);
// Every fault but kNone, in the order above.
const std::vector<Fault>& AllFaults();

}  // namespace bulkhead
