#include "bulkhead/view/delivery_gauges.h"

#include "bulkhead/compartment/circuit_breaker.h"
#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/view/host_view.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;

double Pick(const HostView& h, HostGauge gauge) {
  switch (gauge) {
    case HostGauge::kInFlight:
      return double(h.in_flight);
    case HostGauge::kCap:
      return double(h.cap);
    case HostGauge::kBreakerOpen:
      break;
  }
  return h.breaker == BreakerStateName(BreakerState::kClosed) ? 0.0 : 1.0;
}

}  // namespace

std::vector<std::pair<std::string, double>> HostGaugeValues(const DeliverySnapshot& snapshot,
                                                            HostGauge gauge) {
  std::vector<std::pair<std::string, double>> values;
  values.reserve(snapshot.hosts.size());
  for (const HostView& h : HostViewsFrom(snapshot)) values.emplace_back(h.host, Pick(h, gauge));
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
    (void)registry.RemoveCallback(name);  // NotFound for one never added: nothing to do
  }
}

}  // namespace bulkhead
