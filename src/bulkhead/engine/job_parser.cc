#include "bulkhead/engine/job_parser.h"

#include <nlohmann/json.hpp>

#include "bulkhead/engine/job_edits.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

constexpr int kDefaultReserveFor = 1800;
constexpr int kMinReserveFor = 60;
constexpr int kMaxReserveFor = 86400;

// jid, jobtype and args: present and of their types.
Status ReadIdentity(const nlohmann::json& doc, JobRecord& job) {
  auto jid = doc.find("jid");
  if (jid == doc.end() || !jid->is_string() || jid->get_ref<const std::string&>().size() < 8) {
    return Status::InvalidArgument("jobs must have a reasonable jid parameter");
  }
  job.jid = jid->get<std::string>();
  auto jobtype = doc.find("jobtype");
  if (jobtype == doc.end() || !jobtype->is_string() ||
      jobtype->get_ref<const std::string&>().empty()) {
    return Status::InvalidArgument("jobs must have a jobtype parameter");
  }
  job.jobtype = jobtype->get<std::string>();
  auto args = doc.find("args");
  if (args == doc.end() || args->is_null()) {
    return Status::InvalidArgument("jobs must have an args parameter");
  }
  if (!args->is_array()) return Status::InvalidArgument("args must be a JSON array");
  return Status::Ok();
}

// queue: "default" when absent, null or empty (written into the document too).
Status ReadQueue(const nlohmann::json& doc, JobRecord& job, JobEdits& edits) {
  auto queue = doc.find("queue");
  if (queue == doc.end() || queue->is_null() ||
      (queue->is_string() && queue->get_ref<const std::string&>().empty())) {
    job.queue = "default";
    edits.Set("queue", "default", queue != doc.end());
  } else if (!queue->is_string() || !IsValidQueueName(queue->get_ref<const std::string&>())) {
    return Status::InvalidArgument(kBadQueueNameError);
  } else {
    job.queue = queue->get<std::string>();
  }
  return Status::Ok();
}

// reserve_for: at most a day; 0 or absent is the default, less than the minimum the minimum.
Status ReadReserveFor(const nlohmann::json& doc, JobRecord& job) {
  auto reserve = doc.find("reserve_for");
  int64_t reserve_for = kDefaultReserveFor;
  if (reserve != doc.end() && !reserve->is_null()) {
    if (!reserve->is_number()) return Status::InvalidArgument("reserve_for must be an integer");
    // A float outside int64's range would make the conversion undefined.
    if (reserve->is_number_float() &&
        !(reserve->get<double>() > -1e15 && reserve->get<double>() < 1e15)) {
      return Status::InvalidArgument("jobs cannot be reserved for more than one day");
    }
    reserve_for = reserve->get<int64_t>();
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
Status ReadRetry(const nlohmann::json& doc, const JobRecord& job, const RetryDefault& retry_for,
                 JobEdits& edits) {
  auto retry = doc.find("retry");
  if (retry != doc.end() && !retry->is_null() && !retry->is_number_integer()) {
    return Status::InvalidArgument("retry must be an integer (or null for the default)");
  }
  if ((retry == doc.end() || retry->is_null()) && retry_for) {
    // As Faktory: the job is stored (and fetched) with the retry count it will get.
    edits.Set("retry", retry_for(job.jobtype), retry != doc.end());
  }
  return Status::Ok();
}

// at: a future RFC 3339 time schedules the job; then enqueued_at for a job queued now.
Status ReadSchedule(const nlohmann::json& doc, TimePoint now, JobRecord& job, JobEdits& edits) {
  job.state = JobState::kQueued;
  auto at = doc.find("at");
  if (at != doc.end() && at->is_string() && !at->get_ref<const std::string&>().empty()) {
    const std::string& text = at->get_ref<const std::string&>();
    auto when = ParseRfc3339(text);
    if (!when.ok()) {
      std::string why = when.status().message();
      auto colon = why.rfind(": ");
      return Status::InvalidArgument("invalid timestamp for 'at': \"" + text + "\": " +
                                     (colon == std::string::npos ? why : why.substr(colon + 2)));
    }
    if (*when > now) {
      job.state = JobState::kScheduled;
      job.score = ToUnixMicros(*when);
    }
  } else if (at != doc.end() && !at->is_null() && !at->is_string()) {
    return Status::InvalidArgument("invalid timestamp for 'at': must be an RFC 3339 string");
  } else if (at != doc.end()) {
    edits.Erase("at");  // "" or null: "now", which Faktory stores as no `at` at all
  }
  bool has_enqueued_at = doc.contains("enqueued_at");
  if (job.state == JobState::kQueued) {
    edits.Set("enqueued_at", FormatRfc3339(now), has_enqueued_at);
    job.enqueued_us = ToUnixMicros(now);
  } else if (has_enqueued_at) {
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

Result<JobRecord> ParseJobDocument(nlohmann::json doc, TimePoint now, const RetryDefault& retry_for,
                                   std::string_view source) {
  if (!doc.is_object()) return Status::InvalidArgument("job must be a JSON object");
  JobRecord job;
  JobEdits edits;
  if (Status s = ReadIdentity(doc, job); !s.ok()) return s;
  if (Status s = ReadQueue(doc, job, edits); !s.ok()) return s;
  if (Status s = ReadReserveFor(doc, job); !s.ok()) return s;
  if (Status s = ReadRetry(doc, job, retry_for, edits); !s.ok()) return s;
  auto created = doc.find("created_at");
  if (created == doc.end() || !created->is_string() ||
      created->get_ref<const std::string&>().empty()) {
    edits.Set("created_at", FormatRfc3339(now), created != doc.end());
  }
  if (Status s = ReadSchedule(doc, now, job, edits); !s.ok()) return s;
  job.payload = std::move(edits).Apply(std::move(doc), source);
  return job;
}

}  // namespace bulkhead
