// RetryPolicy: what happens to a job that failed (FAIL, or an expired reservation), with Faktory's
// semantics:
//   retry missing/null → the jobtype's configured default (25 unless configured);
//   retry 0 → discard; retry -1 → dead on the first failure; N → N retries, then dead.
//   The first failure has retry_count 0; each later one adds 1. retry_count < retry → retry set,
//   otherwise dead. Delay = count^4 + 15 + rand(30)·(count+1) seconds.
//
// Thread-compatible; the Rng is only used through the reference passed in.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bulkhead/store/job_record.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct FailureReport {
  std::string errtype;                 // trimmed to 100 chars; empty → "unknown"
  std::string message;                 // trimmed to 1000 chars; empty → "unknown"
  std::vector<std::string> backtrace;  // first 50 lines kept
};

// How a caller that knows more than the retry count (the delivery engine) shapes a failure.
struct FailOptions {
  // The next attempt is not before this (e.g. a Retry-After); the backoff still applies if later.
  std::optional<TimePoint> not_before;
  // Straight to the dead set, whatever retries remain (a permanent failure).
  bool dead = false;
  // Straight out, as a success would be (e.g. a Web Push subscription that is gone).
  bool discard = false;
};

struct RetryDecision {
  enum class Kind { kRetry, kDead, kDiscard };
  Kind kind;
  // The job to store: state kRetry (score = next attempt) or kDead (score = purge time), payload
  // with the updated `failure` object. Unused for kDiscard.
  JobRecord job;
};

class RetryPolicy {
 public:
  // `default_retry_for(jobtype)` gives the retry count for jobs that do not say.
  RetryPolicy(std::function<int(const std::string&)> default_retry_for, Rng& rng,
              Duration dead_ttl);

  // InvalidArgument when the stored payload is not a JSON object (should not happen).
  Result<RetryDecision> Decide(const JobRecord& job, const FailureReport& failure, TimePoint now,
                               const FailOptions& options = {}) const;

  // The delay before retry number `count` (0-based): count^4 + 15 + rand(30)·(count+1) seconds.
  static Duration Backoff(int count, Rng& rng);

  // Trims a report as Faktory does: surrounding whitespace off errtype and message, then empty ones
  // become "unknown", then errtype is cut to 100 bytes, message to 1000, backtrace to 50 lines.
  static FailureReport Normalize(FailureReport f);

 private:
  std::function<int(const std::string&)> default_retry_for_;
  Rng& rng_;
  Duration dead_ttl_;
};

}  // namespace bulkhead
