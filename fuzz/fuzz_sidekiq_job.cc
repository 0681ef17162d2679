// Fuzz target: what the Sidekiq bridge reads from the application's Redis — one entry of a Sidekiq
// queue — as it reads it (src/bulkhead/bridge/sidekiq_job_mapping.h, then ParseJobDocument as
// PUSH; sidekiq_dead_entry.h for a refusal).
// Invariants checked: a refusal carries a message, and its dead set entry is a JSON object with
// error_class, error_message and failed_at; an accepted job is accepted again from its normalised
// payload with the same jid, queue and jobtype (as a worker pushing it again would).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "bulkhead/bridge/sidekiq_dead_entry.h"
#include "bulkhead/bridge/sidekiq_job_mapping.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/util/json.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_sidekiq_job: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void CheckDeadEntry(std::string_view text, const std::string& reason, bulkhead::TimePoint now) {
  if (reason.empty()) Fail("a refusal without a message", text);
  std::string entry = bulkhead::SidekiqDeadEntry(
      text, {.queue = "bulkhead", .reason = reason, .now = now, .max_json_depth = 64});
  auto doc = bulkhead::ParseJson(entry, 100);
  if (!doc.ok() || !doc->is_object()) Fail("a dead set entry that is not a JSON object", entry);
  // The message as written: invalid UTF-8 in it (a parse error quotes the bytes) is replaced.
  const nlohmann::json& message = (*doc)["error_message"];
  if (!message.is_string() || message.get_ref<const std::string&>().empty() ||
      !(*doc)["failed_at"].is_number() || (*doc)["error_class"] != bulkhead::kRefusedErrorClass) {
    Fail("a dead set entry without its error fields", entry);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Fixed, so a crash reproduces: 2026-01-01T00:00:00Z.
  const bulkhead::TimePoint now{std::chrono::seconds(1'767'225'600)};
  auto doc = bulkhead::MapSidekiqJob(text, {.max_job_bytes = 100000, .max_json_depth = 64});
  if (!doc.ok()) {
    CheckDeadEntry(text, doc.status().message(), now);
    return 0;
  }
  auto job = bulkhead::ParseJobDocument(std::move(*doc), now);
  if (!job.ok()) {
    CheckDeadEntry(text, job.status().message(), now);
    return 0;
  }
  auto again = bulkhead::ParseJob(job->payload, now);
  if (!again.ok()) Fail("the normalised payload is refused when pushed again", job->payload);
  if (again->jid != job->jid || again->queue != job->queue || again->jobtype != job->jobtype) {
    Fail("the normalised payload parses to a different job", job->payload);
  }
  return 0;
}
