// InfoSnapshot: everything INFO shows, as plain data — the engine's figures, the process's own
// figures and the delivery hosts. Producers: Engine::Snapshot (engine/), the Server
// (server/server.cc: connections, memory, and the hosts from Dispatcher::Snapshot through
// view/host_view.h HostViewsFrom), and ParseInfoJson for clients of INFO. Renderers: view/info_json
// (INFO, GET /api/info) and view/stats_text (`bulkhead stats`). The /metrics figures are rendered
// from the snapshots themselves (view/metrics_gauges.h from an EngineSnapshot,
// view/delivery_gauges.h from a DeliverySnapshot), the hosts of /api/hosts by view/api_json.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/bridge/bridge_snapshot.h"
#include "bulkhead/engine/engine_snapshot.h"
#include "bulkhead/relay/relay_figures.h"
#include "bulkhead/view/cluster_view.h"
#include "bulkhead/view/host_view.h"

namespace bulkhead {

// Figures of the process around the engine.
struct ServerFigures {
  std::string version = BULKHEAD_VERSION;
  int64_t connections = 0;     // open Faktory connections (FwpServer::counters())
  int64_t command_count = 0;   // Faktory commands served since start
  int64_t used_memory_mb = 0;  // resident set size
};

struct InfoSnapshot {
  EngineSnapshot engine;
  ServerFigures server;
  std::optional<std::vector<HostView>> hosts;  // nullopt: no dispatcher (INFO has no "hosts" key)
  // This node's share of the cluster-wide delivery caps; nullopt: no dispatcher (no
  // "delivery" key).
  std::optional<ClusterView> delivery;
  // The Sidekiq bridge's figures; nullopt: the bridge is off (no "sidekiq" key).
  std::optional<BridgeSnapshot> sidekiq;
  // The push relay's figures; nullopt: no relay (no "relay" key).
  std::optional<RelaySnapshot> relay;
};

}  // namespace bulkhead
