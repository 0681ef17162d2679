// Views of a DeliverySnapshot: the /api/hosts (and INFO "hosts") JSON, and the per-host metric
// gauges. Free functions over the plain struct, so they depend on nothing live.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bulkhead/dispatch/delivery_snapshot.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The JSON array for /api/hosts and INFO "hosts": per host {host, in_flight, cap, breaker,
// breaker_openings, latency_p50_ms, latency_p99_ms, successes, failures, overloaded, parked,
// unavailable, failing_since, retry_after_until} (times RFC 3339, null when unset).
std::string RenderHostsJson(const DeliverySnapshot& snapshot);

// The per-host values of one gauge, by host.
enum class HostGauge { kInFlight, kCap, kBreakerOpen };
std::vector<std::pair<std::string, double>> HostGaugeValues(const DeliverySnapshot& snapshot,
                                                            HostGauge gauge);

// Registers bulkhead_host_inflight / _cap / _breaker_open (hosts folded by `labels`) and
// bulkhead_parked_jobs, read at scrape time from `published`'s latest snapshot. `published` and
// `labels` must outlive the registration: call RemoveDeliveryGauges before destroying them.
Status RegisterDeliveryGauges(Registry& registry, const PublishedDeliverySnapshot& published,
                              TopNLabels& labels);
void RemoveDeliveryGauges(Registry& registry);

}  // namespace bulkhead
