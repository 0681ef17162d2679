// The Sidekiq bridge's figures on /metrics and StatsD (metric_names.h, "The Sidekiq bridge"):
// bulkhead_sidekiq_bridge_up, the taken / repeats / dead / reaped / outcomes written counters, the
// in-progress gauge, and per taken Sidekiq queue its size and Sidekiq's latency (aged by the time
// since it was read, so it keeps climbing while the bridge cannot read it).
//
// Read at collection time from the BridgeSnapshot the bridge last published
// (SidekiqBridge::published(), refreshed every second), never from the live bridge; the age rule
// of view/fresh_figures.h applies (a copy older than `max_age` is left out and counted in
// bulkhead_metrics_collect_errors_total).
#pragma once

#include "bulkhead/bridge/bridge_snapshot.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/published.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// `published` and `clock` must outlive the registration (RemoveBridgeGauges first). Errors: the
// registry's.
Status RegisterBridgeGauges(Registry& registry, const Published<BridgeSnapshot>& published,
                            const Clock& clock, Duration max_age);
// Removes what RegisterBridgeGauges added (those it did not add are skipped).
void RemoveBridgeGauges(Registry& registry);

}  // namespace bulkhead
