// StatsCommand: `bulkhead stats [--url URL] [--ca FILE]`, a running server's queues (with their
// latency), sets, workers and hosts at a glance.
//
// Thread-compatible; used once per process by main().
#pragma once

#include <ostream>

#include "bulkhead/client/connect_options.h"
#include "bulkhead/util/status.h"

namespace CLI {
class App;
}

namespace bulkhead {

class StatsCommand {
 public:
  // Registers `stats` on `app`.
  explicit StatsCommand(CLI::App& app);
  StatsCommand(const StatsCommand&) = delete;
  StatsCommand& operator=(const StatsCommand&) = delete;

  // True when the parsed command line chose `stats`.
  bool selected() const;
  // Writes the overview to `out`. Errors: the server cannot be reached, refused INFO, or its
  // INFO is not a JSON object.
  Status Run(std::ostream& out);

 private:
  CLI::App* command_ = nullptr;
  ConnectOptions connect_;
};

}  // namespace bulkhead
