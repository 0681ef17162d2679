// The Scheduled, Retries and Dead pages: one page of a sorted set in score order (time), with
// filters (queue, jobtype, a substring of the args or error), checkboxes and the actions of
// MUTATE for the checked jobs. Paging is by position in the set (the store's List offset), so a
// page never loads the set; with a filter, the pager continues from the last position scanned.
// Pure renderer.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bulkhead/dashboard/layout.h"
#include "bulkhead/store/job_record.h"

namespace bulkhead::dashboard {

// The sets with a page: "scheduled", "retries", "dead" (and "working", read by the Busy page).
struct SetPage {
  JobState set;
  const char* path;   // "/dead"
  const char* title;  // "Dead"
};
const SetPage* FindSetPage(std::string_view path);
const SetPage& SetPageOf(JobState set);

struct JobListQuery {
  size_t offset = 0;                     // position in the set of the page's first candidate
  size_t limit = 25;                     // jobs per page
  std::string queue, jobtype, contains;  // filters; empty: any
  bool filtered() const { return !queue.empty() || !jobtype.empty() || !contains.empty(); }
};

// Jobs scanned at most per request when a filter is set: a page of a filtered list stops there
// and offers to continue.
inline constexpr size_t kMaxScanPerRequest = 5000;

struct JobListResult {
  std::vector<JobRecord> jobs;  // the page, with each job's position in the set
  std::vector<size_t> positions;
  size_t next_offset = 0;  // where the next page starts
  bool more = false;       // the set may hold more after next_offset
  size_t scanned = 0;      // jobs read from the store for this page
};

// True when `job` passes the filters of `q` (the substring is sought in the args and the error).
bool MatchesFilters(const JobRecord& job, const JobListQuery& q);

std::string RenderJobListPage(const PageContext& ctx, const SetPage& page, const JobListQuery& q,
                              const JobListResult& result, size_t total);

// The action buttons of a set ("retry", "delete", "kill", "requeue"), each a submit button of the
// surrounding form.
std::string SetActionButtons(JobState set);

}  // namespace bulkhead::dashboard
