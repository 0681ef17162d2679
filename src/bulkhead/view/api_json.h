// The HTTP API's JSON views of the server's figures. GET /api/info answers the INFO document
// itself (view/info_json.h); the rest are here, the delivery hosts' JSON among them (the one
// rendering of hosts for /api/hosts and INFO "hosts").
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bulkhead/engine/published_roster.h"
#include "bulkhead/view/host_view.h"

namespace bulkhead {

// GET /api/workers: [{"wid","node","hostname","pid","labels","state","last_beat","connections",
// "rss_kb"}, ...] in the order given (Engine::ClusterWorkers': this node's, then the other
// nodes'); node is "" on a store one process owns, last_beat RFC 3339.
std::string RenderWorkersJson(const std::vector<NodeWorker>& workers);

// GET /api/hosts: the delivery hosts array, in the order given (HostViewsFrom's: by host). Per
// host {host, in_flight, cap, breaker, breaker_openings, latency_p50_ms, latency_p99_ms,
// successes, failures, overloaded, parked, unavailable, failing_since, retry_after_until,
// breaker_open_until, last_error, last_error_at}: the HostView fields, latencies as floats, times
// RFC 3339 or null when unset, last_error a string or null when empty.
std::string RenderHostsJson(const std::vector<HostView>& hosts);

// The same array as a JSON value, for INFO's "hosts".
nlohmann::json HostsJsonValue(const std::vector<HostView>& hosts);

}  // namespace bulkhead
