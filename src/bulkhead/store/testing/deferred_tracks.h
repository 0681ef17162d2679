// DeferredTracks: a TrackStore that answers later (deferred_store.h), over an inner store's.
#pragma once

#include "bulkhead/store/testing/deferred_later.h"
#include "bulkhead/store/track_store.h"

namespace bulkhead {

class DeferredTracks final : public TrackStore {
 public:
  DeferredTracks(TrackStore& inner, Later later) : inner_(inner), later_(std::move(later)) {}
  void Set(TrackUpdate update, TimePoint now, Done durable) override {
    inner_.Set(std::move(update), now, later_(std::move(durable)));
  }
  void Pushed(const std::string& jid, TimePoint now, Done durable) override {
    inner_.Pushed(jid, now, later_(std::move(durable)));
  }
  void Get(const std::string& jid, TimePoint now, TrackCallback cb) override {
    inner_.Get(jid, now, later_(std::move(cb)));
  }
  void Expire(TimePoint now, size_t limit, CountCallback cb) override {
    inner_.Expire(now, limit, later_(std::move(cb)));
  }

 private:
  TrackStore& inner_;
  Later later_;
};

}  // namespace bulkhead
