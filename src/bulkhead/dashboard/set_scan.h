// Bounded reads of a sorted set for the dashboard: one page through the store's List (offset,
// limit), never the whole set. A filter reads `max_scan` jobs from the page's offset in one List
// and keeps those that match, up to a page.
//
// Threading: the event loop (the store's thread); `done` runs once, on it, now or later
// (store.h). The store must outlive the scan; `alive` (when set) guards the caller's lifetime: a
// scan whose owner is gone stops and never calls `done`.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "bulkhead/dashboard/job_list_page.h"
#include "bulkhead/store/store.h"

namespace bulkhead::dashboard {

struct ScanRequest {
  JobState set = JobState::kDead;
  size_t offset = 0;
  size_t want = 25;  // jobs that match, at most
  size_t max_scan = kMaxScanPerRequest;
  std::function<bool(const JobRecord&)> match;  // null: every job (one List of want + 1)
};

void ScanSet(Store& store, ScanRequest request, std::weak_ptr<void> alive,
             std::function<void(Result<JobListResult>)> done);

}  // namespace bulkhead::dashboard
