// ParseJobArray: PUSHB's array of jobs, each checked and normalised as ParseJobDocument does
// (job_parser.h), without a document of the array to look members up in: simdjson's parser
// (simd_json.h) reads the text and each element's top-level members are read from its tape
// (job_members.h); a text it leaves to nlohmann (invalid ones among them) gets one pass of
// nlohmann's SAX parser collecting the same members, behind ParseJson's depth bound and with its
// error texts (bounded_sax.h). Either way it accepts and refuses exactly what ParseJson does.
//
// Each job keeps its own text with the members normalising adds appended (JobEdits); a job whose
// normalising must replace or remove a member, or whose text repeats a key or holds a \u escape,
// has its element parsed alone into a document and written out again, as ParseJobDocument does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/engine/job_parser.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

struct ArrayJob {
  // The element's "jid" when it is a string, else empty: the key of PUSHB's error map.
  std::string jid;
  Result<JobRecord> job;
};

struct JobArray {
  // False: `text` is valid JSON of another kind (PUSHB answers that it needs an array).
  bool is_array = false;
  std::vector<ArrayJob> jobs;
};

// The `max_pushb_jobs` default.
inline constexpr int kDefaultMaxPushbJobs = 100000;

// InvalidArgument (ParseJson's message) when `text` is not JSON or nests deeper than
// `max_json_depth`; InvalidArgument "PUSHB holds more than N jobs (max_pushb_jobs)" when it is an
// array of more than `max_jobs` elements, found before they are collected (whatever the text
// holds after them). Every job is stamped with `now`.
Result<JobArray> ParseJobArray(std::string_view text, TimePoint now, int max_json_depth,
                               const RetryDefault& retry_for = {},
                               int max_jobs = kDefaultMaxPushbJobs);

}  // namespace bulkhead
