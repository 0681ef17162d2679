// VapidKeyCommand: the server's Web Push (VAPID) key from the command line.
//
//   bulkhead vapid-key [--mastodon] [--config FILE | --data-dir DIR]
//     prints the public key browsers subscribe with (base64url; with --mastodon as Mastodon's
//     VAPID_PUBLIC_KEY=… line, to compare with the application's), the key the server would use
//     (dispatch/vapid_key_source.h: VAPID_PRIVATE_KEY in the environment, else the key file, which
//     is created (mode 0600) when absent, and that is said on stderr);
//   bulkhead vapid-key import [--env-file FILE] [--force] [--config FILE | --data-dir DIR]
//     writes the key pair of Mastodon's VAPID_PRIVATE_KEY / VAPID_PUBLIC_KEY (read from the
//     environment, or from an env file such as Mastodon's .env.production) into the key file, as
//     PKCS#8 PEM (mode 0600, atomically), and prints its public key. A key file holding another key
//     is replaced only with --force (subscriptions made for that key would stop working); a key
//     file that is not PEM (e.g. vapid_private_key_file names the env file itself) never is.
// The private key is never printed or passed on the command line.
//
// Thread-compatible; used once per process by main().
#pragma once

#include <ostream>
#include <string>

#include "bulkhead/dispatch/vapid_key_source.h"
#include "bulkhead/util/status.h"

namespace CLI {
class App;
}

namespace bulkhead {

class VapidKeyCommand {
 public:
  // Registers `vapid-key` (and `vapid-key import`) on `app`.
  explicit VapidKeyCommand(CLI::App& app);
  VapidKeyCommand(const VapidKeyCommand&) = delete;
  VapidKeyCommand& operator=(const VapidKeyCommand&) = delete;

  // True when the parsed command line chose `vapid-key` (with or without `import`).
  bool selected() const;
  // Runs the chosen form, `environment` being the process's VAPID variables
  // (VapidKeyVariablesFromEnvironment() in main). Writes the public key to `out`, notes to `err`.
  // Errors: a bad config file, bad or missing variables, a key file that cannot be read, created
  // or (import) replaced.
  Status Run(std::ostream& out, std::ostream& err, const VapidKeyVariables& environment);

 private:
  Status Print(const Config& config, std::ostream& out, std::ostream& err,
               const VapidKeyVariables& environment);
  Status Import(const Config& config, std::ostream& out, std::ostream& err,
                const VapidKeyVariables& environment);

  CLI::App* command_ = nullptr;
  CLI::App* import_ = nullptr;
  std::string config_file_;
  std::string data_dir_;
  bool mastodon_form_ = false;
  std::string env_file_;
  bool force_ = false;
};

}  // namespace bulkhead
