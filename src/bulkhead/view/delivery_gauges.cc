#include "bulkhead/view/delivery_gauges.h"

#include <optional>

#include "bulkhead/compartment/compartment.h"
#include "bulkhead/metrics/metric_names.h"
#include "bulkhead/view/fresh_figures.h"

namespace bulkhead {
namespace {

namespace mn = metric_names;
using Samples = Result<std::vector<MetricSample>>;

double Pick(const CompartmentSnapshot& h, HostGauge gauge) {
  switch (gauge) {
    case HostGauge::kInFlight:
      return double(h.in_flight);
    case HostGauge::kCap:
      return double(h.limit);
    case HostGauge::kBreakerOpen:
      break;
  }
  return h.breaker == BreakerState::kClosed ? 0.0 : 1.0;
}

double Parked(const DeliverySnapshot& s) { return double(s.parked); }
double ClusterNodes(const DeliverySnapshot& s) { return double(s.cluster_nodes); }
double MaxInFlight(const DeliverySnapshot& s) { return double(s.max_in_flight); }
double HostCapMax(const DeliverySnapshot& s) { return double(s.host_cap_max); }

// Every family: RegisterDeliveryGauges adds them, RemoveDeliveryGauges removes them.
struct DeliveryFamily {
  std::string_view name, help;
  std::optional<HostGauge> host;  // per host (labelled by host); nullopt: one total
  double (*total)(const DeliverySnapshot&) = nullptr;  // the total's value (host: nullopt)
};
const DeliveryFamily kDeliveryFamilies[] = {
    {mn::kHostInflight, mn::kHostInflightHelp, HostGauge::kInFlight},
    {mn::kHostCap, mn::kHostCapHelp, HostGauge::kCap},
    {mn::kHostBreakerOpen, mn::kHostBreakerOpenHelp, HostGauge::kBreakerOpen},
    {mn::kParkedJobs, mn::kParkedJobsHelp, std::nullopt, Parked},
    // Cluster-wide caps.
    {mn::kClusterNodes, mn::kClusterNodesHelp, std::nullopt, ClusterNodes},
    {mn::kDeliveryMaxInflight, mn::kDeliveryMaxInflightHelp, std::nullopt, MaxInFlight},
    {mn::kDeliveryHostCapMax, mn::kDeliveryHostCapMaxHelp, std::nullopt, HostCapMax},
};

}  // namespace

std::vector<std::pair<std::string, double>> HostGaugeValues(const DeliverySnapshot& snapshot,
                                                            HostGauge gauge) {
  std::vector<std::pair<std::string, double>> values;
  values.reserve(snapshot.hosts.size());
  for (const CompartmentSnapshot& h : snapshot.hosts) values.emplace_back(h.host, Pick(h, gauge));
  return values;
}

Status RegisterDeliveryGauges(Registry& registry, const Published<DeliverySnapshot>& published,
                              TopNLabels& labels, const Clock& clock, Duration max_age) {
  const FreshSource<DeliverySnapshot> src{published, &DeliverySnapshot::at, clock, max_age,
                                          "delivery snapshot"};
  for (const DeliveryFamily& g : kDeliveryFamilies) {
    std::vector<std::string> label_names;
    if (g.host) label_names.emplace_back(mn::kLabelHost);
    Status s = registry.AddCallbackGauge(
        g.name, g.help, std::move(label_names),
        [src, &labels, host = g.host, total = g.total]() -> Samples {
          auto latest = LatestFresh(src);
          if (!latest.ok()) return latest.status();
          if (host) return labels.Fold(HostGaugeValues(**latest, *host));
          return std::vector<MetricSample>{MetricSample{{}, total(**latest)}};
        });
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

void RemoveDeliveryGauges(Registry& registry) {
  for (const DeliveryFamily& g : kDeliveryFamilies) {
    (void)registry.RemoveCallback(g.name);  // NotFound for one never added: nothing to do
  }
}

}  // namespace bulkhead
