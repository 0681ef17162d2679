// Fuzz target: job validation (src/bulkhead/engine/job_parser.h) as PUSH and PUSHB use it.
// Input: the text after "PUSH " — one job object — and the same text as PUSHB's (ParseJobArray,
// job_array_parser.h).
// Invariants checked: a refusal carries a message; an accepted job's normalised payload (what
// FETCH hands to a worker, who may push it again) is accepted again with the same jid, queue and
// jobtype; ParseJobArray gives exactly what parsing the array into a document and checking each
// element with ParseJobDocument gives (the same error, or the same record and payload), whether
// simdjson read the array (simd_json.h) or nlohmann's SAX parser did.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/engine/job_array_parser.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/json_text.h"

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

std::string Describe(const Result<JobRecord>& r) {
  if (!r.ok()) return "error " + r.status().message();
  return "job " + r->jid + " " + r->queue + " " + r->jobtype + " " +
         std::to_string(static_cast<int>(r->state)) + " " + std::to_string(r->score) + " " +
         std::to_string(r->enqueued_us) + " " + std::to_string(r->reserve_for_s) + " " + r->payload;
}

[[noreturn]] void Differ(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "fuzz_job: ParseJobArray differs (%s):\n  %s\n  %s\n", what, a.c_str(),
               b.c_str());
  std::abort();
}

// PUSHB's parser against the document path it replaces.
void CheckArray(std::string_view payload, TimePoint now) {
  auto array = bulkhead::ParseJobArray(payload, now, bulkhead::kDefaultMaxJsonDepth);
  Result<nlohmann::json> doc = bulkhead::ParseJson(payload, bulkhead::kDefaultMaxJsonDepth);
  if (array.ok() != doc.ok()) {
    Differ("accepts", array.ok() ? "accepted" : array.status().message(),
           doc.ok() ? "accepted" : doc.status().message());
  }
  if (!doc.ok()) {
    if (array.status().message() != doc.status().message()) {
      Differ("error", array.status().message(), doc.status().message());
    }
    return;
  }
  if (array->is_array != doc->is_array()) Differ("is_array", "", "");
  if (!doc->is_array()) return;
  if (array->jobs.size() != doc->size()) Differ("count", "", "");
  std::vector<std::string_view> texts = bulkhead::JsonArrayElements(payload);
  for (size_t i = 0; i < doc->size(); ++i) {
    auto expected = bulkhead::ParseJobDocument(std::move((*doc)[i]), now, {}, texts.at(i));
    Check(array->jobs[i].job, now);
    if (Describe(array->jobs[i].job) != Describe(expected)) {
      Differ("job", Describe(array->jobs[i].job), Describe(expected));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view payload(reinterpret_cast<const char*>(data), size);
  // Fixed, so a crash reproduces: 2026-01-01T00:00:00Z.
  const TimePoint now{std::chrono::seconds(1'767'225'600)};
  Check(bulkhead::ParseJob(payload, now), now);

  CheckArray(payload, now);
  return 0;
}
