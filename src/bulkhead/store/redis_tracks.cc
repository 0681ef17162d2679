#include "bulkhead/store/redis_tracks.h"

#include <cstdlib>

#include "bulkhead/store/redis_store_scripts.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

void RedisTracks::Set(TrackUpdate update, TimePoint now, Done durable) {
  calls_.Eval(
      Script::kTrackSet, "track_set",
      {update.jid, Us(now), update.percent ? std::to_string(*update.percent) : std::string(),
       update.desc ? "1" : "0", update.desc.value_or("")},
      [durable = std::move(durable)](Result<RedisReply> r) {
        durable(r.ok() ? Status::Ok() : r.status());
      });
}

void RedisTracks::Pushed(const std::string& jid, TimePoint now, Done durable) {
  calls_.Eval(Script::kTrackPushed, "track_pushed", {jid, Us(now)},
              [durable = std::move(durable)](Result<RedisReply> r) {
                durable(r.ok() ? Status::Ok() : r.status());
              });
}

void RedisTracks::Get(const std::string& jid, TimePoint now, TrackCallback cb) {
  calls_.Eval(Script::kTrackGet, "track_get", {jid, Us(now)},
              [jid, cb = std::move(cb)](Result<RedisReply> r) {
                if (!r.ok()) return cb(r.status());
                if (!r->is_array() || r->elements().size() != 4)
                  return cb(std::optional<TrackRecord>());
                const auto& e = r->elements();
                TrackRecord t;
                t.jid = jid;
                t.state = e[0].str();
                t.updated_us = std::strtoll(e[1].str().c_str(), nullptr, 10);
                if (!e[2].is_nil())
                  t.percent = static_cast<int>(std::strtol(e[2].str().c_str(), nullptr, 10));
                if (!e[3].is_nil()) t.desc = e[3].str();
                cb(std::optional<TrackRecord>(std::move(t)));
              });
}

void RedisTracks::Expire(TimePoint now, size_t limit, CountCallback cb) {
  calls_.Eval(Script::kTrackExpire, "track_expire", {Us(now), std::to_string(limit)},
              [cb = std::move(cb)](Result<RedisReply> r) {
                if (!r.ok()) return cb(r.status());
                cb(static_cast<size_t>(r->integer()));
              });
}

}  // namespace bulkhead
