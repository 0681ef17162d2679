#include "bulkhead/dispatch/outcome_jobs.h"

#include <spdlog/spdlog.h>

#include <cstdio>

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

void OutcomeJobs::WebPushGone(const DeliveryJob& job) {
  Push(kWebPushGoneJobType, nlohmann::json::array({job.url, job.jid}), "bh-gone-" + job.jid);
}

void OutcomeJobs::DeliveryDead(const DeliveryJob& job, const std::string& reason) {
  Push(kDeliveryDeadJobType, nlohmann::json::array({job.jid, job.jobtype, reason, job.url}),
       "bh-dead-" + job.jid);
}

void OutcomeJobs::HostUnavailable(const std::string& host, std::optional<TimePoint> failing_since) {
  Push(kHostUnavailableJobType, nlohmann::json::array({host}),
       PeriodJid("bh-unavailable-", host, failing_since));
}

void OutcomeJobs::HostAvailable(const std::string& host, std::optional<TimePoint> failing_since) {
  Push(kHostAvailableJobType, nlohmann::json::array({host}),
       PeriodJid("bh-available-", host, failing_since));
}

void OutcomeJobs::Push(const std::string& jobtype, nlohmann::json args, std::string jid) {
  if (jid.empty()) jid = RandomHex(12);
  nlohmann::json doc = {
      {"jid", std::move(jid)}, {"jobtype", jobtype}, {"queue", queue_}, {"args", std::move(args)}};
  auto record = ParseJobDocument(std::move(doc), clock_.Now());
  if (!record.ok()) {
    spdlog::error("delivery: cannot build {} job: {}", jobtype, record.status().message());
    return;
  }
  ++stats_.outcome_jobs;
  engine_.Push(std::move(*record), [jobtype](Status s) {
    if (!s.ok()) spdlog::warn("delivery: push of {} failed: {}", jobtype, s.message());
  });
}

}  // namespace bulkhead
