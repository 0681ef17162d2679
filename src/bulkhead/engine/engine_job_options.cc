// Engine: the custom job options checked at PUSH and FETCH: unique jobs (unique_jobs.h) and
// expiring jobs (expiring_jobs.h); and the store step a PUSH is routed to (unique, batch, plain).
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "bulkhead/engine/engine.h"
#include "bulkhead/engine/expiring_jobs.h"
#include "bulkhead/engine/unique_jobs.h"
#include "bulkhead/util/json.h"

namespace bulkhead {
namespace {

// Whether a payload may carry the options (a cheap test, so that other jobs are not parsed again).
bool Mentions(const std::string& payload, std::string_view field) {
  return TextContains(payload, field);
}

}  // namespace

Status Engine::ReadPushOptions(JobRecord& job, std::optional<UniqueLock>& lock) {
  bool unique = Mentions(job.payload, "\"unique_");
  bool expiring = Mentions(job.payload, "\"expires_");
  if (!unique && !expiring) return Status::Ok();
  auto doc = nlohmann::json::parse(job.payload, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return Status::Ok();
  TimePoint now = clock_.Now();
  if (expiring) {
    auto changed = PrepareExpiry(doc, now);
    if (!changed.ok()) return changed.status();
    if (*changed) job.payload = doc.dump();
  }
  if (unique) {
    auto spec = UniqueLockFor(doc, job, now);
    if (!spec.ok()) return spec.status();
    lock = std::move(*spec);
  }
  return Status::Ok();
}

bool Engine::AdmitFetched(const JobRecord& job) {
  // Both options live in `custom`: most jobs have none, and one search tells.
  if (!Mentions(job.payload, "\"custom\"")) return true;
  bool expiring = Mentions(job.payload, "\"expires_at\"");
  bool unique = Mentions(job.payload, "\"unique_until\"");
  if (!expiring && !unique) return true;
  auto doc = nlohmann::json::parse(job.payload, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return true;
  std::string jid = job.jid;
  auto log_failure = [jid](const char* what) {
    return [jid, what](Status s) {
      if (!s.ok()) spdlog::warn("JID {}: {}: {}", jid, what, s.message());
    };
  };
  if (auto at = expiring ? ExpiresAt(doc) : std::nullopt; at && *at <= clock_.Now()) {
    // As Faktory logs it ("JID <jid>: Halt: job expired"); once: the job is gone after this.
    spdlog::info("JID {}: job expired", jid);
    expired_by_queue_[job.queue]++;
    store_.unique_locks().Release(jid, log_failure("releasing the unique lock of an expired job"));
    store_.Remove(jid, log_failure("deleting the expired job"));
    return false;
  }
  if (unique && UniqueUntilStart(doc)) {
    store_.unique_locks().Release(jid, log_failure("releasing the unique lock at start"));
  }
  return true;
}

void Engine::RoutePush(JobRecord job, PushRoute route, Done answer) {
  if (route.lock) {  // unique
    store_.unique_locks().Push(std::move(job), *route.lock, clock_.Now(),
                               alive_.Guard([this, answer = std::move(answer)](Status st) {
                                 if (st.ok()) {
                                   unique_counts_.taken++;
                                 } else if (IsNotUnique(st)) {
                                   unique_counts_.denied++;
                                 }
                                 answer(st);
                               }));
    return;
  }
  if (!route.bid.empty()) {  // a batch member
    store_.batches().PushMember(std::move(job), route.bid, clock_.Now(), std::move(answer));
    return;
  }
  store_.Push(std::move(job), std::move(answer));
}

}  // namespace bulkhead
