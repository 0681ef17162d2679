// A job's page (args, custom, error, backtrace, retry count, times, its actions), wherever the job
// is (a queue, a set, or reserved), and the search results page. Pure renderers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bulkhead/dashboard/layout.h"
#include "bulkhead/store/job_record.h"

namespace bulkhead::dashboard {

// `job`: nullopt when the store does not hold `jid` (any more). Actions by where it is: a set's
// (the MUTATE operations) for scheduled, retry and dead; delete for a queued job (POST /job);
// none for a reserved one (its worker ends it). `holder`: the wid holding a reserved job, or "".
std::string RenderJobPage(const PageContext& ctx, const std::string& jid,
                          const std::optional<JobRecord>& job, const std::string& holder = "");

// Where a job is, for people: "queue default", "Retries", "Busy (reserved)".
std::string WhereText(const JobRecord& job);

// The search for a jid: `found` is the job (Store::FindJob), wherever it is.
std::string RenderSearchPage(const PageContext& ctx, const std::string& jid,
                             const std::optional<JobRecord>& found);

}  // namespace bulkhead::dashboard
