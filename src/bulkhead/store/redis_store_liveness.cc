// RedisStore's node liveness: the heartbeat ({NS}:alive:NODE with a TTL), the reaper that gives
// back the reservations of nodes whose heartbeat stopped, and the give-back of a graceful stop
// (redis_scripts/README.md, "Node liveness"), and the worker rosters the heartbeat carries.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/redis_store_scripts.h"
#include "bulkhead/util/clock.h"

namespace bulkhead {
namespace {

std::string NowUs() { return std::to_string(ToUnixMicros(std::chrono::system_clock::now())); }

}  // namespace

void RedisStore::StartLiveness() {
  ScheduleHeartbeat();
  ScheduleReap();
}

void RedisStore::ScheduleHeartbeat() {
  if (closed_ || stopping_) return;
  heartbeat_timer_->expires_after(options_.heartbeat_every);
  heartbeat_timer_->async_wait(
      [this, alive = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
        if (ec || alive.expired() || closed_ || stopping_) return;
        if (!heartbeats_paused_) Heartbeat();
        ScheduleHeartbeat();
      });
}

void RedisStore::Heartbeat() {
  if (heartbeat_in_flight_ || closed_ || stopping_) return;
  heartbeat_in_flight_ = true;
  std::vector<std::string> args{options_.node_id, std::to_string(options_.heartbeat_ttl.count())};
  if (const auto& roster = cluster_.roster_source()) args.push_back(roster());
  // Never held behind a Mutate: a long one must not let the alive key expire.
  SendEval(Script::kHeartbeat, "heartbeat", std::move(args),
           [this, alive = std::weak_ptr<bool>(alive_)](Result<RedisReply> r) {
             if (alive.expired()) return;
             heartbeat_in_flight_ = false;
             if (r.ok()) {
               const int64_t had = NoteHeartbeat(*r);
               if (had == 0 && !heartbeat_lapsed_) {
                 spdlog::warn(
                     "redis store: node {} was silent longer than its heartbeat TTL ({} ms); "
                     "other nodes may have given back its reservations (their ACK/FAIL here "
                     "now answer as unknown); carrying on",
                     options_.node_id, options_.heartbeat_ttl.count());
               }
               heartbeat_lapsed_ = had == 0;
             }
           });
}

int64_t RedisStore::NoteHeartbeat(const RedisReply& reply) {
  const auto& e = reply.elements();
  if (e.size() != 2) return reply.integer();
  cluster_.NoteLiveNodes(static_cast<size_t>(std::max<int64_t>(1, e[1].integer())));
  return e[0].integer();
}

void RedisStore::ScheduleReap() {
  if (closed_ || stopping_) return;
  reap_timer_->expires_after(options_.reap_every);
  reap_timer_->async_wait(
      [this, alive = std::weak_ptr<bool>(alive_)](boost::system::error_code ec) {
        if (ec || alive.expired() || closed_ || stopping_) return;
        if (!reap_in_flight_) {
          reap_in_flight_ = true;
          ReapDeadNodes([this, alive](Result<size_t> r) {
            if (alive.expired()) return;
            reap_in_flight_ = false;
            // A lost connection is logged by the reconnect; other failures here.
            if (!r.ok() && r.status().code() != StatusCode::kUnavailable) {
              spdlog::error("redis store: the liveness reaper failed: {}", r.status().message());
            }
          });
        }
        ScheduleReap();
      });
}

void RedisStore::ReapDeadNodes(CountCallback done) {
  SendEval(Script::kReap, "reap", {options_.node_id, NowUs(), "others"},
           [this, alive = std::weak_ptr<bool>(alive_), done](Result<RedisReply> r) {
             if (!r.ok()) return done(r.status());
             size_t total = 0;
             const auto& e = r->elements();
             for (size_t i = 0; i + 1 < e.size(); i += 2) {
               int64_t n = e[i + 1].integer();
               spdlog::warn("node {} stopped heartbeating: {} reservations given back", e[i].str(),
                            n);
               total += static_cast<size_t>(n);
             }
             if (!alive.expired()) {
               ++reaper_passes_;
               reservations_given_back_ += static_cast<int64_t>(total);
             }
             done(total);
           });
}

void RedisStore::HandOverAtStop() {
  // The commands already sent (and those held behind a Mutate) are this node's own work: the
  // alive key goes only after they are answered.
  Status s = RunUntilDone(
      [this] {
        return !commands_->available() ||
               (!exclusive_ && held_.empty() && commands_->pending() == 0);
      },
      "answer its last commands at stop");
  if (!s.ok() || !commands_->available()) {
    spdlog::warn(
        "redis store: node {} stops without handing its reservations over ({}); the other "
        "nodes give them back once its alive key expires",
        options_.node_id, s.ok() ? "the connection is gone" : s.message());
    return;
  }
  // Shared: after a timeout the answer (Unavailable, once the connection closes) comes later.
  auto reply = std::make_shared<std::optional<Result<RedisReply>>>();
  std::vector<std::string> args{options_.node_id, NowUs(), "stop"};
  args.insert(args.end(), options_.give_back_at_stop.begin(), options_.give_back_at_stop.end());
  SendEval(Script::kReap, "stop", std::move(args),
           [reply](Result<RedisReply> r) { *reply = std::move(r); });
  s = RunUntilDone([&] { return reply->has_value(); }, "hand its reservations over at stop");
  if (!s.ok() || !(*reply)->ok()) {
    spdlog::warn(
        "redis store: node {} could not hand its reservations over at stop ({}); the "
        "other nodes give them back once its alive key expires",
        options_.node_id, s.ok() ? (*reply)->status().message() : s.message());
    return;
  }
  const auto& e = (**reply)->elements();
  int64_t given = e.size() == 3 ? e[1].integer() : 0;
  int64_t kept = e.size() == 3 ? e[2].integer() : 0;
  if (given > 0 || kept > 0) {
    spdlog::info(
        "redis store: node {} stopped: {} reservations given back, {} stay until acknowledged, "
        "failed or expired",
        options_.node_id, given, kept);
  }
}

void RedisStore::OnRosterSourceSet() {
  if (opened_ && commands_->available()) Heartbeat();
}

}  // namespace bulkhead
