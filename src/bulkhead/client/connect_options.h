// ConnectOptions: the --url and --ca options shared by the commands that speak the Faktory
// protocol to a running server (push, info, stats), and the connection they make.
//
// Thread-compatible value type; CLI11 writes into it while parsing, so it must outlive the app's
// parse.
#pragma once

#include <memory>
#include <string>

#include "bulkhead/client/faktory_client.h"
#include "bulkhead/util/status.h"

namespace CLI {
class App;
}

namespace bulkhead {

struct ConnectOptions {
  std::string url;      // empty: $FAKTORY_URL, else tcp://127.0.0.1:7419
  std::string ca_file;  // empty: the system's CAs (tcp+tls:// only)

  // Adds --url and --ca to `command`.
  void AddTo(CLI::App& command);
  // Connects to the server the options name. Errors name a bad URL or an unreachable server.
  Result<std::unique_ptr<FaktoryClient>> Connect() const;
};

}  // namespace bulkhead
