// The text of `bulkhead stats`: the server's figures at a glance (header, queues with latency,
// sets, delivery hosts). `bulkhead stats` is a client of INFO over the network: it parses the
// INFO document back into an InfoSnapshot (view/info_json.h) and renders that.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/util/status.h"
#include "bulkhead/view/info_snapshot.h"

namespace bulkhead {

// Fixed-width text, one line per queue, set, throttle, batch counter, cron entry and host:
//   bulkhead <version>  store=<store>  uptime=<s>s  connections=<n>  workers=<n>
//   processed <n>  failed <n>  enqueued <n>
//   QUEUE / SET / THROTTLE / BATCH / CRON tables, the delivery line, the HOST table. THROTTLE and
//   CRON only when one is configured (view/throttle_view.h, view/cron_view.h), BATCH (created,
//   committed, expired, succeeded) only once a counter is non-zero; the delivery line (INFO's
//   "delivery", view/cluster_view.h) only with a dispatcher:
//     delivery  cluster_nodes=<n>  in_flight=<n>/<max_in_flight>  host_cap=<min>..<max>
//   HOST only when there are hosts.
// A queue's LATENCY(s) is its latency_seconds (0 in a snapshot parsed from INFO until filled in).
std::string RenderStatsText(const InfoSnapshot& info);

// Asks the server for the latency of `queues` (QUEUE LATENCY's reply: {"name":seconds,...}).
using QueueLatencyQuery = std::function<Result<std::string>(const std::vector<std::string>&)>;

// `bulkhead stats` from an INFO reply: parses it, fills each queue's latency from one
// `latency` query (not called when there are no queues; a failed or malformed answer leaves 0),
// renders. InvalidArgument "INFO reply is not a JSON object" when `info_text` is not one.
Result<std::string> StatsTextFromInfo(std::string_view info_text, const QueueLatencyQuery& latency);

}  // namespace bulkhead
