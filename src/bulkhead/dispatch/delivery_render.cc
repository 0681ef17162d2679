#include "bulkhead/dispatch/delivery_render.h"

#include <nlohmann/json.hpp>

#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;

double Millis(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

nlohmann::json TimeOrNull(const std::optional<TimePoint>& t) {
  return t ? nlohmann::json(FormatRfc3339(*t)) : nlohmann::json(nullptr);
}

double Pick(const CompartmentSnapshot& s, HostGauge gauge) {
  switch (gauge) {
    case HostGauge::kInFlight:
      return double(s.in_flight);
    case HostGauge::kCap:
      return double(s.limit);
    case HostGauge::kBreakerOpen:
      break;
  }
  return s.breaker == BreakerState::kClosed ? 0.0 : 1.0;
}

}  // namespace

std::string RenderHostsJson(const DeliverySnapshot& snapshot) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : snapshot.hosts) {
    nlohmann::json h = {{"host", s.host},
                        {"in_flight", s.in_flight},
                        {"cap", s.limit},
                        {"breaker", BreakerStateName(s.breaker)},
                        {"breaker_openings", s.breaker_openings},
                        {"latency_p50_ms", Millis(s.latency_p50)},
                        {"latency_p99_ms", Millis(s.latency_p99)},
                        {"successes", s.successes},
                        {"failures", s.failures},
                        {"overloaded", s.overloaded},
                        {"parked", s.parked},
                        {"unavailable", s.unavailable}};
    h["failing_since"] = TimeOrNull(s.failing_since);
    h["retry_after_until"] = TimeOrNull(s.retry_after_until);
    out.push_back(std::move(h));
  }
  return DumpJson(out);
}

std::vector<std::pair<std::string, double>> HostGaugeValues(const DeliverySnapshot& snapshot,
                                                            HostGauge gauge) {
  std::vector<std::pair<std::string, double>> values;
  values.reserve(snapshot.hosts.size());
  for (const auto& s : snapshot.hosts) values.emplace_back(s.host, Pick(s, gauge));
  return values;
}

Status RegisterDeliveryGauges(Registry& registry, const PublishedDeliverySnapshot& published,
                              TopNLabels& labels) {
  struct Gauge {
    std::string_view name, help;
    HostGauge which;
  };
  const Gauge gauges[] = {
      {mn::kHostInflight, mn::kHostInflightHelp, HostGauge::kInFlight},
      {mn::kHostCap, mn::kHostCapHelp, HostGauge::kCap},
      {mn::kHostBreakerOpen, mn::kHostBreakerOpenHelp, HostGauge::kBreakerOpen},
  };
  for (const auto& g : gauges) {
    Status s = registry.AddCallbackGauge(
        g.name, g.help, {std::string(mn::kLabelHost)},
        [&published, &labels, which = g.which]() -> Result<std::vector<MetricSample>> {
          return labels.Fold(HostGaugeValues(*published.Latest(), which));
        });
    if (!s.ok()) return s;
  }
  return registry.AddCallbackGauge(mn::kParkedJobs, mn::kParkedJobsHelp, {},
                                   [&published]() -> Result<std::vector<MetricSample>> {
                                     double parked =
                                         static_cast<double>(published.Latest()->parked);
                                     return std::vector<MetricSample>{MetricSample{{}, parked}};
                                   });
}

void RemoveDeliveryGauges(Registry& registry) {
  for (auto name : {mn::kHostInflight, mn::kHostCap, mn::kHostBreakerOpen, mn::kParkedJobs}) {
    (void)registry.RemoveCallback(name);
  }
}

}  // namespace bulkhead
