// VapidKeyCommand: `bulkhead vapid-key [--config FILE | --data-dir DIR]`, printing the Web Push
// (VAPID) public key (base64url) that browsers subscribe with; the private key file is created
// (mode 0600) when absent, and that is said on stderr.
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

class VapidKeyCommand {
 public:
  // Registers `vapid-key` on `app`.
  explicit VapidKeyCommand(CLI::App& app);
  VapidKeyCommand(const VapidKeyCommand&) = delete;
  VapidKeyCommand& operator=(const VapidKeyCommand&) = delete;

  // True when the parsed command line chose `vapid-key`.
  bool selected() const;
  // Writes the public key to `out` (and "bulkhead: generated PATH" to `err` when the key was
  // created). Errors: a bad config file, or a key file that cannot be read or created.
  Status Run(std::ostream& out, std::ostream& err);

 private:
  CLI::App* command_ = nullptr;
  std::string config_file_;
  std::string data_dir_;
};

}  // namespace bulkhead
