// Fuzz target: job validation (src/bulkhead/engine/job_parser.h) as PUSH and PUSHB use it.
// Input: the text after "PUSH " — one job object — or, when it is a JSON array, a PUSHB batch
// whose elements each go through ParseJobDocument after ParseJson (depth-bounded), as CmdPushBulk
// does.
// Invariants checked: a refusal carries a message; an accepted job's normalised payload (what
// FETCH hands to a worker, who may push it again) is accepted again with the same jid, queue and
// jobtype.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "bulkhead/engine/job_parser.h"
#include "bulkhead/util/json.h"

namespace {

using bulkhead::JobRecord;
using bulkhead::Result;
using bulkhead::TimePoint;

[[noreturn]] void Fail(const char* what, const JobRecord& job) {
  std::fprintf(stderr, "fuzz_job: %s; payload %s\n", what, job.payload.c_str());
  std::abort();
}

void CheckAccepted(const JobRecord& job, TimePoint now) {
  if (job.jid.size() < 8 || job.jobtype.empty() || !bulkhead::IsValidQueueName(job.queue)) {
    Fail("accepted a job without a valid jid, jobtype or queue", job);
  }
  if (job.reserve_for_s < 60 || job.reserve_for_s > 86400)
    Fail("reserve_for out of 60..86400", job);
  Result<JobRecord> again = bulkhead::ParseJob(job.payload, now);
  if (!again.ok()) Fail("the normalised payload is refused when pushed again", job);
  if (again->jid != job.jid || again->queue != job.queue || again->jobtype != job.jobtype) {
    Fail("the normalised payload parses to a different job", job);
  }
}

void Check(const Result<JobRecord>& r, TimePoint now) {
  if (!r.ok()) {
    if (r.status().message().empty()) {
      std::fprintf(stderr, "fuzz_job: a refusal without a message\n");
      std::abort();
    }
    return;
  }
  CheckAccepted(*r, now);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view payload(reinterpret_cast<const char*>(data), size);
  // Fixed, so a crash reproduces: 2026-01-01T00:00:00Z.
  const TimePoint now{std::chrono::seconds(1'767'225'600)};
  Check(bulkhead::ParseJob(payload, now), now);

  Result<nlohmann::json> doc = bulkhead::ParseJson(payload, bulkhead::kDefaultMaxJsonDepth);
  if (doc.ok() && doc->is_array()) {
    for (auto& element : *doc) Check(bulkhead::ParseJobDocument(std::move(element), now), now);
  }
  return 0;
}
