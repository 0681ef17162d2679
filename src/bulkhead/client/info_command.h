// InfoCommand: `bulkhead info [--url URL] [--ca FILE]`, printing a running server's INFO document
// as indented JSON.
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

class InfoCommand {
 public:
  // Registers `info` on `app`.
  explicit InfoCommand(CLI::App& app);
  InfoCommand(const InfoCommand&) = delete;
  InfoCommand& operator=(const InfoCommand&) = delete;

  // True when the parsed command line chose `info`.
  bool selected() const;
  // Writes the INFO document to `out`. Errors: the server cannot be reached, refused INFO, or
  // its reply is not JSON (InvalidArgument "INFO reply: invalid JSON: ...").
  Status Run(std::ostream& out);

 private:
  CLI::App* command_ = nullptr;
  ConnectOptions connect_;
};

}  // namespace bulkhead
