// RedisScripts: the Redis store's server-side scripts (redis_scripts/*.lua, embedded at build
// time), each with the shared prelude prepended: the exact text to load into Redis. Every script
// takes KEYS[1] = "{NS}:jobs" and ARGV[1] = "{NS}:"; each file's first lines say the rest.
#pragma once

#include <string>

namespace bulkhead {

struct RedisScripts {
  std::string push, fetch, ack, get_working, extend, move, fail_reserved, remove, enqueue_due,
      range, purge_dead, mutate, clear, set_paused, remove_queues, count_outcome, flush, stats,
      heartbeat, reap, lease,
      // Queue throttling.
      fetch_throttled, throttle_uses;
  // Unique jobs and cron.
  std::string push_unique, release_unique, claim_cron;
  // Batches: batch_lib.lua is prepended (after the prelude) to these and to ack and
  // fail_reserved.
  std::string batch_new, batch_commit, push_member, batch_expire;
  // Tracking: track_lib.lua is prepended (after the prelude) to these and to fetch, ack
  // and fail_reserved.
  std::string track_set, track_pushed, track_get, track_expire;
  // Job lookup by jid and reservation holders.
  std::string find_job, set_holder, list_held;
  std::string list_rosters;  // the other nodes' worker rosters
};

// Built once; never changes. Any thread.
const RedisScripts& StoreRedisScripts();

}  // namespace bulkhead
