// BackupCommand: `bulkhead backup PATH`, a consistent copy of a running server's SQLite store,
// written by the server while it keeps serving (server/backup_api.h, store/sqlite_backup.h).
//
//   bulkhead backup PATH [--http HOST:PORT | --http https://HOST:PORT --ca FILE]
//
// PATH is resolved against the current directory and sent to the server, which writes the file
// (mode 0600: the store holds signing keys) on its own machine: run it where the server runs.
// Progress goes to `err` while the copy runs; the result (size, pages, time) to `out`. The
// password, when the server has one, comes from BULKHEAD_PASSWORD. Refused with the server's
// message on a memory: or Redis store, and for a bad PATH.
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

class BackupCommand {
 public:
  // Registers `backup` on `app`.
  explicit BackupCommand(CLI::App& app);
  BackupCommand(const BackupCommand&) = delete;
  BackupCommand& operator=(const BackupCommand&) = delete;

  bool selected() const;
  // Starts the backup and follows it to its end. Errors: an unreachable server, a refused
  // password, the server's refusal (bad path, store without backups, one already running), or the
  // backup's own failure.
  Status Run(std::ostream& out, std::ostream& err);

 private:
  CLI::App* command_ = nullptr;
  std::string path_;
  std::string http_ = "127.0.0.1:7420";
  std::string ca_file_;
};

}  // namespace bulkhead
