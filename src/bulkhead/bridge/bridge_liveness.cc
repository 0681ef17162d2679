#include "bulkhead/bridge/bridge_liveness.h"

#include <spdlog/spdlog.h>

#include "bulkhead/bridge/sidekiq_scripts.h"

namespace bulkhead {

BridgeLiveness::BridgeLiveness(boost::asio::io_context& io, const Clock& clock,
                               RedisClient& commands, LivenessOptions options, Handlers handlers)
    : commands_(commands),
      options_(std::move(options)),
      handlers_(std::move(handlers)),
      heartbeat_timer_(io, clock),
      reap_timer_(io, clock) {}

BridgeLiveness::~BridgeLiveness() {
  heartbeat_timer_.Cancel();
  reap_timer_.Cancel();
}

void BridgeLiveness::Start() {
  ScheduleHeartbeat();
  if (options_.reap_others) ScheduleReap();
  Beat();
}

void BridgeLiveness::Beat() {
  if (stopped_ || beating_ || !commands_.available()) return;
  beating_ = true;
  auto alive = std::weak_ptr<bool>(alive_);
  commands_.Eval(
      SidekiqScripts::Get().heartbeat, {AliveKey(options_.node), NodesKey()},
      {options_.node, options_.token, std::to_string(options_.heartbeat_ttl.count())},
      [this, alive](Result<RedisReply> r) {
        if (!alive.lock()) return;
        beating_ = false;
        if (!r.ok() || !r->is_array() || r->elements().size() != 2) {
          if (r.ok()) spdlog::warn("sidekiq bridge: heartbeat.lua answered {}", r->ToString());
          return;  // a lost connection is the client's to report
        }
        bool held = r->elements()[0].integer() == 1;
        bool had = r->elements()[1].integer() == 1;
        if (held != held_ || !ever_beat_) {
          if (!held) {
            spdlog::error(
                "sidekiq bridge: the node name {} is in use by another process (its key {} "
                "holds another token); waiting for it to go",
                options_.node, AliveKey(options_.node));
          } else if (ever_beat_) {
            spdlog::info("sidekiq bridge: the node name {} is this process's again", options_.node);
          }
          held_ = held;
          if (handlers_.on_name) handlers_.on_name(held);
        } else if (held && !had) {
          spdlog::warn("sidekiq bridge: node {}'s alive key had lapsed; reading its list again",
                       options_.node);
          if (handlers_.on_lapsed) handlers_.on_lapsed();
        }
        ever_beat_ = true;
      });
}

void BridgeLiveness::ScheduleHeartbeat() {
  heartbeat_timer_.ExpiresAfter(options_.heartbeat_every);
  auto alive = std::weak_ptr<bool>(alive_);
  heartbeat_timer_.AsyncWait([this, alive](boost::system::error_code ec) {
    if (ec || !alive.lock() || stopped_) return;
    Beat();
    ScheduleHeartbeat();
  });
}

void BridgeLiveness::ScheduleReap() {
  reap_timer_.ExpiresAfter(options_.reap_every);
  auto alive = std::weak_ptr<bool>(alive_);
  reap_timer_.AsyncWait([this, alive](boost::system::error_code ec) {
    if (ec || !alive.lock() || stopped_) return;
    Reap();
    ScheduleReap();
  });
}

void BridgeLiveness::Reap() {
  if (reaping_ || !held_ || !commands_.available()) return;
  reaping_ = true;
  auto alive = std::weak_ptr<bool>(alive_);
  commands_.Eval(SidekiqScripts::Get().reap, {TakingKey(options_.node), NodesKey()},
                 {kBridgeKeyPrefix, options_.node}, [this, alive](Result<RedisReply> r) {
                   if (!alive.lock()) return;
                   reaping_ = false;
                   if (!r.ok()) {
                     if (handlers_.on_reap_lost) handlers_.on_reap_lost();
                     return;
                   }
                   if (!r->is_array() || r->elements().size() != 2) {
                     spdlog::warn("sidekiq bridge: reap.lua answered {}", r->ToString());
                     return;
                   }
                   std::vector<std::string> reaped, jobs;
                   for (const RedisReply& e : r->elements()[0].elements())
                     reaped.push_back(e.str());
                   for (const RedisReply& e : r->elements()[1].elements()) jobs.push_back(e.str());
                   if (reaped.empty()) return;
                   for (const std::string& node : reaped) {
                     spdlog::warn("sidekiq bridge: node {} is gone; taking back its list", node);
                   }
                   if (handlers_.on_reaped) handlers_.on_reaped(std::move(jobs), std::move(reaped));
                 });
}

void BridgeLiveness::Stop(std::function<void()> done) {
  stopped_ = true;
  heartbeat_timer_.Cancel();
  reap_timer_.Cancel();
  if (!held_ || !commands_.available()) {
    if (done) done();
    return;
  }
  commands_.Eval(SidekiqScripts::Get().stop,
                 {AliveKey(options_.node), NodesKey(), TakingKey(options_.node)},
                 {options_.node, options_.token}, [done = std::move(done)](Result<RedisReply>) {
                   if (done) done();
                 });
}

}  // namespace bulkhead
