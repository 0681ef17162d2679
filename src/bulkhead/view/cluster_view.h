// ClusterView: this node's share of the cluster-wide delivery caps, as INFO shows it under
// "delivery": {"cluster_nodes", "max_in_flight", "in_flight", "host_cap_min", "host_cap_max"}.
// Built from the dispatcher's DeliverySnapshot on the server's side, parsed back from the INFO
// document on a client's (view/info_json.h). The same figures are on /metrics
// (view/delivery_gauges.h: bulkhead_cluster_nodes, bulkhead_delivery_max_inflight,
// bulkhead_delivery_host_cap_max), each with the node label of a per-node figure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "bulkhead/dispatch/delivery_snapshot.h"

namespace bulkhead {

// Field names are the JSON keys.
struct ClusterView {
  int64_t cluster_nodes = 1;  // live nodes sharing the store, as this node last learned
  int64_t max_in_flight = 0;  // this node's global cap: global_max_in_flight / cluster_nodes
  int64_t in_flight = 0;      // this node's deliveries in flight, all hosts
  int64_t host_cap_min = 0;   // this node's bounds of every host's adaptive cap
  int64_t host_cap_max = 0;

  bool operator==(const ClusterView&) const = default;
};

ClusterView ClusterViewFrom(const DeliverySnapshot& snapshot);
nlohmann::json ClusterJsonValue(const ClusterView& view);
// Missing or mistyped members read as 0 (cluster_nodes as 1).
ClusterView ParseClusterJson(const nlohmann::json& doc);

}  // namespace bulkhead
