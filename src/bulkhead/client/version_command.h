// VersionCommand: `bulkhead version`, printing the version and the protocol it speaks.
//
// Thread-compatible; used once per process by main().
#pragma once

#include <ostream>

#include "bulkhead/util/status.h"

namespace CLI {
class App;
}

namespace bulkhead {

class VersionCommand {
 public:
  // Registers `version` on `app`.
  explicit VersionCommand(CLI::App& app);
  VersionCommand(const VersionCommand&) = delete;
  VersionCommand& operator=(const VersionCommand&) = delete;

  // True when the parsed command line chose `version`.
  bool selected() const;
  // Writes "bulkhead VERSION (Faktory protocol v2, compatible with 1.10)" to `out`.
  Status Run(std::ostream& out);

 private:
  CLI::App* command_ = nullptr;
};

}  // namespace bulkhead
