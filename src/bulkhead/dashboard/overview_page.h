// The Overview page: the counts INFO shows, the store and its health, the charts of the history
// ring, the queue latencies and the delivery hosts failing now. Pure renderer.
#pragma once

#include <string>

#include "bulkhead/dashboard/history.h"
#include "bulkhead/dashboard/layout.h"
#include "bulkhead/view/info_snapshot.h"

namespace bulkhead::dashboard {

// `store_problem`: why the store is degraded or unavailable ("" when healthy).
std::string RenderOverviewPage(const PageContext& ctx, const InfoSnapshot& info,
                               const History& history, const std::string& store_problem);

// A host that needs attention: breaker not closed, announced unavailable, or failing.
bool HostIsFailing(const HostView& h);

}  // namespace bulkhead::dashboard
