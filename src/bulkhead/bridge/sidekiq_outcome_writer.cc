#include "bulkhead/bridge/sidekiq_outcome_writer.h"

#include <spdlog/spdlog.h>

#include "bulkhead/bridge/sidekiq_scripts.h"
#include "bulkhead/util/json.h"

namespace bulkhead {

SidekiqOutcomeWriter::SidekiqOutcomeWriter(Engine& engine, RedisClient& commands,
                                           const Clock& clock, SidekiqOutcomeJobOptions options,
                                           BridgeCounters& counters, size_t slots)
    : engine_(engine),
      commands_(commands),
      clock_(clock),
      options_(std::move(options)),
      counters_(counters),
      slots_(slots) {}

SidekiqOutcomeWriter::~SidekiqOutcomeWriter() { Pause(); }

void SidekiqOutcomeWriter::Resume() {
  running_ = true;
  Fill();
}

void SidekiqOutcomeWriter::Pause() {
  running_ = false;
  // A withdrawn FETCH's job, if the store reserved one for it after all, goes back to the queue.
  for (uint64_t ticket : tickets_) engine_.CancelFetch(ticket);
  busy_ -= tickets_.size();
  tickets_.clear();
}

void SidekiqOutcomeWriter::Fill() {
  while (running_ && busy_ < slots_) {
    ++busy_;
    Fetch();
  }
}

void SidekiqOutcomeWriter::Fetch() {
  // The answer may come before Fetch returns (a job at hand): `ticket` is known only after.
  auto answered = std::make_shared<bool>(false);
  auto ticket_of = std::make_shared<uint64_t>(0);
  auto alive = std::weak_ptr<bool>(alive_);
  uint64_t ticket =
      engine_.Fetch({kSidekiqOutcomesQueue}, "",
                    [this, alive, answered, ticket_of](Result<std::optional<std::string>> job) {
                      *answered = true;
                      if (!alive.lock()) return;
                      if (*ticket_of != 0) tickets_.erase(*ticket_of);
                      if (!job.ok() || !job->has_value()) return SlotDone(job.ok());
                      Write(**job);
                    });
  if (!*answered && ticket != 0) {
    *ticket_of = ticket;
    tickets_.insert(ticket);
  }
}

void SidekiqOutcomeWriter::SlotDone(bool again) {
  --busy_;
  if (again) Fill();
}

void SidekiqOutcomeWriter::Write(const std::string& job_json) {
  auto doc = ParseJson(job_json, kDefaultMaxJsonDepth);
  std::string jid = doc.ok() && doc->is_object() ? doc->value("jid", "") : "";
  Result<OutcomeRecord> record = Status::InvalidArgument("no outcome object in args[0]");
  if (doc.ok() && doc->is_object() && doc->contains("args") && (*doc)["args"].is_array() &&
      !(*doc)["args"].empty()) {
    record = OutcomeRecordFromJson((*doc)["args"][0]);
  }
  if (!record.ok()) {
    spdlog::error("sidekiq bridge: outcome job {} cannot be read ({}); failed", jid,
                  record.status().message());
    engine_.Fail(jid,
                 FailureReport{.errtype = "BadOutcomeJob", .message = record.status().message()},
                 [](Status) {});
    return SlotDone(true);
  }
  std::string text = SidekiqOutcomeJob(*record, jid, clock_.Now(), options_);
  auto alive = std::weak_ptr<bool>(alive_);
  commands_.Eval(SidekiqScripts::Get().push_outcomes, {"queue:" + options_.queue, "queues"},
                 {options_.queue, std::move(text)}, [this, alive, jid](Result<RedisReply> r) {
                   if (!alive.lock()) return;
                   if (r.ok() && r->is_integer()) {
                     ++counters_.outcomes_written;
                     engine_.Ack(jid, [jid](Status s) {
                       if (!s.ok()) {
                         spdlog::warn(
                             "sidekiq bridge: outcome job {} written, not acknowledged: "
                             "{}; it will be written again",
                             jid, s.message());
                       }
                     });
                     return SlotDone(true);
                   }
                   if (r.ok()) {
                     spdlog::warn("sidekiq bridge: push_outcomes.lua answered {}", r->ToString());
                   }
                   GiveBack(jid);
                   SlotDone(false);  // until the Redis answers again (Resume)
                 });
}

void SidekiqOutcomeWriter::GiveBack(const std::string& jid) {
  Store& store = engine_.store();
  store.GetWorking(jid, [&store, jid, now = clock_.Now()](Result<std::optional<JobRecord>> r) {
    if (!r.ok() || !r->has_value()) return;
    JobRecord next = **r;
    TimePoint until = FromUnixMicros(next.score);
    next.state = JobState::kQueued;
    store.FailReserved(jid, until, next, /*count_failure=*/false, now, [jid](Status s) {
      if (!s.ok()) {
        spdlog::warn(
            "sidekiq bridge: outcome job {} not given back ({}); it comes back when "
            "its reservation expires",
            jid, s.message());
      }
    });
  });
}

}  // namespace bulkhead
