// The delivery engine's figures on /metrics and StatsD that come from its state (not those counted
// per attempt, which the dispatcher records itself): bulkhead_host_inflight, bulkhead_host_cap,
// bulkhead_host_breaker_open (per host, as HostView shows it) and bulkhead_parked_jobs.
//
// Every figure is read at collection time from the DeliverySnapshot the dispatcher last published
// (Dispatcher::published_snapshot(), dispatch/delivery_snapshot.h), never from the live
// dispatcher: a collection on any thread answers at once.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bulkhead/dispatch/delivery_snapshot.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The per-host values of one gauge, by host: in_flight, cap, and 1 unless the breaker is closed.
enum class HostGauge { kInFlight, kCap, kBreakerOpen };
std::vector<std::pair<std::string, double>> HostGaugeValues(const DeliverySnapshot& snapshot,
                                                            HostGauge gauge);

// Registers the per-host gauges (hosts folded by `labels`, the dispatcher's
// Dispatcher::host_labels(), so they share the labels of bulkhead_deliveries_total) and
// bulkhead_parked_jobs, read at collection time from `published`'s latest snapshot. `published`
// and `labels` must outlive the registration: call RemoveDeliveryGauges before destroying them
// (when it returns no callback reads them any more). Errors: the registry's.
Status RegisterDeliveryGauges(Registry& registry, const PublishedDeliverySnapshot& published,
                              TopNLabels& labels);
// Removes what RegisterDeliveryGauges added (those it did not add are skipped).
void RemoveDeliveryGauges(Registry& registry);

}  // namespace bulkhead
