#include "bulkhead/view/cluster_view.h"

namespace bulkhead {
namespace {

int64_t IntOr(const nlohmann::json& doc, const char* key, int64_t otherwise) {
  if (!doc.is_object()) return otherwise;
  auto it = doc.find(key);
  return it != doc.end() && it->is_number_integer() ? it->get<int64_t>() : otherwise;
}

}  // namespace

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
  return ClusterView{IntOr(doc, "cluster_nodes", 1), IntOr(doc, "max_in_flight", 0),
                     IntOr(doc, "in_flight", 0), IntOr(doc, "host_cap_min", 0),
                     IntOr(doc, "host_cap_max", 0)};
}

}  // namespace bulkhead
