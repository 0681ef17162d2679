// The delivery engine's figures on /metrics and StatsD that come from its state (not those counted
// per attempt, which the dispatcher records itself): bulkhead_host_inflight, bulkhead_host_cap,
// bulkhead_host_breaker_open (per host), bulkhead_parked_jobs, and the cluster share of the caps:
// bulkhead_cluster_nodes, bulkhead_delivery_max_inflight, bulkhead_delivery_host_cap_max.
//
// Every figure is read at collection time from the DeliverySnapshot the event loop last published
// (Dispatcher::PublishSnapshot, Dispatcher::published_snapshot()), never from the live
// dispatcher: a collection on any thread answers at once. The age rule of view/fresh_figures.h
// applies: before the first publication, and once the latest one is older than `max_age`, the
// figures are missing from a collection and counted in bulkhead_metrics_collect_errors_total.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bulkhead/dispatch/delivery_snapshot.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/metrics/top_n_labels.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/published.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The per-host values of one gauge, in the snapshot's host order: in_flight, the in-flight cap
// (limit), and 1 unless the breaker is closed.
enum class HostGauge { kInFlight, kCap, kBreakerOpen };
std::vector<std::pair<std::string, double>> HostGaugeValues(const DeliverySnapshot& snapshot,
                                                            HostGauge gauge);

// Registers the per-host gauges (hosts folded by `labels`, the dispatcher's
// Dispatcher::host_labels(), so they share the labels of bulkhead_deliveries_total) and
// bulkhead_parked_jobs, read at collection time from `published`'s latest snapshot while it is at
// most `max_age` old by `clock` (the clock of the snapshots' `at`). `published`, `labels` and
// `clock` must outlive the registration: call RemoveDeliveryGauges before destroying them (when
// it returns no callback reads them any more). Errors: the registry's.
Status RegisterDeliveryGauges(Registry& registry, const Published<DeliverySnapshot>& published,
                              TopNLabels& labels, const Clock& clock, Duration max_age);
// Removes what RegisterDeliveryGauges added (those it did not add are skipped).
void RemoveDeliveryGauges(Registry& registry);

}  // namespace bulkhead
