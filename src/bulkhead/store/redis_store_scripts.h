// RedisStore::Scripts (internal to redis_store*.cc): the store's scripts as RedisScripts (SHA1
// computed once per store).
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bulkhead/redis/redis_script.h"
#include "bulkhead/store/redis_scripts.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {

// Numbers cross into the scripts as decimal strings (redis_scripts/README.md): a count, or a time
// as µs since the epoch.
inline std::string Us(int64_t v) { return std::to_string(v); }
inline std::string Us(TimePoint t) { return std::to_string(ToUnixMicros(t)); }
// A sorted-set score as a script answers it (a bulk string such as "1700000060000000", or an
// integer), as µs.
inline int64_t ScoreMicros(const RedisReply& r) {
  if (r.is_integer()) return r.integer();
  return static_cast<int64_t>(std::llround(std::strtod(r.str().c_str(), nullptr)));
}

struct RedisStore::Scripts {
  const RedisScripts& text = StoreRedisScripts();
  RedisScript push{text.push}, fetch{text.fetch}, ack{text.ack}, get_working{text.get_working},
      extend{text.extend}, move{text.move}, fail_reserved{text.fail_reserved}, remove{text.remove},
      enqueue_due{text.enqueue_due}, range{text.range}, purge_dead{text.purge_dead},
      mutate{text.mutate}, clear{text.clear}, set_paused{text.set_paused},
      remove_queues{text.remove_queues}, count_outcome{text.count_outcome}, flush{text.flush},
      stats{text.stats}, heartbeat{text.heartbeat}, reap{text.reap}, lease{text.lease},
      // Queue throttling.
      fetch_throttled{text.fetch_throttled}, throttle_uses{text.throttle_uses};
  // Unique jobs and cron.
  RedisScript push_unique{text.push_unique}, release_unique{text.release_unique},
      claim_cron{text.claim_cron};
  // Batches.
  RedisScript batch_new{text.batch_new}, batch_commit{text.batch_commit},
      push_member{text.push_member}, batch_expire{text.batch_expire};
  // Tracking.
  RedisScript track_set{text.track_set}, track_pushed{text.track_pushed}, track_get{text.track_get},
      track_expire{text.track_expire};
  // Job lookup by jid and reservation holders.
  RedisScript find_job{text.find_job}, set_holder{text.set_holder}, list_held{text.list_held};
  // The other nodes' worker rosters.
  RedisScript list_rosters{text.list_rosters};

  std::vector<const RedisScript*> All() const {
    return {&push,          &fetch,        &ack,
            &get_working,   &extend,       &move,
            &fail_reserved, &remove,       &enqueue_due,
            &range,         &purge_dead,   &mutate,
            &clear,         &set_paused,   &remove_queues,
            &count_outcome, &flush,        &stats,
            &heartbeat,     &reap,         &fetch_throttled,
            &throttle_uses, &push_unique,  &release_unique,
            &claim_cron,    &batch_new,    &batch_commit,
            &push_member,   &batch_expire, &track_set,
            &track_pushed,  &track_get,    &track_expire,
            &lease,         &find_job,     &set_holder,
            &list_held,     &list_rosters};
  }
};

}  // namespace bulkhead
