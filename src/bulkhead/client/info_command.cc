#include "bulkhead/client/info_command.h"

#include <CLI/CLI.hpp>

#include "bulkhead/util/json.h"

namespace bulkhead {

InfoCommand::InfoCommand(CLI::App& app) {
  command_ = app.add_subcommand("info", "Print the server's INFO document.");
  connect_.AddTo(*command_);
}

bool InfoCommand::selected() const { return command_->parsed(); }

Status InfoCommand::Run(std::ostream& out) {
  auto client = connect_.Connect();
  if (!client.ok()) return client.status();
  auto text = (*client)->Info();
  if (!text.ok()) return text.status();
  auto doc = ParseJson(*text, kDefaultMaxJsonDepth);
  if (!doc.ok()) return Status::InvalidArgument("INFO reply: " + doc.status().message());
  out << doc->dump(2) << "\n";
  (*client)->End();
  return Status::Ok();
}

}  // namespace bulkhead
