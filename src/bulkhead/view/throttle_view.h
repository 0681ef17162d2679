// The queue throttles' figures (engine_snapshot.h ThrottleSnapshot) in each view: the
// "throttles" object of INFO and /api/info (present only when a throttle is configured, so INFO
// without throttles is unchanged), its reading back for `bulkhead stats`, the THROTTLE table of
// `bulkhead stats`, and the samples of the /metrics families bulkhead_throttle_*.
//
// INFO shape (bulkhead's own: Faktory documents no INFO field for throttles):
//   "throttles": {"push": {"concurrency": 3, "timeout": 60, "in_use": 2},
//                 "bulk": {"worker": 2, "timeout": 60, "in_use": 5, "max_per_worker": 2}}
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bulkhead/engine/engine_snapshot.h"
#include "bulkhead/metrics/registry.h"

namespace bulkhead {

nlohmann::json ThrottlesJson(const std::vector<ThrottleSnapshot>& throttles);
// The inverse of ThrottlesJson; entries that are not objects are skipped, missing numbers are 0.
std::vector<ThrottleSnapshot> ParseThrottlesJson(const nlohmann::json& throttles);

// Appends the THROTTLE table (nothing when there is no throttle).
void AppendThrottlesText(std::string& out, const std::vector<ThrottleSnapshot>& throttles);

// One sample per throttle, labelled by queue: its limit, the slots held, or (per-worker throttles
// only) the most one worker holds.
enum class ThrottleFigure { kLimit, kInUse, kWorkerMaxInUse };
std::vector<MetricSample> ThrottleSamples(const std::vector<ThrottleSnapshot>& throttles,
                                          ThrottleFigure figure);

}  // namespace bulkhead
