// DeferredStore: a Store that answers every call later, as a networked store does. It forwards each
// call to an inner store and posts each callback through `poster` instead of running it where the
// inner store does, so no answer ever arrives before the call returns, and answers arrive in the
// order they were given.
//
// Tests run suites over it to prove their code keeps Store's contract (store.h: "an
// implementation may run a callback before the method returns ... or later"): a caller that reads
// a local filled by the callback right after the call, or captures a local by reference that is
// gone by the time the answer comes, fails (or trips ASan) here.
//
// A test that needs some calls answered differently (held until it says so) subclasses it and
// overrides those; the rest still forward.
//
// Threading: as Store. `poster` must run closures on the thread that calls the store, in order.
#pragma once

#include <functional>
#include <memory>
#include <tuple>
#include <utility>

#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/deferred_taken_marks.h"

namespace bulkhead {

class DeferredStore : public Store {
 public:
  // Owns `inner`.
  DeferredStore(std::unique_ptr<Store> inner, Poster poster)
      : owned_(std::move(inner)), inner_(owned_.get()), poster_(std::move(poster)) {}
  // Borrows `inner`, which must outlive this.
  DeferredStore(Store& inner, Poster poster) : inner_(&inner), poster_(std::move(poster)) {}

  std::string_view Name() const override { return inner_->Name(); }
  bool shared() const override { return inner_->shared(); }
  bool degraded() const override { return inner_->degraded(); }
  std::string degraded_reason() const override { return inner_->degraded_reason(); }
  std::string unavailable_reason() const override { return inner_->unavailable_reason(); }
  void SetFatalHandler(FatalHandler handler) override {
    inner_->SetFatalHandler(std::move(handler));
  }
  void SetWakeHandler(WakeHandler handler) override { inner_->SetWakeHandler(std::move(handler)); }
  void SetHostStateHandler(HostStateHandler handler) override {
    inner_->SetHostStateHandler(std::move(handler));
  }
  void SetWorkerSignalHandler(WorkerSignalHandler handler) override {
    inner_->SetWorkerSignalHandler(std::move(handler));
  }
  void PublishWorkerSignal(const std::string& wid, const std::string& state) override {
    inner_->PublishWorkerSignal(wid, state);
  }
  void SetRosterSource(RosterSource source) override { inner_->SetRosterSource(std::move(source)); }
  void ListOtherRosters(RostersCallback cb) override {
    inner_->ListOtherRosters(Later(std::move(cb)));
  }
  std::string node_id() const override { return inner_->node_id(); }
  size_t live_nodes() const override { return inner_->live_nodes(); }
  void SetNodeCountHandler(NodeCountHandler handler) override {
    inner_->SetNodeCountHandler(std::move(handler));
  }
  void TryLease(const std::string& name, Duration ttl,
                std::function<void(Result<bool>)> cb) override {
    inner_->TryLease(name, ttl, Later(std::move(cb)));
  }
  void ReleaseLease(const std::string& name) override { inner_->ReleaseLease(name); }
  Status Open() override { return inner_->Open(); }
  void Close() override { inner_->Close(); }

  void Push(JobRecord job, Done durable) override {
    inner_->Push(std::move(job), Later(std::move(durable)));
  }
  void Fetch(const std::vector<std::string>& queues, TimePoint now, JobCallback cb) override {
    inner_->Fetch(queues, now, Later(std::move(cb)));
  }
  void FetchFor(const std::vector<std::string>& queues, const std::string& wid, TimePoint now,
                JobCallback cb) override {
    inner_->FetchFor(queues, wid, now, Later(std::move(cb)));
  }
  void Ack(const std::string& jid, TimePoint now, JobCallback durable) override {
    inner_->Ack(jid, now, Later(std::move(durable)));
  }
  void GetWorking(const std::string& jid, JobCallback cb) override {
    inner_->GetWorking(jid, Later(std::move(cb)));
  }
  void ExtendReservation(const std::string& jid, TimePoint until, Done durable) override {
    inner_->ExtendReservation(jid, until, Later(std::move(durable)));
  }
  void Move(JobRecord job, TimePoint now, Done durable) override {
    inner_->Move(std::move(job), now, Later(std::move(durable)));
  }
  void FailReserved(const std::string& jid, TimePoint reserved_until, std::optional<JobRecord> next,
                    bool count_failure, TimePoint now, Done durable) override {
    inner_->FailReserved(jid, reserved_until, std::move(next), count_failure, now,
                         Later(std::move(durable)));
  }
  void Remove(const std::string& jid, Done durable) override {
    inner_->Remove(jid, Later(std::move(durable)));
  }
  void EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) override {
    inner_->EnqueueDue(set, now, limit, Later(std::move(cb)));
  }
  void ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) override {
    inner_->ExpiredReservations(now, limit, Later(std::move(cb)));
  }
  void PurgeDead(TimePoint now, size_t limit, CountCallback cb) override {
    inner_->PurgeDead(now, limit, Later(std::move(cb)));
  }
  void Mutate(MutateOp op, JobState set, const MutateFilter& filter, TimePoint now,
              Duration dead_ttl, CountCallback durable) override {
    inner_->Mutate(op, set, filter, now, dead_ttl, Later(std::move(durable)));
  }
  void SetPaused(const std::vector<std::string>& queues, bool paused, Done durable) override {
    inner_->SetPaused(queues, paused, Later(std::move(durable)));
  }
  void RemoveQueues(const std::vector<std::string>& queues, Done durable) override {
    inner_->RemoveQueues(queues, Later(std::move(durable)));
  }
  void CountOutcome(int64_t processed, int64_t failures, TimePoint now) override {
    inner_->CountOutcome(processed, failures, now);
  }
  void Flush(Done durable) override { inner_->Flush(Later(std::move(durable))); }
  void PutSigningKey(const std::string& key_id, const std::string& pem, Done durable) override {
    inner_->PutSigningKey(key_id, pem, Later(std::move(durable)));
  }
  void RemoveSigningKey(const std::string& key_id, Done durable) override {
    inner_->RemoveSigningKey(key_id, Later(std::move(durable)));
  }
  void ListSigningKeys(SigningKeysCallback cb) override {
    inner_->ListSigningKeys(Later(std::move(cb)));
  }
  void PutHostState(const HostStateRecord& record, Done durable) override {
    inner_->PutHostState(record, Later(std::move(durable)));
  }
  void RemoveHostState(const std::string& host, Done durable) override {
    inner_->RemoveHostState(host, Later(std::move(durable)));
  }
  void ListHostStates(HostStatesCallback cb) override {
    inner_->ListHostStates(Later(std::move(cb)));
  }
  void Stats(std::function<void(Result<StoreStats>)> cb) override {
    inner_->Stats(Later(std::move(cb)));
  }
  void List(JobState set, size_t offset, size_t limit, JobsCallback cb) override {
    inner_->List(set, offset, limit, Later(std::move(cb)));
  }
  // Unique jobs and cron.
  void PushUnique(JobRecord job, const UniqueLock& lock, TimePoint now, Done durable) override {
    inner_->PushUnique(std::move(job), lock, now, Later(std::move(durable)));
  }
  void ReleaseUniqueLock(const std::string& jid, Done durable) override {
    inner_->ReleaseUniqueLock(jid, durable ? Later(std::move(durable)) : nullptr);
  }
  void ClaimCronFiring(const std::string& entry, TimePoint due, ClaimCallback durable) override {
    inner_->ClaimCronFiring(entry, due, Later(std::move(durable)));
  }
  void ListCronFirings(CronFiringsCallback cb) override {
    inner_->ListCronFirings(Later(std::move(cb)));
  }

  // Queue throttling.
  void FetchThrottled(const std::vector<std::string>& queues, const ThrottledFetch& throttled,
                      TimePoint now, JobCallback cb) override {
    inner_->FetchThrottled(queues, throttled, now, Later(std::move(cb)));
  }
  void ThrottleUses(const std::vector<QueueThrottle>& throttles, TimePoint now,
                    ThrottleUsesCallback cb) override {
    inner_->ThrottleUses(throttles, now, Later(std::move(cb)));
  }

  // Batches.
  void BatchNew(BatchRecord batch, TimePoint now, Done durable) override {
    inner_->BatchNew(std::move(batch), now, Later(std::move(durable)));
  }
  void BatchGet(const std::string& bid, TimePoint now, BatchCallback cb) override {
    inner_->BatchGet(bid, now, Later(std::move(cb)));
  }
  void BatchCommit(const std::string& bid, TimePoint now, Done durable) override {
    inner_->BatchCommit(bid, now, Later(std::move(durable)));
  }
  void PushBatchMember(JobRecord job, const std::string& bid, TimePoint now,
                       Done durable) override {
    inner_->PushBatchMember(std::move(job), bid, now, Later(std::move(durable)));
  }
  void ExpireBatches(TimePoint now, size_t limit, CountCallback cb) override {
    inner_->ExpireBatches(now, limit, Later(std::move(cb)));
  }
  void GetBatchCounts(std::function<void(Result<BatchCounts>)> cb) override {
    inner_->GetBatchCounts(Later(std::move(cb)));
  }

  // Tracking.
  void TrackSet(TrackUpdate update, TimePoint now, Done durable) override {
    inner_->TrackSet(std::move(update), now, Later(std::move(durable)));
  }
  void TrackPushed(const std::string& jid, TimePoint now, Done durable) override {
    inner_->TrackPushed(jid, now, Later(std::move(durable)));
  }
  void TrackGet(const std::string& jid, TimePoint now, TrackCallback cb) override {
    inner_->TrackGet(jid, now, Later(std::move(cb)));
  }
  void ExpireTracks(TimePoint now, size_t limit, CountCallback cb) override {
    inner_->ExpireTracks(now, limit, Later(std::move(cb)));
  }
  // Job lookup by jid and reservation holders.
  void FindJob(const std::string& jid, JobCallback cb) override {
    inner_->FindJob(jid, Later(std::move(cb)));
  }
  void SetHolder(const std::string& jid, const std::string& wid, Done durable) override {
    inner_->SetHolder(jid, wid, Later(std::move(durable)));
  }
  void ListHeld(size_t limit, HeldJobsCallback cb) override {
    inner_->ListHeld(limit, Later(std::move(cb)));
  }

  TakenMarks& taken_marks() override { return taken_marks_; }

  Store& inner() { return *inner_; }

 private:
  // Wraps `cb` so that its answer is posted instead of run where the inner store gives it.
  template <typename... Args>
  std::function<void(Args...)> Later(std::function<void(Args...)> cb) {
    return [poster = poster_, cb = std::move(cb)](Args... args) {
      poster([cb, args = std::make_tuple(std::move(args)...)]() mutable {
        std::apply(cb, std::move(args));
      });
    };
  }

  std::unique_ptr<Store> owned_;  // null when borrowed
  Store* inner_;
  Poster poster_;
  DeferredTakenMarks taken_marks_{inner_->taken_marks(), poster_};
};

}  // namespace bulkhead
