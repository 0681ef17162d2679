// The HTTP API's JSON views of the server's figures. GET /api/info answers the INFO document
// itself (view/info_json.h); the rest are here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/view/info_snapshot.h"

namespace bulkhead {

// GET /api/workers: [{"wid","hostname","pid","labels","state","connections","rss_kb"}, ...] in
// the order given (the engine's: by wid).
std::string RenderWorkersJson(const std::vector<WorkerInfo>& workers);

// GET /api/hosts: the delivery hosts array (see HostsSeam for its elements).
std::string RenderHostsJson(const HostsSeam& hosts);

// The hosts array as a JSON value, for INFO's "hosts" and RenderHostsJson. SEAM(#10): an identity
// today; renders dispatch/delivery_snapshot.h's structs once they replace HostsSeam.
nlohmann::json HostsJsonValue(const HostsSeam& hosts);

}  // namespace bulkhead
