#include "bulkhead/client/restore_command.h"

#include <CLI/CLI.hpp>

#include "bulkhead/config/config.h"
#include "bulkhead/store/sqlite_restore.h"
#include "bulkhead/util/store_url.h"

namespace bulkhead {

RestoreCommand::RestoreCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "restore", "Replace the configured SQLite store with a backup (the server must be stopped).");
  command_->add_option("path", path_, "the backup file (from `bulkhead backup`)")->required();
  auto* config =
      command_->add_option("--config", config_file_, "TOML config file")->check(CLI::ExistingFile);
  command_->add_option("--data-dir", data_dir_, "data directory (default ./data)")
      ->excludes(config);
  command_->add_option("--store", store_, "store URL, as for serve (sqlite:PATH)");
  command_->footer("The replaced store is kept as STORE.before-restore (with its side files).");
}

bool RestoreCommand::selected() const { return command_->parsed(); }

Status RestoreCommand::Run(std::ostream& out) {
  auto loaded = LoadConfigOrDefaults(config_file_);
  if (!loaded.ok()) return loaded.status();
  Config config = std::move(*loaded);
  if (!data_dir_.empty()) config.data_dir = data_dir_;
  if (!store_.empty()) config.store = store_;
  std::string url = config.StoreUrl();
  std::optional<std::string> store_path = SqliteStorePath(url);
  if (!store_path) {
    return Status::InvalidArgument(
        "restore replaces a sqlite: store, and the configured store is " +
        url.substr(0, url.find(':') + 1) +
        (IsRedisStoreUrl(url) ? " (restore Redis from its own RDB or AOF files)"
                              : " (nothing on disk to restore into)"));
  }
  if (store_path->empty()) return Status::InvalidArgument("store URL " + url + " has no file path");
  Result<RestoreReport> r = RestoreSqliteStore(path_, *store_path);
  if (!r.ok()) return r.status();
  out << "restored " << path_ << " into " << *store_path << " (" << r->bytes
      << " bytes, schema version " << r->schema_version << ")\n";
  int64_t total = 0;
  for (const auto& [state, count] : r->jobs) total += count;
  out << "jobs: " << total;
  for (const auto& [state, count] : r->jobs) out << ", " << state << " " << count;
  out << "\nsigning keys: " << r->signing_keys << ", host states: " << r->host_states << "\n";
  if (!r->kept.empty()) out << "the replaced store is kept as " << r->kept << "\n";
  return Status::Ok();
}

}  // namespace bulkhead
