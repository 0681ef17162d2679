#include "bulkhead/client/vapid_key_command.h"

#include <CLI/CLI.hpp>

#include "bulkhead/config/config.h"
#include "bulkhead/dispatch/vapid_key_file.h"

namespace bulkhead {

VapidKeyCommand::VapidKeyCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "vapid-key", "Print the VAPID public key (base64url), generating the key if absent.");
  auto* config =
      command_->add_option("--config", config_file_, "TOML config file")->check(CLI::ExistingFile);
  command_->add_option("--data-dir", data_dir_, "data directory (default ./data)")
      ->excludes(config);
}

bool VapidKeyCommand::selected() const { return command_->parsed(); }

Status VapidKeyCommand::Run(std::ostream& out, std::ostream& err) {
  auto loaded = LoadConfigOrDefaults(config_file_);
  if (!loaded.ok()) return loaded.status();
  Config config = std::move(*loaded);
  if (!data_dir_.empty()) config.data_dir = data_dir_;
  std::string path = VapidKeyPath(config);
  bool created = false;
  auto key = LoadOrCreateVapidKey(path, &created);
  if (!key.ok()) return key.status();
  if (created) err << "bulkhead: generated " << path << "\n";
  out << key->public_key_b64url() << "\n";
  return Status::Ok();
}

}  // namespace bulkhead
