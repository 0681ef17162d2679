// The Hosts page (every delivery host: state, in-flight cap and use, parked, counters, p50/p99,
// last error, failing-since/Retry-After times; at 390 px the totals, latencies and times are
// hidden) and one host's page (the same, plus breaker openings and open-until). Pure renderers over
// view/host_view.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bulkhead/dashboard/host_rates.h"
#include "bulkhead/dashboard/layout.h"
#include "bulkhead/view/host_view.h"

namespace bulkhead::dashboard {

// `hosts`: nullopt when the server runs no dispatcher.
// `rates`: successes and failures per minute per host (blank while a host has none yet).
std::string RenderHostsPage(const PageContext& ctx,
                            const std::optional<std::vector<HostView>>& hosts,
                            const HostRates& rates = {});
// Parked jobs listed on a host's page, at most.
inline constexpr size_t kMaxParkedShown = 200;

// `host`: nullopt when no host has that name. `parked`: the first jids parked behind it (each a
// reserved job: its link opens it in Busy).
std::string RenderHostPage(const PageContext& ctx, const std::string& name,
                           const std::optional<HostView>& host,
                           const std::vector<std::string>& parked = {},
                           const std::optional<PerMinute>& rate = std::nullopt);

// "healthy", "open", "half-open" or "unavailable".
std::string HostStateText(const HostView& h);

}  // namespace bulkhead::dashboard
