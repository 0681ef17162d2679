// The job server's figures on /metrics and StatsD: queue sizes and latency, set sizes, working
// jobs, workers, processed/failed/duplicate counters, store health, build info, start time.
//
// Every figure is read from the EngineSnapshot the event loop last published (util/published.h),
// never from the loop: a collection on any thread answers at once, even while the loop is stuck.
// The age rule of view/fresh_figures.h applies: before the first publication, and once the latest
// one is older than `max_age`, the figures are missing from a collection and counted in
// bulkhead_metrics_collect_errors_total. Build info and start time are the exceptions that stay
// (they cannot go stale).
#pragma once

#include "bulkhead/engine/engine_snapshot.h"
#include "bulkhead/metrics/registry.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/published.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Registers the figures as callback families in `registry`. `published` and `clock` (the clock
// the snapshots' `now` comes from) must outlive the registration (until UnregisterEngineMetrics).
// Queue latency is aged by the snapshot's age at collection (clock.Now() minus the snapshot's
// `now`), so it keeps climbing between publications. Errors: the registry's (AlreadyExists when
// a name is taken).
Status RegisterEngineMetrics(Registry& registry, const Published<EngineSnapshot>& published,
                             const Clock& clock, Duration max_age);

// Removes what RegisterEngineMetrics added (those it did not add are skipped). When it returns no
// callback reads `published` any more.
void UnregisterEngineMetrics(Registry& registry);

}  // namespace bulkhead
