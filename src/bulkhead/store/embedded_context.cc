#include "bulkhead/store/embedded_context.h"

#include "bulkhead/util/time_format.h"

namespace bulkhead {

EmbeddedContext::EmbeddedContext(std::unique_ptr<ChangeLog> log) : log_(std::move(log)) {}

Status EmbeddedContext::Load() {
  if (!log_) return Status::Ok();
  return log_->Load(state_);
}

void EmbeddedContext::Close() {
  if (closed_) return;
  closed_ = true;
  if (log_) log_->Close();
}

bool EmbeddedContext::degraded() const { return log_ && !log_->failure().ok(); }

std::string EmbeddedContext::degraded_reason() const {
  if (!log_) return {};
  Status failure = log_->failure();
  if (failure.ok()) return {};
  return "store degraded: " + failure.message() + "; restart bulkhead once the disk is fixed";
}

Status EmbeddedContext::Writable() const {
  if (!degraded()) return Status::Ok();
  return Status::Unavailable(degraded_reason());
}

void EmbeddedContext::Commit(std::vector<Change> changes, std::function<void(Status)> durable) {
  if (!log_ || changes.empty()) {
    if (durable) durable(Status::Ok());
    return;
  }
  log_->Append(std::move(changes), std::move(durable));
}

void EmbeddedContext::AddOutcome(int64_t processed, int64_t failures, TimePoint now,
                                 std::vector<Change>& changes) {
  // Every ACK and FAIL lands here: format the day once per day, not once per job.
  int64_t day_number = ToUnixMicros(now) / (86'400LL * 1'000'000);
  if (day_number != counted_day_number_) {
    counted_day_number_ = day_number;
    counted_day_ = FormatDate(now);
  }
  const std::string& day = counted_day_;
  if (processed != 0) {
    state_.AddCounter("processed", processed, changes);
    state_.AddCounter("processed:" + day, processed, changes);
  }
  if (failures != 0) {
    state_.AddCounter("failures", failures, changes);
    state_.AddCounter("failures:" + day, failures, changes);
  }
}

void EmbeddedContext::Fetch(const std::vector<std::string>& queues, const ThrottledFetch* throttled,
                            const std::string& holder, TimePoint now, JobCallback cb) {
  if (Refused(cb)) return;
  std::vector<Change> changes;
  auto job = state_.Fetch(queues, ToUnixMicros(now), changes, throttled);
  if (job) state_.tracks().SetState(job->jid, kTrackWorking, false, ToUnixMicros(now), changes);
  if (job && !holder.empty()) state_.SetHolder(job->jid, holder, changes);
  Commit(std::move(changes), nullptr);
  cb(std::move(job));
}

}  // namespace bulkhead
