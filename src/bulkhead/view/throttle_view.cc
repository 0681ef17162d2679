#include "bulkhead/view/throttle_view.h"

#include <fmt/printf.h>

namespace bulkhead {
namespace {

size_t Count(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_unsigned() ? it->get<size_t>() : 0;
}

}  // namespace

nlohmann::json ThrottlesJson(const std::vector<ThrottleSnapshot>& throttles) {
  nlohmann::json out = nlohmann::json::object();
  for (const ThrottleSnapshot& t : throttles) {
    nlohmann::json entry = {{t.per_worker ? "worker" : "concurrency", t.limit},
                            {"timeout", t.timeout_seconds},
                            {"in_use", t.in_use}};
    if (t.per_worker) entry["max_per_worker"] = t.max_per_worker;
    out[t.queue] = std::move(entry);
  }
  return out;
}

std::vector<ThrottleSnapshot> ParseThrottlesJson(const nlohmann::json& throttles) {
  std::vector<ThrottleSnapshot> out;
  if (!throttles.is_object()) return out;
  for (const auto& [queue, t] : throttles.items()) {
    if (!t.is_object()) continue;
    ThrottleSnapshot s{.queue = queue};
    s.per_worker = t.contains("worker");
    s.limit = static_cast<int>(Count(t, s.per_worker ? "worker" : "concurrency"));
    s.timeout_seconds = static_cast<int>(Count(t, "timeout"));
    s.in_use = Count(t, "in_use");
    s.max_per_worker = Count(t, "max_per_worker");
    out.push_back(std::move(s));
  }
  return out;
}

void AppendThrottlesText(std::string& out, const std::vector<ThrottleSnapshot>& throttles) {
  if (throttles.empty()) return;
  out += fmt::sprintf("\n%-32s %-12s %6s %8s %10s %8s\n", "THROTTLE", "KIND", "LIMIT", "IN_USE",
                      "MAX/WORKER", "TIMEOUT");
  for (const ThrottleSnapshot& t : throttles) {
    std::string max = t.per_worker ? std::to_string(t.max_per_worker) : "-";
    out += fmt::sprintf("%-32s %-12s %6d %8lld %10s %7ds\n", t.queue,
                        t.per_worker ? "worker" : "concurrency", t.limit,
                        static_cast<long long>(t.in_use), max, t.timeout_seconds);
  }
}

std::vector<MetricSample> ThrottleSamples(const std::vector<ThrottleSnapshot>& throttles,
                                          ThrottleFigure figure) {
  std::vector<MetricSample> out;
  for (const ThrottleSnapshot& t : throttles) {
    switch (figure) {
      case ThrottleFigure::kLimit:
        out.push_back(MetricSample{{t.queue}, static_cast<double>(t.limit)});
        break;
      case ThrottleFigure::kInUse:
        out.push_back(MetricSample{{t.queue}, static_cast<double>(t.in_use)});
        break;
      case ThrottleFigure::kWorkerMaxInUse:
        if (t.per_worker) {
          out.push_back(MetricSample{{t.queue}, static_cast<double>(t.max_per_worker)});
        }
        break;
    }
  }
  return out;
}

}  // namespace bulkhead
