// The Sidekiq bridge's figures (bridge/bridge_snapshot.h) in INFO (under "sidekiq", read back for
// `bulkhead stats`) and in `bulkhead stats`' text; the /metrics figures are bridge_gauges.h's.
//   "sidekiq": {"up", "reason", "node", "redis", "outcomes_queue", "in_progress", "taken",
//               "repeats", "dead", "reaped", "outcomes_written", "outcomes_waiting",
//               "queues": {NAME: {"size", "latency"}}}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bulkhead/bridge/bridge_snapshot.h"

namespace bulkhead {

nlohmann::json BridgeJsonValue(const BridgeSnapshot& bridge);
// Missing or mistyped members read as 0, false or "?".
BridgeSnapshot ParseBridgeJson(const nlohmann::json& doc);
// The "sidekiq bridge" lines of `bulkhead stats`.
void AppendBridgeText(std::string& out, const BridgeSnapshot& bridge);

}  // namespace bulkhead
