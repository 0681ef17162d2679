#include "bulkhead/view/cluster_view.h"

#include "bulkhead/view/json_read.h"

namespace bulkhead {

ClusterView ClusterViewFrom(const DeliverySnapshot& snapshot) {
  return ClusterView{snapshot.cluster_nodes, snapshot.max_in_flight, snapshot.in_flight,
                     snapshot.host_cap_min, snapshot.host_cap_max};
}

nlohmann::json ClusterJsonValue(const ClusterView& view) {
  return {{"cluster_nodes", view.cluster_nodes},
          {"max_in_flight", view.max_in_flight},
          {"in_flight", view.in_flight},
          {"host_cap_min", view.host_cap_min},
          {"host_cap_max", view.host_cap_max}};
}

ClusterView ParseClusterJson(const nlohmann::json& doc) {
  using json_read::Int;
  return ClusterView{Int(doc, "cluster_nodes", 1), Int(doc, "max_in_flight"), Int(doc, "in_flight"),
                     Int(doc, "host_cap_min"), Int(doc, "host_cap_max")};
}

}  // namespace bulkhead
