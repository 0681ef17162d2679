// RestoreCommand: `bulkhead restore PATH`, a backup (`bulkhead backup`) put in place of the
// configured SQLite store, with the server stopped (store/sqlite_restore.h).
//
//   bulkhead restore PATH [--config FILE | --data-dir DIR] [--store URL]
//
// The store is the one `serve` would open with the same options. Refused while a server holds
// the store (naming its process), for a store that is not sqlite:, and for a backup that fails
// its checks (integrity, schema version); nothing is changed then. Prints the schema version, the
// jobs by state, the signing keys and host states restored, and where the replaced store was kept.
//
// Thread-compatible; used once per process by main().
#pragma once

#include <ostream>
#include <string>

#include "bulkhead/util/status.h"

namespace CLI {
class App;
}

namespace bulkhead {

class RestoreCommand {
 public:
  // Registers `restore` on `app`.
  explicit RestoreCommand(CLI::App& app);
  RestoreCommand(const RestoreCommand&) = delete;
  RestoreCommand& operator=(const RestoreCommand&) = delete;

  bool selected() const;
  Status Run(std::ostream& out);

 private:
  CLI::App* command_ = nullptr;
  std::string path_;
  std::string config_file_;
  std::string data_dir_;
  std::string store_;
};

}  // namespace bulkhead
