#include "bulkhead/view/bridge_view.h"

#include <fmt/format.h>

#include "bulkhead/view/json_read.h"

namespace bulkhead {

nlohmann::json BridgeJsonValue(const BridgeSnapshot& b) {
  nlohmann::json queues = nlohmann::json::object();
  for (const SidekiqQueueFigures& q : b.queues) {
    queues[q.name] = {{"size", q.size}, {"latency", q.latency_seconds}};
  }
  return {{"up", b.up},
          {"reason", b.reason},
          {"node", b.node},
          {"redis", b.redis},
          {"outcomes_queue", b.outcomes_queue},
          {"in_progress", b.in_progress},
          {"taken", b.taken},
          {"repeats", b.repeats},
          {"dead", b.dead},
          {"reaped", b.reaped},
          {"outcomes_written", b.outcomes_written},
          {"outcomes_waiting", b.outcomes_waiting},
          {"queues", std::move(queues)}};
}

BridgeSnapshot ParseBridgeJson(const nlohmann::json& doc) {
  using namespace json_read;
  BridgeSnapshot b;
  b.up = Bool(doc, "up");
  b.reason = String(doc, "reason");
  b.node = String(doc, "node");
  b.redis = String(doc, "redis");
  b.outcomes_queue = String(doc, "outcomes_queue");
  b.in_progress = Int(doc, "in_progress");
  b.taken = Int(doc, "taken");
  b.repeats = Int(doc, "repeats");
  b.dead = Int(doc, "dead");
  b.reaped = Int(doc, "reaped");
  b.outcomes_written = Int(doc, "outcomes_written");
  b.outcomes_waiting = Int(doc, "outcomes_waiting");
  if (const nlohmann::json& queues = Member(doc, "queues"); queues.is_object()) {
    for (const auto& [name, q] : queues.items()) {
      b.queues.push_back({name, Int(q, "size"), Double(q, "latency")});
    }
  }
  return b;
}

void AppendBridgeText(std::string& out, const BridgeSnapshot& b) {
  out += fmt::format("\nsidekiq bridge  {}  node={}  redis={}\n", b.up ? "up" : "DOWN: " + b.reason,
                     b.node, b.redis);
  out += fmt::format(
      "taken {}  repeats {}  dead {}  reaped {}  in_progress {}  outcomes written {} "
      "(waiting {}, to queue:{})\n",
      b.taken, b.repeats, b.dead, b.reaped, b.in_progress, b.outcomes_written, b.outcomes_waiting,
      b.outcomes_queue);
  if (b.queues.empty()) return;
  out += fmt::format("{:<32} {:>10} {:>12}\n", "SIDEKIQ QUEUE", "SIZE", "LATENCY(s)");
  for (const SidekiqQueueFigures& q : b.queues) {
    out += fmt::format("{:<32} {:>10} {:>12.3f}\n", q.name, q.size, q.latency_seconds);
  }
}

}  // namespace bulkhead
