// The "Throttles & cron" page (the Faktory Enterprise figures, from an EngineSnapshot): each queue
// throttle (queue, kind, limit, slots in use, timeout), each [[cron]] entry (name, schedule, next
// and last run relative with the exact UTC time on hover, this node's pushes and lost firings),
// and the batch counters. Read-only; every value from the snapshot goes through Escape. Pure
// renderer.
#pragma once

#include <string>

#include "bulkhead/dashboard/layout.h"
#include "bulkhead/engine/engine_snapshot.h"

namespace bulkhead::dashboard {

// Tables #throttles and #cron (a muted #no-throttles / #no-cron line instead when none is
// configured) and #batches.
std::string RenderThrottlesPage(const PageContext& ctx, const EngineSnapshot& engine);

}  // namespace bulkhead::dashboard
