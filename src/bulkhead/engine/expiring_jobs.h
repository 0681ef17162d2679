// Expiring jobs (Faktory Enterprise's "Expiring Jobs", docs/research/faktory-enterprise.md §3): a
// job pushed with `custom.expires_at` (RFC 3339, fractions allowed) or `custom.expires_in`
// (seconds) is dropped instead of handed out when a FETCH reaches it after that time.
// `expires_in` counts from the PUSH: PrepareExpiry turns it into `expires_at` then (as the Go
// client's SetExpiresIn does), so a scheduled or retried job expires at the same instant.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Checks the expiry fields of `doc` (a job's payload) at PUSH and, for `expires_in`, writes
// `custom.expires_at` = now + expires_in (with both, the earlier time is kept). Returns whether
// `doc` changed. InvalidArgument names the field: an expires_at that is not an RFC 3339 string, an
// expires_in that is not a non-negative number.
Result<bool> PrepareExpiry(nlohmann::json& doc, TimePoint now);

// The expiry of `doc` as PrepareExpiry left it; nullopt when it has none (or it does not parse).
std::optional<TimePoint> ExpiresAt(const nlohmann::json& doc);

}  // namespace bulkhead
