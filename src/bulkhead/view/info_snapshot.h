// InfoSnapshot: everything the server's views show, as plain data — the engine's figures, the
// process's own figures and the delivery hosts. Producers: Engine::Snapshot (engine/), the Server
// (server/server.cc: connections, memory, hosts). Renderers: view/ only (info_json, api_json,
// stats_text, metrics_gauges).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "bulkhead/engine/engine_snapshot.h"

namespace bulkhead {

// Figures of the process around the engine.
struct ServerFigures {
  std::string version = BULKHEAD_VERSION;
  int64_t connections = 0;     // open Faktory connections (FwpServer::counters())
  int64_t command_count = 0;   // Faktory commands served since start
  int64_t used_memory_mb = 0;  // resident set size
};

// SEAM(#10, delivery snapshot): the delivery hosts as the dispatcher provides them today — the
// JSON array of Dispatcher::HostsJson(), each element {"host","in_flight","cap","breaker",
// "breaker_openings","latency_p50_ms","latency_p99_ms","successes","failures","overloaded",
// "parked","unavailable","failing_since","retry_after_until"}. When dispatch/delivery_snapshot.h
// lands, this alias becomes its struct vector, and the three places that read it change with it:
// server/server.cc HostsFromDispatcher (producer), view/api_json.cc HostsJsonValue (INFO's
// "hosts" and /api/hosts) and view/stats_text.cc (the HOST table).
using HostsSeam = nlohmann::json;

struct InfoSnapshot {
  EngineSnapshot engine;
  ServerFigures server;
  std::optional<HostsSeam> hosts;  // nullopt: no dispatcher (INFO then has no "hosts" key)
};

}  // namespace bulkhead
