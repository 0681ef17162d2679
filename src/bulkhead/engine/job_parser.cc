#include "bulkhead/engine/job_parser.h"

#include <nlohmann/json.hpp>

#include "bulkhead/engine/job_members.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

constexpr int kDefaultReserveFor = 1800;
constexpr int kMinReserveFor = 60;
constexpr int kMaxReserveFor = 86400;

// jid, jobtype and args: present and of their types.
Status ReadIdentity(const JobMembers& m, JobRecord& job) {
  if (!m.jid.is_string() || m.jid.text.size() < 8) {
    return Status::InvalidArgument("jobs must have a reasonable jid parameter");
  }
  job.jid = m.jid.text;
  if (!m.jobtype.is_nonempty_string()) {
    return Status::InvalidArgument("jobs must have a jobtype parameter");
  }
  job.jobtype = m.jobtype.text;
  if (!m.args.present() || m.args.is_null()) {
    return Status::InvalidArgument("jobs must have an args parameter");
  }
  if (m.args.type != JobMember::Type::kArray) {
    return Status::InvalidArgument("args must be a JSON array");
  }
  return Status::Ok();
}

// queue: "default" when absent, null or empty (written into the document too).
Status ReadQueue(const JobMembers& m, JobRecord& job, JobEdits& edits) {
  const JobMember& queue = m.queue;
  if (!queue.present() || queue.is_null() || (queue.is_string() && queue.text.empty())) {
    job.queue = "default";
    edits.Set("queue", "default", queue.present());
  } else if (!queue.is_string() || !IsValidQueueName(queue.text)) {
    return Status::InvalidArgument(kBadQueueNameError);
  } else {
    job.queue = queue.text;
  }
  return Status::Ok();
}

// reserve_for: at most a day; 0 or absent is the default, less than the minimum the minimum.
Status ReadReserveFor(const JobMembers& m, JobRecord& job) {
  const JobMember& reserve = m.reserve_for;
  int64_t reserve_for = kDefaultReserveFor;
  if (reserve.present() && !reserve.is_null()) {
    if (!reserve.is_number()) return Status::InvalidArgument("reserve_for must be an integer");
    if (reserve.type == JobMember::Type::kFloat) {
      // A float outside int64's range would make the conversion undefined.
      if (!(reserve.real > -1e15 && reserve.real < 1e15)) {
        return Status::InvalidArgument("jobs cannot be reserved for more than one day");
      }
      reserve_for = static_cast<int64_t>(reserve.real);
    } else {
      reserve_for = reserve.integer;
    }
    if (reserve_for > kMaxReserveFor) {
      return Status::InvalidArgument("jobs cannot be reserved for more than one day");
    }
    if (reserve_for == 0) reserve_for = kDefaultReserveFor;
    if (reserve_for < kMinReserveFor) reserve_for = kMinReserveFor;
  }
  job.reserve_for_s = static_cast<int32_t>(reserve_for);
  return Status::Ok();
}

// retry: an integer, or absent/null for the job type's default (written into the document).
Status ReadRetry(const JobMembers& m, const JobRecord& job, const RetryDefault& retry_for,
                 JobEdits& edits) {
  const JobMember& retry = m.retry;
  if (retry.present() && !retry.is_null() && !retry.is_integer()) {
    return Status::InvalidArgument("retry must be an integer (or null for the default)");
  }
  if ((!retry.present() || retry.is_null()) && retry_for) {
    // As Faktory: the job is stored (and fetched) with the retry count it will get.
    edits.Set("retry", retry_for(job.jobtype), retry.present());
  }
  return Status::Ok();
}

// at: a future RFC 3339 time schedules the job; then enqueued_at for a job queued now.
Status ReadSchedule(const JobMembers& m, TimePoint now, const std::string& now_text, JobRecord& job,
                    JobEdits& edits) {
  job.state = JobState::kQueued;
  const JobMember& at = m.at;
  if (at.is_nonempty_string()) {
    auto when = ParseRfc3339(at.text);
    if (!when.ok()) {
      std::string why = when.status().message();
      auto colon = why.rfind(": ");
      return Status::InvalidArgument("invalid timestamp for 'at': \"" + at.text + "\": " +
                                     (colon == std::string::npos ? why : why.substr(colon + 2)));
    }
    if (*when > now) {
      job.state = JobState::kScheduled;
      job.score = ToUnixMicros(*when);
    }
  } else if (at.present() && !at.is_null() && !at.is_string()) {
    return Status::InvalidArgument("invalid timestamp for 'at': must be an RFC 3339 string");
  } else if (at.present()) {
    edits.Erase("at");  // "" or null: "now", which Faktory stores as no `at` at all
  }
  if (job.state == JobState::kQueued) {
    edits.Set("enqueued_at", now_text, m.enqueued_at.present());
    job.enqueued_us = ToUnixMicros(now);
  } else if (m.enqueued_at.present()) {
    edits.Erase("enqueued_at");
  }
  return Status::Ok();
}

}  // namespace

bool IsValidQueueName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<JobRecord> ParseJob(std::string_view line_payload, TimePoint now, int max_json_depth,
                           const RetryDefault& retry_for) {
  auto doc = ParseJson(line_payload, max_json_depth);
  if (!doc.ok()) return doc.status();
  return ParseJobDocument(std::move(*doc), now, retry_for, line_payload);
}

Result<JobRecord> CheckJobMembers(const JobMembers& members, TimePoint now,
                                  const std::string& now_text, const RetryDefault& retry_for,
                                  JobEdits& edits) {
  JobRecord job;
  if (Status s = ReadIdentity(members, job); !s.ok()) return s;
  if (Status s = ReadQueue(members, job, edits); !s.ok()) return s;
  if (Status s = ReadReserveFor(members, job); !s.ok()) return s;
  if (Status s = ReadRetry(members, job, retry_for, edits); !s.ok()) return s;
  if (!members.created_at.is_nonempty_string()) {
    edits.Set("created_at", now_text, members.created_at.present());
  }
  if (Status s = ReadSchedule(members, now, now_text, job, edits); !s.ok()) return s;
  job.no_custom = members.custom.type != JobMember::Type::kObject;
  return job;
}

Result<JobRecord> ParseJobDocument(nlohmann::json doc, TimePoint now, const RetryDefault& retry_for,
                                   std::string_view source) {
  if (!doc.is_object()) return Status::InvalidArgument("job must be a JSON object");
  JobEdits edits;
  auto job = CheckJobMembers(MembersOf(doc), now, FormatRfc3339(now), retry_for, edits);
  if (!job.ok()) return job;
  job->payload = std::move(edits).Apply(std::move(doc), source);
  return job;
}

}  // namespace bulkhead
