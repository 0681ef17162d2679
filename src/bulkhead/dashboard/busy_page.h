// The Busy page: the connected workers (wid, hostname, pid, labels, last heartbeat, state) with
// quiet/terminate, and the reserved jobs with how long they have run. Pure renderer.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bulkhead/dashboard/layout.h"
#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/store/job_record.h"

namespace bulkhead::dashboard {

// `working`: the first reserved jobs (store List of kWorking), `working_total` how many there are.
std::string RenderBusyPage(const PageContext& ctx, const std::map<std::string, WorkerInfo>& workers,
                           const std::vector<JobRecord>& working, size_t working_total);

}  // namespace bulkhead::dashboard
