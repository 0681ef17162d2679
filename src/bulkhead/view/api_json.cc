#include "bulkhead/view/api_json.h"

#include "bulkhead/util/json.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

nlohmann::json TimeOrNull(const std::optional<TimePoint>& t) {
  return t ? nlohmann::json(FormatRfc3339(*t)) : nlohmann::json(nullptr);
}

}  // namespace

std::string RenderWorkersJson(const std::vector<NodeWorker>& workers) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [node, w] : workers) {
    out.push_back({{"wid", w.wid},
                   {"node", node},
                   {"last_beat", FormatRfc3339(w.last_beat)},
                   {"hostname", w.hostname},
                   {"pid", w.pid},
                   {"labels", w.labels},
                   {"state", WorkerStateName(w.state)},
                   {"connections", w.connections},
                   {"rss_kb", w.rss_kb}});
  }
  return DumpJson(out);
}

std::string RenderHostsJson(const std::vector<HostView>& hosts) {
  return DumpJson(HostsJsonValue(hosts));
}

nlohmann::json HostsJsonValue(const std::vector<HostView>& hosts) {
  nlohmann::json out = nlohmann::json::array();
  for (const HostView& h : hosts) {
    out.push_back({{"host", h.host},
                   {"in_flight", h.in_flight},
                   {"cap", h.cap},
                   {"breaker", h.breaker},
                   {"breaker_openings", h.breaker_openings},
                   {"latency_p50_ms", h.latency_p50_ms},
                   {"latency_p99_ms", h.latency_p99_ms},
                   {"successes", h.successes},
                   {"failures", h.failures},
                   {"overloaded", h.overloaded},
                   {"parked", h.parked},
                   {"unavailable", h.unavailable},
                   {"failing_since", TimeOrNull(h.failing_since)},
                   {"retry_after_until", TimeOrNull(h.retry_after_until)},
                   {"breaker_open_until", TimeOrNull(h.breaker_open_until)},
                   {"last_error",
                    h.last_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(h.last_error)},
                   {"last_error_at", TimeOrNull(h.last_error_at)}});
  }
  return out;
}

}  // namespace bulkhead
