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
// Each part (store.h) is a deferred wrapper of its own (deferred_<part>.h) over the inner store's
// part, answering through the same Later. A test that needs some calls answered differently (held
// until it says so) subclasses it and overrides those, or, for a part's calls, overrides the
// part's accessor with a part of its own (built over DeferredStore's, with later()); the rest
// still forward.
//
// Threading: as Store. `poster` must run closures on the thread that calls the store, in order.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "bulkhead/store/store.h"
#include "bulkhead/store/testing/deferred_batches.h"
#include "bulkhead/store/testing/deferred_cluster_link.h"
#include "bulkhead/store/testing/deferred_cron_claims.h"
#include "bulkhead/store/testing/deferred_holders.h"
#include "bulkhead/store/testing/deferred_host_states.h"
#include "bulkhead/store/testing/deferred_later.h"
#include "bulkhead/store/testing/deferred_signing_keys.h"
#include "bulkhead/store/testing/deferred_taken_marks.h"
#include "bulkhead/store/testing/deferred_throttles.h"
#include "bulkhead/store/testing/deferred_tracks.h"
#include "bulkhead/store/testing/deferred_unique_locks.h"

namespace bulkhead {

class DeferredStore : public Store {
 public:
  // Owns `inner`.
  DeferredStore(std::unique_ptr<Store> inner, Poster poster)
      : DeferredStore(*inner, std::move(poster)) {
    owned_ = std::move(inner);
  }
  // Borrows `inner`, which must outlive this.
  DeferredStore(Store& inner, Poster poster)
      : inner_(&inner),
        later_(std::move(poster)),
        cluster_(inner.cluster(), later_),
        unique_locks_(inner.unique_locks(), later_),
        cron_claims_(inner.cron_claims(), later_),
        batches_(inner.batches(), later_),
        tracks_(inner.tracks(), later_),
        throttles_(inner.throttles(), later_),
        holders_(inner.holders(), later_),
        signing_keys_(inner.signing_keys(), later_),
        host_states_(inner.host_states(), later_),
        taken_marks_(inner.taken_marks(), later_) {}

  std::string_view Name() const override { return inner_->Name(); }
  bool degraded() const override { return inner_->degraded(); }
  std::string degraded_reason() const override { return inner_->degraded_reason(); }
  std::string unavailable_reason() const override { return inner_->unavailable_reason(); }
  void SetFatalHandler(FatalHandler handler) override {
    inner_->SetFatalHandler(std::move(handler));
  }
  Status Open() override { return inner_->Open(); }
  void Close() override { inner_->Close(); }

  void Push(JobRecord job, Done durable) override {
    inner_->Push(std::move(job), later_(std::move(durable)));
  }
  void Fetch(const std::vector<std::string>& queues, TimePoint now, JobCallback cb) override {
    inner_->Fetch(queues, now, later_(std::move(cb)));
  }
  void FetchFor(const std::vector<std::string>& queues, const std::string& wid, TimePoint now,
                JobCallback cb) override {
    inner_->FetchFor(queues, wid, now, later_(std::move(cb)));
  }
  void Ack(const std::string& jid, TimePoint now, JobCallback durable) override {
    inner_->Ack(jid, now, later_(std::move(durable)));
  }
  void GetWorking(const std::string& jid, JobCallback cb) override {
    inner_->GetWorking(jid, later_(std::move(cb)));
  }
  void ExtendReservation(const std::string& jid, TimePoint until, Done durable) override {
    inner_->ExtendReservation(jid, until, later_(std::move(durable)));
  }
  void Move(JobRecord job, TimePoint now, Done durable) override {
    inner_->Move(std::move(job), now, later_(std::move(durable)));
  }
  void FailReserved(const std::string& jid, TimePoint reserved_until, std::optional<JobRecord> next,
                    bool count_failure, TimePoint now, Done durable) override {
    inner_->FailReserved(jid, reserved_until, std::move(next), count_failure, now,
                         later_(std::move(durable)));
  }
  void Remove(const std::string& jid, Done durable) override {
    inner_->Remove(jid, later_(std::move(durable)));
  }
  void EnqueueDue(JobState set, TimePoint now, size_t limit, JobsCallback cb) override {
    inner_->EnqueueDue(set, now, limit, later_(std::move(cb)));
  }
  void ExpiredReservations(TimePoint now, size_t limit, JobsCallback cb) override {
    inner_->ExpiredReservations(now, limit, later_(std::move(cb)));
  }
  void PurgeDead(TimePoint now, size_t limit, CountCallback cb) override {
    inner_->PurgeDead(now, limit, later_(std::move(cb)));
  }
  void Mutate(MutateOp op, JobState set, const MutateFilter& filter, TimePoint now,
              Duration dead_ttl, CountCallback durable) override {
    inner_->Mutate(op, set, filter, now, dead_ttl, later_(std::move(durable)));
  }
  void SetPaused(const std::vector<std::string>& queues, bool paused, Done durable) override {
    inner_->SetPaused(queues, paused, later_(std::move(durable)));
  }
  void RemoveQueues(const std::vector<std::string>& queues, Done durable) override {
    inner_->RemoveQueues(queues, later_(std::move(durable)));
  }
  void CountOutcome(int64_t processed, int64_t failures, TimePoint now) override {
    inner_->CountOutcome(processed, failures, now);
  }
  void Flush(Done durable) override { inner_->Flush(later_(std::move(durable))); }
  void Stats(std::function<void(Result<StoreStats>)> cb) override {
    inner_->Stats(later_(std::move(cb)));
  }
  void List(JobState set, size_t offset, size_t limit, JobsCallback cb) override {
    inner_->List(set, offset, limit, later_(std::move(cb)));
  }
  void FindJob(const std::string& jid, JobCallback cb) override {
    inner_->FindJob(jid, later_(std::move(cb)));
  }

  // The parts.
  ClusterLink& cluster() override { return cluster_; }
  UniqueLocks& unique_locks() override { return unique_locks_; }
  CronClaims& cron_claims() override { return cron_claims_; }
  BatchStore& batches() override { return batches_; }
  TrackStore& tracks() override { return tracks_; }
  ThrottleStore& throttles() override { return throttles_; }
  HolderStore& holders() override { return holders_; }
  SigningKeyStore& signing_keys() override { return signing_keys_; }
  HostStateStore& host_states() override { return host_states_; }
  TakenMarks& taken_marks() override { return taken_marks_; }

  Store& inner() { return *inner_; }

 protected:
  // How this store posts its answers, for a subclass's own parts (a test's ClusterLink).
  const Later& later() const { return later_; }

 private:
  std::unique_ptr<Store> owned_;  // null when borrowed
  Store* inner_;
  // Wraps a callback so that its answer is posted instead of run where the inner store gives it.
  const Later later_;
  DeferredClusterLink cluster_;
  DeferredUniqueLocks unique_locks_;
  DeferredCronClaims cron_claims_;
  DeferredBatches batches_;
  DeferredTracks tracks_;
  DeferredThrottles throttles_;
  DeferredHolders holders_;
  DeferredSigningKeys signing_keys_;
  DeferredHostStates host_states_;
  DeferredTakenMarks taken_marks_;
};

}  // namespace bulkhead
