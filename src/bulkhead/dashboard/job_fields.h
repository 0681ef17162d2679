// JobFields: what the dashboard shows of a job, read from its stored payload (the Faktory JSON).
// A payload that is not a JSON object shows as its raw text in `args`.
#pragma once

#include <optional>
#include <string>

#include "bulkhead/store/job_record.h"
#include "bulkhead/util/clock.h"

namespace bulkhead::dashboard {

struct JobFields {
  std::string args;                                    // compact JSON of "args"
  std::string custom;                                  // pretty JSON of "custom", or ""
  std::string error;                                   // "errtype: message" of "failure", or ""
  std::string backtrace;                               // failure.backtrace lines joined by newlines
  int64_t retry_count = 0;                             // failure.retry_count
  int64_t retry = -1;                                  // the job's "retry" (-1: not set)
  std::string created_at, enqueued_at, failed_at, at;  // RFC 3339 as stored, or ""
};

JobFields ReadJobFields(const JobRecord& job);

// The time of a job in its set, as its score means it (job_record.h): when it runs (scheduled,
// retry), when it is purged (dead), when its reservation ends (working).
TimePoint ScoreTime(const JobRecord& job);

}  // namespace bulkhead::dashboard
