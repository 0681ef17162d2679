#include "bulkhead/client/stats_command.h"

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "bulkhead/view/stats_text.h"

namespace bulkhead {

StatsCommand::StatsCommand(CLI::App& app) {
  command_ = app.add_subcommand("stats", "Queues, sets, workers and hosts at a glance.");
  connect_.AddTo(*command_);
}

bool StatsCommand::selected() const { return command_->parsed(); }

Status StatsCommand::Run(std::ostream& out) {
  auto client = connect_.Connect();
  if (!client.ok()) return client.status();
  auto text = (*client)->Info();
  if (!text.ok()) return text.status();
  auto stats = StatsTextFromInfo(*text, [&](const std::vector<std::string>& queues) {
    return (*client)->QueueLatency(queues);
  });
  if (!stats.ok()) return stats.status();
  out << *stats;
  (*client)->End();
  return Status::Ok();
}

}  // namespace bulkhead
