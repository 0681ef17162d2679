#include "bulkhead/view/api_json.h"

#include "bulkhead/util/json.h"

namespace bulkhead {

std::string RenderWorkersJson(const std::vector<WorkerInfo>& workers) {
  nlohmann::json out = nlohmann::json::array();
  for (const WorkerInfo& w : workers) {
    out.push_back({{"wid", w.wid},
                   {"hostname", w.hostname},
                   {"pid", w.pid},
                   {"labels", w.labels},
                   {"state", WorkerStateName(w.state)},
                   {"connections", w.connections},
                   {"rss_kb", w.rss_kb}});
  }
  return DumpJson(out);
}

std::string RenderHostsJson(const HostsSeam& hosts) { return DumpJson(HostsJsonValue(hosts)); }

nlohmann::json HostsJsonValue(const HostsSeam& hosts) {
  return hosts.is_array() ? hosts : nlohmann::json::array();
}

}  // namespace bulkhead
