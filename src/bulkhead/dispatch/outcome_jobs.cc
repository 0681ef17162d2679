#include "bulkhead/dispatch/outcome_jobs.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "bulkhead/compartment/outcome.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {
namespace {

// FNV-1a, 64 bits, in hex: the same on every node and build (std::hash is not promised to be).
std::string StableHash(const std::string& text) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// "PREFIX-HASH-SINCE_US" for an event of `host`'s failing period that began at `since`; empty
// (a fresh jid) when unknown.
std::string PeriodJid(const char* prefix, const std::string& host, std::optional<TimePoint> since) {
  if (!since) return std::string();
  return std::string(prefix) + StableHash(host) + "-" + std::to_string(ToUnixMicros(*since));
}

}  // namespace

OutcomeRecord OutcomeJobs::AboutDelivery(const char* event, const DeliveryJob& job,
                                         const std::string& reason, int status) const {
  OutcomeRecord r;
  r.event = event;
  r.at = clock_.Now();
  r.host = job.host;
  if (status > 0) r.status = status;
  r.reason = reason;
  r.jid = job.jid;
  r.jobtype = job.jobtype;
  r.url = job.url;
  r.context = job.context;
  return r;
}

void OutcomeJobs::WebPushGone(const DeliveryJob& job, int status, const std::string& reason) {
  Push(AboutDelivery(kEventWebPushGone, job, reason, status), "bh-gone-" + job.jid);
}

void OutcomeJobs::TokenGone(const DeliveryJob& job, int status, const std::string& reason) {
  Push(AboutDelivery(kEventRelayTokenGone, job, reason, status), "bh-token-gone-" + job.jid);
}

void OutcomeJobs::DeliveryDead(const DeliveryJob& job, const std::string& reason, int status) {
  Push(AboutDelivery(kEventDeliveryDead, job, reason, status), "bh-dead-" + job.jid);
}

void OutcomeJobs::HostUnavailable(const std::string& host, std::optional<TimePoint> failing_since,
                                  const std::string& last_error) {
  OutcomeRecord r;
  r.event = kEventHostUnavailable;
  r.at = clock_.Now();
  r.host = host;
  r.reason = last_error;
  if (int status = HttpStatusOfReason(last_error); status > 0) r.status = status;
  r.since = failing_since;
  Push(r, PeriodJid("bh-unavailable-", host, failing_since));
}

void OutcomeJobs::HostAvailable(const std::string& host, std::optional<TimePoint> failing_since) {
  OutcomeRecord r;
  r.event = kEventHostAvailable;
  r.at = clock_.Now();
  r.host = host;
  r.since = failing_since;
  Push(r, PeriodJid("bh-available-", host, failing_since));
}

void OutcomeJobs::Push(const OutcomeRecord& record, std::string jid) {
  const std::string jobtype = OutcomeJobType(record.event);
  if (jid.empty()) jid = RandomHex(12);
  nlohmann::json args = form_ == OutcomeArgs::kPositional ? PositionalOutcomeArgs(record)
                                                          : nlohmann::json::array({ToJson(record)});
  // An internal queue (the Sidekiq bridge's, outside the queue-name alphabet) is set after the
  // checks; the payload names it without its '~', and its writer holds a job only briefly.
  const bool internal = queue_.starts_with('~');
  nlohmann::json doc = {{"jid", std::move(jid)},
                        {"jobtype", jobtype},
                        {"queue", internal ? queue_.substr(1) : queue_},
                        {"args", std::move(args)}};
  if (internal) doc["reserve_for"] = kInternalReserveSeconds;
  auto job = ParseJobDocument(std::move(doc), clock_.Now());
  if (!job.ok()) {
    spdlog::error("delivery: cannot build {} job: {}", jobtype, job.status().message());
    return;
  }
  if (internal) job->queue = queue_;
  ++stats_.outcome_jobs;
  engine_.Push(std::move(*job), [jobtype](Status s) {
    if (!s.ok()) spdlog::warn("delivery: push of {} failed: {}", jobtype, s.message());
  });
}

}  // namespace bulkhead
