#include "bulkhead/bridge/sidekiq_taker.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "bulkhead/bridge/sidekiq_dead_entry.h"
#include "bulkhead/bridge/sidekiq_scripts.h"
#include "bulkhead/engine/job_parser.h"

namespace bulkhead {
namespace {

// A store failure that may pass (the job is offered again); any other refusal is final.
bool Transient(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kResourceExhausted ||
         s.code() == StatusCode::kInternal;
}

}  // namespace

// The jobs of one Process call, and what became of each.
struct SidekiqTaker::Batch {
  std::vector<std::string> offered;       // handed to the store, in order (marks: theirs)
  std::vector<std::string> done;          // in the store (new, or a repeat): leave the list
  std::vector<std::string> marks;         // offered[i]'s mark; once stored, done[i]'s
  std::vector<std::string> dead;          // refused: to the dead set...
  std::vector<std::string> dead_entries;  // ...as dead_entries[i]
  std::vector<std::string> dead_reasons;  // why (the first is logged)
  std::vector<std::string> later;         // refused for now: offered again
};

SidekiqTaker::SidekiqTaker(boost::asio::io_context& io, const Clock& clock, Engine& engine,
                           RedisClient& commands, std::vector<RedisClient*> blocking,
                           TakerOptions options, BridgeCounters& counters)
    : io_(io),
      clock_(clock),
      engine_(engine),
      commands_(commands),
      blocking_(std::move(blocking)),
      options_(std::move(options)),
      list_(TakingKey(options_.node)),
      counters_(counters),
      retry_for_([&config = engine.config()](const std::string& jobtype) {
        return config.RetryFor(jobtype);
      }),
      waiting_(blocking_.size(), false),
      wake_timer_(io, clock) {}

SidekiqTaker::~SidekiqTaker() { wake_timer_.Cancel(); }

void SidekiqTaker::Resume() {
  running_ = true;
  Pump();
}

void SidekiqTaker::Pause() { running_ = false; }

void SidekiqTaker::Resync() {
  resync_needed_ = true;
  Pump();
}

void SidekiqTaker::TakeBack(std::vector<std::string> jobs) {
  if (jobs.empty()) return;
  counters_.reaped += static_cast<int64_t>(jobs.size());
  Hold(std::move(jobs));
  Pump();
}

bool SidekiqTaker::StoreWritable() const {
  const Store& store = engine_.store();
  return !store.degraded() && store.unavailable_reason().empty();
}

void SidekiqTaker::Pump() {
  if (!running_ || !commands_.available()) return;
  if (!unsettled_.empty()) {
    auto again = std::move(unsettled_);
    unsettled_.clear();
    for (auto& batch : again) Settle(std::move(batch));
  }
  if (resync_needed_) {
    // Nothing may be on its way into the list while it is read.
    if (!reading_list_ && !take_in_flight_ && waits_outstanding_ == 0) ReadList();
    return;
  }
  if (!StoreWritable()) return WakeAfter(options_.pause);
  if (idle_) return WaitForJobs();
  if (!take_in_flight_ && batches_in_flight_ < options_.max_batches_in_flight) SendTake();
}

void SidekiqTaker::SendTake() {
  take_in_flight_ = true;
  std::vector<std::string> args{std::to_string(options_.batch),
                                std::to_string(options_.batch_bytes)};
  args.insert(args.end(), options_.queues.begin(), options_.queues.end());
  auto alive = std::weak_ptr<bool>(alive_);
  commands_.Eval(SidekiqScripts::Get().take, {list_}, std::move(args),
                 [this, alive](Result<RedisReply> r) {
                   if (!alive.lock()) return;
                   take_in_flight_ = false;
                   if (!r.ok()) {  // lost: it may have moved jobs into the list
                     resync_needed_ = true;
                     return Pump();
                   }
                   if (!r->is_array()) {
                     spdlog::warn("sidekiq bridge: take.lua answered {}", r->ToString());
                     return WakeAfter(options_.pause);
                   }
                   if (r->elements().empty()) {
                     idle_ = true;
                     return Pump();
                   }
                   std::vector<std::string> jobs;
                   jobs.reserve(r->elements().size());
                   for (const RedisReply& e : r->elements()) jobs.push_back(e.str());
                   Hold(std::move(jobs));
                   Pump();
                 });
}

// Idle: one BRPOPLPUSH per queue, each on its own connection (a blocked connection serves nothing
// else), moves the next job of its queue straight into the list. A queue whose connection is down
// is looked at by a take once per pause meanwhile.
void SidekiqTaker::WaitForJobs() {
  bool any_down = false;
  for (size_t i = 0; i < blocking_.size(); ++i) {
    if (waiting_[i]) continue;
    if (!blocking_[i]->available()) {
      any_down = true;
      continue;
    }
    waiting_[i] = true;
    ++waits_outstanding_;
    auto alive = std::weak_ptr<bool>(alive_);
    blocking_[i]->Send({"BRPOPLPUSH", "queue:" + options_.queues[i], list_,
                        std::to_string(options_.block_seconds)},
                       [this, alive, i](Result<RedisReply> r) {
                         if (alive.lock()) OnWaited(i, std::move(r));
                       });
  }
  if (any_down) WakeAfter(options_.pause);
}

void SidekiqTaker::OnWaited(size_t queue, Result<RedisReply> reply) {
  waiting_[queue] = false;
  --waits_outstanding_;
  if (!reply.ok()) {
    resync_needed_ = true;  // lost: it may have moved a job
  } else if (reply->is_string()) {
    idle_ = false;
    Hold({reply->str()});
  } else if (reply->is_error()) {
    spdlog::warn("sidekiq bridge: BRPOPLPUSH on queue:{} answered {}", options_.queues[queue],
                 reply->ToString());
  }
  Pump();
}

void SidekiqTaker::ReadList() {
  reading_list_ = true;
  auto alive = std::weak_ptr<bool>(alive_);
  commands_.Send({"LRANGE", list_, "0", "-1"}, [this, alive](Result<RedisReply> r) {
    if (!alive.lock()) return;
    reading_list_ = false;
    if (!r.ok() || !r->is_array()) {
      if (r.ok()) spdlog::warn("sidekiq bridge: LRANGE {} answered {}", list_, r->ToString());
      return WakeAfter(options_.pause);
    }
    resync_needed_ = false;
    // Every copy in the list beyond those this process holds is a leftover.
    std::unordered_map<std::string, size_t> seen;
    std::vector<std::string> leftovers;
    for (const RedisReply& e : r->elements()) {
      size_t copies = ++seen[e.str()];
      auto held = held_.find(e.str());
      if (copies > (held == held_.end() ? 0 : held->second)) leftovers.push_back(e.str());
    }
    if (!leftovers.empty()) {
      spdlog::info("sidekiq bridge: taking again {} job(s) left in {}", leftovers.size(), list_);
      Hold(std::move(leftovers));
    }
    Pump();
  });
}

void SidekiqTaker::Hold(std::vector<std::string> jobs) {
  for (const std::string& job : jobs) ++held_[job];
  held_count_ += jobs.size();
  for (size_t first = 0; first < jobs.size(); first += options_.batch) {
    size_t last = std::min(jobs.size(), first + options_.batch);
    Process({std::make_move_iterator(jobs.begin() + first),
             std::make_move_iterator(jobs.begin() + last)});
  }
}

void SidekiqTaker::Process(std::vector<std::string> jobs) {
  ++batches_in_flight_;
  auto batch = std::make_shared<Batch>();
  TimePoint now = clock_.Now();
  DeadEntryContext dead{.queue = options_.queues.front(),
                        .now = now,
                        .format = options_.format,
                        .max_json_depth = options_.limits.max_json_depth};
  std::vector<MarkedJob> marked;
  for (std::string& text : jobs) {
    auto doc = MapSidekiqJob(text, options_.limits);
    Result<JobRecord> job = doc.ok() ? ParseJobDocument(std::move(*doc), now, retry_for_)
                                     : Result<JobRecord>(doc.status());
    if (!job.ok()) {
      dead.reason = job.status().message();
      batch->dead_entries.push_back(SidekiqDeadEntry(text, dead));
      batch->dead_reasons.push_back(std::move(dead.reason));
      batch->dead.push_back(std::move(text));
      continue;
    }
    batch->marks.push_back(job->jid);  // the mark: Sidekiq's jid
    marked.push_back(MarkedJob{std::move(*job), batch->marks.back()});
    batch->offered.push_back(std::move(text));
  }
  if (marked.empty()) return Settle(std::move(batch));
  auto alive = std::weak_ptr<bool>(alive_);
  engine_.PushTaken(std::move(marked), now + options_.mark_ttl,
                    [this, alive, batch](std::vector<Status> results) {
                      if (alive.lock()) Stored(batch, std::move(results));
                    });
}

void SidekiqTaker::Stored(const std::shared_ptr<Batch>& batch, std::vector<Status> results) {
  std::vector<std::string> offered_marks = std::move(batch->marks);
  batch->marks.clear();
  DeadEntryContext dead{.queue = options_.queues.front(),
                        .now = clock_.Now(),
                        .format = options_.format,
                        .max_json_depth = options_.limits.max_json_depth};
  for (size_t k = 0; k < batch->offered.size() && k < results.size(); ++k) {
    std::string& text = batch->offered[k];
    const Status& s = results[k];
    if (s.ok() || s.code() == StatusCode::kAlreadyExists) {
      ++(s.ok() ? counters_.taken : counters_.repeats);
      batch->done.push_back(std::move(text));
      batch->marks.push_back(offered_marks[k]);
    } else if (Transient(s)) {
      batch->later.push_back(std::move(text));
    } else {  // the checks of a delivery job (Engine::PushTaken)
      dead.reason = s.message();
      batch->dead_entries.push_back(SidekiqDeadEntry(text, dead));
      batch->dead_reasons.push_back(std::move(dead.reason));
      batch->dead.push_back(std::move(text));
    }
  }
  batch->offered.clear();
  Settle(batch);
}

void SidekiqTaker::Settle(std::shared_ptr<Batch> batch) {
  if (batch->done.empty() && batch->dead.empty()) {
    RetryLater(std::move(batch->later));
    --batches_in_flight_;
    return Pump();
  }
  TimePoint now = clock_.Now();
  std::vector<std::string> args{
      std::to_string(batch->done.size()), std::to_string(batch->dead.size()), SidekiqScore(now),
      SidekiqScore(now - std::chrono::seconds(options_.dead_timeout_seconds)),
      std::to_string(-options_.dead_max_jobs)};
  args.reserve(args.size() + batch->done.size() + 2 * batch->dead.size());
  args.insert(args.end(), batch->done.begin(), batch->done.end());
  for (size_t i = 0; i < batch->dead.size(); ++i) {
    args.push_back(batch->dead[i]);
    args.push_back(batch->dead_entries[i]);
  }
  auto alive = std::weak_ptr<bool>(alive_);
  commands_.Eval(SidekiqScripts::Get().settle, {list_, "dead"}, std::move(args),
                 [this, alive, batch](Result<RedisReply> r) {
                   if (!alive.lock()) return;
                   size_t expected = batch->done.size() + batch->dead.size();
                   if (r.ok() && r->is_array() && r->elements().size() == expected) {
                     return Settled(batch, *r);
                   }
                   // Sent again (a settle already applied finds its jobs gone, and changes
                   // nothing more): once the connection is back, or after a pause.
                   if (r.ok())
                     spdlog::warn("sidekiq bridge: settle.lua answered {}", r->ToString());
                   unsettled_.push_back(batch);
                   WakeAfter(options_.pause);
                 });
}

void SidekiqTaker::Settled(const std::shared_ptr<Batch>& batch, const RedisReply& reply) {
  const auto& removed = reply.elements();
  std::vector<std::string> forget;
  for (size_t i = 0; i < batch->done.size(); ++i) {
    // A job no longer in the list was taken back by another node, which may still offer it to the
    // store: its mark stays (until it expires).
    if (removed[i].integer() == 1) forget.push_back(std::move(batch->marks[i]));
    Release(batch->done[i]);
  }
  size_t dead_now = 0;
  for (size_t i = 0; i < batch->dead.size(); ++i) {
    if (removed[batch->done.size() + i].integer() == 1) ++dead_now;
    Release(batch->dead[i]);
  }
  if (dead_now > 0) {
    counters_.dead += static_cast<int64_t>(dead_now);
    spdlog::warn("sidekiq bridge: {} job(s) not taken, now in Sidekiq's dead set; the first: {}",
                 dead_now, batch->dead_reasons.front());
  }
  if (!forget.empty()) {
    engine_.store().taken_marks().Forget(std::move(forget), [](Status s) {
      if (!s.ok()) spdlog::warn("sidekiq bridge: marks not forgotten: {}", s.message());
    });
  }
  RetryLater(std::move(batch->later));
  --batches_in_flight_;
  Pump();
}

void SidekiqTaker::Release(const std::string& job) {
  auto it = held_.find(job);
  if (it == held_.end()) return;
  --held_count_;
  if (--it->second == 0) held_.erase(it);
}

void SidekiqTaker::RetryLater(std::vector<std::string> jobs) {
  if (jobs.empty()) return;
  for (std::string& job : jobs) later_.push_back(std::move(job));
  WakeAfter(options_.pause);
}

void SidekiqTaker::WakeAfter(Duration delay) {
  if (wake_armed_) return;
  wake_armed_ = true;
  wake_timer_.ExpiresAfter(delay);
  auto alive = std::weak_ptr<bool>(alive_);
  wake_timer_.AsyncWait([this, alive](boost::system::error_code ec) {
    if (ec || !alive.lock()) return;
    wake_armed_ = false;
    idle_ = false;
    if (!later_.empty() && running_ && StoreWritable()) {
      std::vector<std::string> again = std::move(later_);
      later_.clear();
      for (size_t first = 0; first < again.size(); first += options_.batch) {
        size_t last = std::min(again.size(), first + options_.batch);
        Process({std::make_move_iterator(again.begin() + first),
                 std::make_move_iterator(again.begin() + last)});
      }
    } else if (!later_.empty()) {
      WakeAfter(options_.pause);
    }
    Pump();
  });
}

}  // namespace bulkhead
