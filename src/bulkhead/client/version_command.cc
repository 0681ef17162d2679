#include "bulkhead/client/version_command.h"

#include <CLI/CLI.hpp>

namespace bulkhead {

VersionCommand::VersionCommand(CLI::App& app) {
  command_ = app.add_subcommand("version", "Print the version.");
}

bool VersionCommand::selected() const { return command_->parsed(); }

Status VersionCommand::Run(std::ostream& out) {
  out << "bulkhead " << BULKHEAD_VERSION << " (Faktory protocol v2, compatible with 1.10)\n";
  return Status::Ok();
}

}  // namespace bulkhead
