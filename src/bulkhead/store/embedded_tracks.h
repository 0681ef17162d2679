// EmbeddedTracks: TrackStore of the embedded store. MemoryState's TrackBook does the work
// (track_book.h), the change log makes it durable.
#pragma once

#include "bulkhead/store/embedded_context.h"
#include "bulkhead/store/track_store.h"

namespace bulkhead {

class EmbeddedTracks final : public TrackStore {
 public:
  explicit EmbeddedTracks(EmbeddedContext& context) : context_(context) {}
  void Set(TrackUpdate update, TimePoint now, Done durable) override;
  void Pushed(const std::string& jid, TimePoint now, Done durable) override;
  void Get(const std::string& jid, TimePoint now, TrackCallback cb) override;
  void Expire(TimePoint now, size_t limit, CountCallback cb) override;

 private:
  EmbeddedContext& context_;
};

}  // namespace bulkhead
