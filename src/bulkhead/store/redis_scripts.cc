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
    s.fetch = with_prelude(std::string(t::k_track_lib) + '\n' + std::string(t::k_fetch));
    // Every script with the batch or tracking library gets both (they are small).
    auto with_batches = [&](std::string_view body) {
      std::string s(t::k_batch_lib);
      s += '\n';
      s += t::k_track_lib;
      s += '\n';
      s += body;
      return with_prelude(s);
    };
    s.ack = with_batches(t::k_ack);
    s.get_working = with_prelude(t::k_get_working);
    s.extend = with_prelude(t::k_extend);
    s.move = with_prelude(t::k_move);
    s.fail_reserved = with_batches(t::k_fail_reserved);
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
    s.fetch_throttled =
        with_prelude(std::string(t::k_track_lib) + '\n' + std::string(t::k_fetch_throttled));
    s.throttle_uses = with_prelude(t::k_throttle_uses);
    s.push_unique = with_prelude(t::k_push_unique);
    s.release_unique = with_prelude(t::k_release_unique);
    s.claim_cron = with_prelude(t::k_claim_cron);
    s.batch_new = with_batches(t::k_batch_new);
    s.batch_commit = with_batches(t::k_batch_commit);
    s.push_member = with_batches(t::k_push_member);
    s.batch_expire = with_batches(t::k_batch_expire);
    s.track_set = with_batches(t::k_track_set);
    s.track_pushed = with_batches(t::k_track_pushed);
    s.track_get = with_batches(t::k_track_get);
    s.track_expire = with_batches(t::k_track_expire);
    s.find_job = with_prelude(t::k_find_job);  // job lookup by jid and reservation holders
    s.set_holder = with_prelude(t::k_set_holder);
    s.list_held = with_prelude(t::k_list_held);
    s.list_rosters = with_prelude(t::k_list_rosters);
    return s;
  }();
  return scripts;
}

}  // namespace bulkhead
