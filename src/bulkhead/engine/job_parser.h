// Job parsing and validation for PUSH/PUSHB, with the reference server's error texts (see
// docs/protocol.md). On success the job's JSON is normalised as Faktory stores it: created_at set
// when missing, enqueued_at set when it goes straight to a queue, retry filled in when missing or
// null (given `retry_for`), and an empty or null `at` dropped. (reserve_for is clamped in the
// record, not in the JSON.)
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "bulkhead/engine/job_edits.h"
#include "bulkhead/engine/job_members.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// The default retry count of a job type (Config::RetryFor), written into a job pushed without
// `retry` (or with `"retry": null`). Empty: such a job keeps no `retry`, and the retry policy
// applies the default when it fails.
using RetryDefault = std::function<int(const std::string& jobtype)>;

// `line_payload` is the text after "PUSH ", whose JSON may nest at most `max_json_depth` levels
// (ParseJson). InvalidArgument carries the client-facing message.
Result<JobRecord> ParseJob(std::string_view line_payload, TimePoint now,
                           int max_json_depth = kDefaultMaxJsonDepth,
                           const RetryDefault& retry_for = {});
// Same, for a document already parsed with a depth bound (the bridge's, cron's, the relay's; PUSHB
// has ParseJobArray, job_array_parser.h). `source`, when given, is the text `doc` was parsed
// from: the job is then stored as that text with the members normalising adds appended, when it
// only adds (JobEdits::Apply), instead of the document written out again.
Result<JobRecord> ParseJobDocument(nlohmann::json doc, TimePoint now,
                                   const RetryDefault& retry_for = {},
                                   std::string_view source = {});

// The checks of both: the job's record from its members (every field but the payload), and in
// `edits` the changes normalising makes to its JSON (the caller applies them).
// `now_text` is FormatRfc3339(now).
Result<JobRecord> CheckJobMembers(const JobMembers& members, TimePoint now,
                                  const std::string& now_text, const RetryDefault& retry_for,
                                  JobEdits& edits);

// The Faktory queue-name rule: [a-zA-Z0-9._-]+.
bool IsValidQueueName(std::string_view name);
// The error text for a name that breaks it (Faktory's wording).
inline constexpr char kBadQueueNameError[] = "queue names must match \\A[a-zA-Z0-9._-]+\\z";

}  // namespace bulkhead
