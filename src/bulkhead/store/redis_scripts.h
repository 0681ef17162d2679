// RedisScripts: the Redis store's server-side scripts (redis_scripts/*.lua, embedded at build
// time), each with the shared prelude prepended: the exact text to load into Redis. Every script
// takes KEYS[1] = "{NS}:jobs" and ARGV[1] = "{NS}:"; each file's first lines say the rest.
#pragma once

#include <string>

namespace bulkhead {

struct RedisScripts {
  std::string push, fetch, ack, get_working, extend, move, fail_reserved, remove, enqueue_due,
      range, purge_dead, mutate, clear, set_paused, remove_queues, count_outcome, flush, stats,
      heartbeat, reap, lease;
};

// Built once; never changes. Any thread.
const RedisScripts& StoreRedisScripts();

}  // namespace bulkhead
