// ServeCommand: `bulkhead serve`, running the server. Its settings come from the TOML file given
// with --config, then the flags generated from the settings table (config/setting_flags.h), then
// BULKHEAD_PASSWORD; `serve --help` lists the flags and every file setting with its default.
// --salvage-damaged-jobs is a one-off recovery step, not a setting (no file key); --testing-clock
// (tests only, no file key either) runs the server on a clock POST /api/testing/clock moves
// (server/testing_clock_api.h).
//
// Thread-compatible; used once per process by main().
#pragma once

#include <memory>
#include <string>

#include "bulkhead/config/config.h"
#include "bulkhead/config/setting_flags.h"
#include "bulkhead/util/status.h"

namespace CLI {
class App;
}

namespace bulkhead {

class ServeCommand {
 public:
  // Registers `serve` on `app`.
  explicit ServeCommand(CLI::App& app);
  ServeCommand(const ServeCommand&) = delete;
  ServeCommand& operator=(const ServeCommand&) = delete;

  // True when the parsed command line chose `serve`.
  bool selected() const;
  // Serves until SIGINT/SIGTERM. Errors: a bad config file or flag, or a server that cannot
  // start (the Status names what).
  Status Run();

 private:
  // The Config the parsed command line asks for: the file, then the flags, then
  // BULKHEAD_PASSWORD. Not yet validated (Server::Start does that).
  Result<Config> BuildConfig() const;

  CLI::App* command_ = nullptr;
  std::string config_file_;
  bool salvage_damaged_jobs_ = false;
  bool testing_clock_ = false;
  std::unique_ptr<SettingFlags> flags_;
};

}  // namespace bulkhead
