// A job's page (args, custom, error, backtrace, retry count, times, its actions) and the search
// results page. Pure renderers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bulkhead/dashboard/layout.h"
#include "bulkhead/store/job_record.h"

namespace bulkhead::dashboard {

// `job`: nullopt when it was not found in `set` (within the scan bound, said on the page).
std::string RenderJobPage(const PageContext& ctx, JobState set, const std::string& jid,
                          const std::optional<JobRecord>& job);

// The jobs found for a jid, each with its set; `searched` names where the search looked.
std::string RenderSearchPage(const PageContext& ctx, const std::string& jid,
                             const std::vector<JobRecord>& found, const std::string& searched);

}  // namespace bulkhead::dashboard
