#include "bulkhead/engine/retry_policy.h"

#include <nlohmann/json.hpp>

#include "bulkhead/util/time_format.h"

namespace bulkhead {

RetryPolicy::RetryPolicy(std::function<int(const std::string&)> default_retry_for, Rng& rng,
                         Duration dead_ttl)
    : default_retry_for_(std::move(default_retry_for)), rng_(rng), dead_ttl_(dead_ttl) {}

Duration RetryPolicy::Backoff(int count, Rng& rng) {
  int64_t c = count;
  int64_t seconds = c * c * c * c + 15 + static_cast<int64_t>(rng.Uniform(30)) * (c + 1);
  return std::chrono::seconds(seconds);
}

namespace {

// Drops leading and trailing ASCII whitespace (Go's strings.TrimSpace on ASCII text).
void TrimSpace(std::string& s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  size_t end = s.size();
  while (end > 0 && space(s[end - 1])) --end;
  size_t begin = 0;
  while (begin < end && space(s[begin])) ++begin;
  s = s.substr(begin, end - begin);
}

}  // namespace

FailureReport RetryPolicy::Normalize(FailureReport f) {
  TrimSpace(f.errtype);
  TrimSpace(f.message);
  if (f.errtype.empty()) f.errtype = "unknown";
  if (f.message.empty()) f.message = "unknown";
  if (f.errtype.size() > 100) f.errtype.resize(100);
  if (f.message.size() > 1000) f.message.resize(1000);
  if (f.backtrace.size() > 50) f.backtrace.resize(50);
  return f;
}

Result<RetryDecision> RetryPolicy::Decide(const JobRecord& job, const FailureReport& report,
                                          TimePoint now, const FailOptions& options) const {
  auto doc = nlohmann::json::parse(job.payload, nullptr, false);
  if (!doc.is_object()) {
    return Status::InvalidArgument("stored payload of job " + job.jid + " is not a JSON object");
  }
  int retry = default_retry_for_(job.jobtype);
  auto r = doc.find("retry");
  if (r != doc.end() && r->is_number_integer()) retry = r->get<int>();

  FailureReport f = Normalize(report);
  int count = 0;
  auto old = doc.find("failure");
  if (old != doc.end() && old->is_object() && old->contains("retry_count") &&
      (*old)["retry_count"].is_number_integer()) {
    count = (*old)["retry_count"].get<int>() + 1;
  }
  nlohmann::json failure = {
      {"retry_count", count},
      {"remaining", std::max(0, retry - count)},
      {"failed_at", FormatRfc3339(now)},
      {"message", f.message},
      {"errtype", f.errtype},
  };
  if (!f.backtrace.empty()) failure["backtrace"] = f.backtrace;

  RetryDecision d;
  d.job = job;
  if (retry == 0 || options.discard) {
    d.kind = RetryDecision::Kind::kDiscard;
    return d;
  }
  if (count < retry && !options.dead) {
    TimePoint at = now + Backoff(count, rng_);
    if (options.not_before && *options.not_before > at) at = *options.not_before;
    failure["next_at"] = FormatRfc3339(at);
    d.kind = RetryDecision::Kind::kRetry;
    d.job.state = JobState::kRetry;
    d.job.score = ToUnixMicros(at);
  } else {
    d.kind = RetryDecision::Kind::kDead;
    d.job.state = JobState::kDead;
    d.job.score = ToUnixMicros(now + dead_ttl_);
  }
  doc["failure"] = std::move(failure);
  d.job.payload = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return d;
}

}  // namespace bulkhead
