// The INFO document: what the Faktory INFO command and GET /api/info answer, in Faktory's shape
// (server/tasks.go, server/scanner.go: clients read faktory.tasks.Retries.size and the like).
// Byte-for-byte stable: Faktory clients parse it; tests/conformance/info.fwp and tests/interop
// check its fields, view/testdata/info_*.json pin the whole document.
#pragma once

#include <string>
#include <string_view>

#include "bulkhead/util/status.h"
#include "bulkhead/view/info_snapshot.h"

namespace bulkhead {

// Compact JSON, keys sorted:
//   {"faktory":{"queues":{name:size},"sets":{...},"tasks":{...},"total_enqueued",
//    "total_failures","total_processed","total_queues"},"hosts":[...] (when present: the
//    array of view/api_json.h HostsJsonValue),
//    "now":RFC 3339,"server":{"bulkhead_version","command_count","connections","description",
//    "faktory_version","store","uptime","used_memory_mb","workers"},"server_utc_time":"HH:MM:SS
//    UTC"}
std::string RenderInfoJson(const InfoSnapshot& info);

// The INFO document parsed back into a snapshot, for clients of INFO (`bulkhead stats`). Fills
// what the document holds: queue sizes (latency 0, paused false), sets, totals, task figures,
// worker_count (no worker records), throttles, batch counters, cron entries, the server figures
// and the hosts as HostViews (elements that are not objects skipped; a time that is not RFC 3339
// is unset); a missing field is zero, a missing string "?" (a host's last_error: "").
// InvalidArgument "INFO reply is not a JSON object" for anything else.
Result<InfoSnapshot> ParseInfoJson(std::string_view text);

}  // namespace bulkhead
