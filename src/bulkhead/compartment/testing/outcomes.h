// Test-only: job ids and the classified outcomes the compartment suites report.
#pragma once

#include <string>

#include "bulkhead/compartment/outcome.h"

namespace bulkhead {

// "j<i>". Built by append: GCC 12 warns falsely (-Wrestrict) on "j" + std::to_string(i).
inline std::string JobId(int i) {
  std::string id = "j";
  id += std::to_string(i);
  return id;
}

inline const Outcome kOk{OutcomeClass::kOk, HostSignal::kHealthy, "http 201"};
inline const Outcome kGone{OutcomeClass::kGone, HostSignal::kHealthy, "http 410"};
inline const Outcome kTimeout{OutcomeClass::kRetryable, HostSignal::kFailure, "timeout"};
inline const Outcome k429{OutcomeClass::kRetryable, HostSignal::kOverloaded, "http 429"};
inline const Outcome kBlocked{OutcomeClass::kPermanent, HostSignal::kNone, "blocked_address"};

}  // namespace bulkhead
