#include "bulkhead/dispatch/outcome_jobs.h"

#include <spdlog/spdlog.h>

#include "bulkhead/engine/job_parser.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {

void OutcomeJobs::WebPushGone(const DeliveryJob& job) {
  Push(kWebPushGoneJobType, nlohmann::json::array({job.url, job.jid}));
}

void OutcomeJobs::DeliveryDead(const DeliveryJob& job, const std::string& reason) {
  Push(kDeliveryDeadJobType, nlohmann::json::array({job.jid, job.jobtype, reason, job.url}));
}

void OutcomeJobs::HostUnavailable(const std::string& host) {
  Push(kHostUnavailableJobType, nlohmann::json::array({host}));
}

void OutcomeJobs::HostAvailable(const std::string& host) {
  Push(kHostAvailableJobType, nlohmann::json::array({host}));
}

void OutcomeJobs::Push(const std::string& jobtype, nlohmann::json args) {
  nlohmann::json doc = {
      {"jid", RandomHex(12)}, {"jobtype", jobtype}, {"queue", queue_}, {"args", std::move(args)}};
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
