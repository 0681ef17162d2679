#include "bulkhead/store/redis_scripts.h"

#include "bulkhead/store/redis_script_text.h"

namespace bulkhead {

const RedisScripts& StoreRedisScripts() {
  static const RedisScripts scripts = [] {
    namespace t = redis_script_text;
    auto with_prelude = [](std::string_view body) {
      std::string s(t::k_prelude);
      s += '\n';
      s += body;
      return s;
    };
    RedisScripts s;
    s.push = with_prelude(t::k_push);
    s.fetch = with_prelude(t::k_fetch);
    s.ack = with_prelude(t::k_ack);
    s.get_working = with_prelude(t::k_get_working);
    s.extend = with_prelude(t::k_extend);
    s.move = with_prelude(t::k_move);
    s.fail_reserved = with_prelude(t::k_fail_reserved);
    s.remove = with_prelude(t::k_remove);
    s.enqueue_due = with_prelude(t::k_enqueue_due);
    s.range = with_prelude(t::k_range);
    s.purge_dead = with_prelude(t::k_purge_dead);
    s.mutate = with_prelude(t::k_mutate);
    s.clear = with_prelude(t::k_clear);
    s.set_paused = with_prelude(t::k_set_paused);
    s.remove_queues = with_prelude(t::k_remove_queues);
    s.count_outcome = with_prelude(t::k_count_outcome);
    s.flush = with_prelude(t::k_flush);
    s.stats = with_prelude(t::k_stats);
    s.heartbeat = with_prelude(t::k_heartbeat);
    s.lease = with_prelude(t::k_lease);
    s.reap = with_prelude(t::k_reap);
    return s;
  }();
  return scripts;
}

}  // namespace bulkhead
