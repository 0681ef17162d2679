// The push relay's figures (relay/relay_figures.h) as INFO's "relay" object (docs/protocol.md,
// "INFO"; docs/relay.md): {"listen": ADDRESS, "apps": [{"app", "service", "target", "accepted",
// "forwarded", "retried", "dead", "gone", "unsubscribes", "refused": {STATUS: N},
// "reasons": {REASON: N}, "forward_latency_mean_ms" (absent before the first answer),
// "stopped": {"reason", "until"} (only while stopped)}]}.
#pragma once

#include <nlohmann/json.hpp>

#include "bulkhead/relay/relay_figures.h"

namespace bulkhead {

nlohmann::json RelayJsonValue(const RelaySnapshot& relay);

}  // namespace bulkhead
