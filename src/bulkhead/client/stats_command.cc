#include "bulkhead/client/stats_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bulkhead {

StatsCommand::StatsCommand(CLI::App& app) {
  command_ = app.add_subcommand("stats", "Queues, sets, workers and hosts at a glance.");
  connect_.AddTo(*command_);
}

bool StatsCommand::selected() const { return command_->parsed(); }

Status StatsCommand::Run() {
  auto client = connect_.Connect();
  if (!client.ok()) return client.status();
  auto text = (*client)->Info();
  if (!text.ok()) return text.status();
  auto info = nlohmann::json::parse(*text, nullptr, false);
  if (!info.is_object()) return Status::Internal("INFO reply is not a JSON object");
  const auto& fk = info["faktory"];
  std::vector<std::string> names;
  for (const auto& [name, size] : fk["queues"].items()) names.push_back(name);
  auto latency =
      names.empty() ? Result<std::string>(std::string("{}")) : (*client)->QueueLatency(names);
  auto lat = nlohmann::json::parse(latency.ok() ? *latency : "{}", nullptr, false);
  std::printf("bulkhead %s  store=%s  uptime=%llds  connections=%lld  workers=%lld\n",
              info["server"].value("bulkhead_version", "?").c_str(),
              info["server"].value("store", "?").c_str(),
              static_cast<long long>(info["server"].value("uptime", 0)),
              static_cast<long long>(info["server"].value("connections", 0)),
              static_cast<long long>(info["server"].value("workers", 0)));
  std::printf("processed %lld  failed %lld  enqueued %lld\n\n",
              static_cast<long long>(fk.value("total_processed", 0)),
              static_cast<long long>(fk.value("total_failures", 0)),
              static_cast<long long>(fk.value("total_enqueued", 0)));
  std::printf("%-32s %10s %12s\n", "QUEUE", "SIZE", "LATENCY(s)");
  for (const auto& name : names) {
    double l = lat.is_object() ? lat.value(name, 0.0) : 0.0;
    std::printf("%-32s %10lld %12.3f\n", name.c_str(),
                static_cast<long long>(fk["queues"].value(name, 0)), l);
  }
  std::printf("\n%-32s %10s\n", "SET", "SIZE");
  for (const char* set : {"scheduled", "retries", "dead", "working"}) {
    std::printf("%-32s %10lld\n", set, static_cast<long long>(fk["sets"].value(set, 0)));
  }
  if (info.contains("hosts") && info["hosts"].is_array() && !info["hosts"].empty()) {
    std::printf("\n%-32s %8s %5s %-10s %8s %8s\n", "HOST", "INFLIGHT", "CAP", "BREAKER", "PARKED",
                "P99(ms)");
    for (const auto& h : info["hosts"]) {
      std::printf("%-32s %8lld %5lld %-10s %8lld %8.0f\n", h.value("host", "?").c_str(),
                  static_cast<long long>(h.value("in_flight", 0)),
                  static_cast<long long>(h.value("cap", 0)), h.value("breaker", "?").c_str(),
                  static_cast<long long>(h.value("parked", 0)), h.value("latency_p99_ms", 0.0));
    }
  }
  (*client)->End();
  return Status::Ok();
}

}  // namespace bulkhead
