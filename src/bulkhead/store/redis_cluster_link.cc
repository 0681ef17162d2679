#include "bulkhead/store/redis_cluster_link.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace bulkhead {

void RedisClusterLink::PublishWorkerSignal(const std::string& wid, const std::string& state) {
  calls_.Command(
      "publish_worker_signal",
      {"PUBLISH", calls_.key_prefix() + "signals", calls_.node() + " " + state + " " + wid},
      [](Result<RedisReply>) {});
}

void RedisClusterLink::SetRosterSource(RosterSource source) {
  roster_source_ = std::move(source);
  if (roster_source_ && roster_source_set_) roster_source_set_();
}

void RedisClusterLink::ListOtherRosters(RostersCallback cb) {
  calls_.Eval(Script::kListRosters, "list_rosters", {calls_.node()},
              [cb = std::move(cb)](Result<RedisReply> r) {
                if (!r.ok()) return cb(r.status());
                std::vector<NodeRoster> out;
                const auto& e = r->elements();
                for (size_t i = 0; i + 1 < e.size(); i += 2) {
                  out.push_back({e[i].str(), e[i + 1].str()});
                }
                cb(std::move(out));
              });
}

void RedisClusterLink::TryLease(const std::string& name, Duration ttl,
                                std::function<void(Result<bool>)> cb) {
  int64_t ms =
      std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(ttl).count());
  calls_.Eval(Script::kLease, "lease", {name, calls_.node(), std::to_string(ms), "take"},
              [cb = std::move(cb)](Result<RedisReply> r) {
                if (!r.ok()) return cb(r.status());
                cb(r->integer() == 1);
              });
}

void RedisClusterLink::ReleaseLease(const std::string& name) {
  calls_.Eval(Script::kLease, "lease", {name, calls_.node(), "1", "release"},
              [](Result<RedisReply>) {});
}

void RedisClusterLink::NoteLiveNodes(size_t live) {
  if (live == live_nodes_) return;
  spdlog::info("redis store: {} live nodes share the namespace (was {})", live, live_nodes_);
  live_nodes_ = live;
  if (node_count_handler_) node_count_handler_(live);
}

void RedisClusterLink::OnMessage(const std::string& channel, const std::string& message) {
  if (channel == calls_.key_prefix() + "hosts") {
    OnHostsMessage(message);
  } else if (channel == calls_.key_prefix() + "signals") {
    OnSignalsMessage(message);
  } else {
    OnWakeMessage(message);
  }
}

bool RedisClusterLink::FromHere(const std::string& message, size_t node_end) const {
  return std::string_view(message).substr(0, node_end) == calls_.node();
}

void RedisClusterLink::OnWakeMessage(const std::string& message) {
  // "NODE N QUEUE": the queue is the rest after the second space (it may hold spaces).
  size_t a = message.find(' ');
  if (a == std::string::npos) return;
  size_t b = message.find(' ', a + 1);
  if (b == std::string::npos) return;
  if (FromHere(message, a)) return;
  size_t count = std::strtoull(message.c_str() + a + 1, nullptr, 10);
  if (wake_handler_ && count > 0) wake_handler_(message.substr(b + 1), count);
}

void RedisClusterLink::OnHostsMessage(const std::string& message) {
  // "NODE HOST".
  size_t a = message.find(' ');
  if (a == std::string::npos || FromHere(message, a)) return;
  if (host_state_handler_) host_state_handler_(message.substr(a + 1));
}

void RedisClusterLink::OnSignalsMessage(const std::string& message) {
  // "NODE STATE WID" (WID empty: every worker).
  size_t a = message.find(' ');
  if (a == std::string::npos || FromHere(message, a)) return;
  size_t b = message.find(' ', a + 1);
  if (b == std::string::npos) return;
  if (worker_signal_handler_) {
    worker_signal_handler_(message.substr(b + 1), message.substr(a + 1, b - a - 1));
  }
}

}  // namespace bulkhead
