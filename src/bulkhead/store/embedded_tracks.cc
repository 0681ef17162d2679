#include "bulkhead/store/embedded_tracks.h"

namespace bulkhead {

void EmbeddedTracks::Set(TrackUpdate update, TimePoint now, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    context_.state().tracks().Set(update, ToUnixMicros(now), out);
    return Status::Ok();
  });
}

void EmbeddedTracks::Pushed(const std::string& jid, TimePoint now, Done durable) {
  context_.Apply(std::move(durable), [&](std::vector<Change>& out) {
    MemoryState& state = context_.state();
    if (state.HoldsUnreserved(jid)) {
      state.tracks().SetState(jid, kTrackEnqueued, true, ToUnixMicros(now), out);
    }
    return Status::Ok();
  });
}

void EmbeddedTracks::Get(const std::string& jid, TimePoint now, TrackCallback cb) {
  const TrackRecord* r = context_.state().tracks().Find(jid, ToUnixMicros(now));
  cb(r ? std::optional<TrackRecord>(*r) : std::nullopt);
}

void EmbeddedTracks::Expire(TimePoint now, size_t limit, CountCallback cb) {
  if (context_.Refused(cb)) return;
  std::vector<Change> changes;
  size_t n = context_.state().tracks().Expire(ToUnixMicros(now), limit, changes);
  context_.Commit(std::move(changes), nullptr);
  cb(n);
}

}  // namespace bulkhead
