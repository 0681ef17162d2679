// The server's VAPID key and where it comes from. Web Push subscriptions are made for one public
// key (the applicationServerKey the browser subscribed with), so bulkhead must sign with the key
// pair the application's subscriptions were made for, and every node with the same one.
//
// In order of precedence (docs/operations.md, "The VAPID key"):
//   1. VAPID_PRIVATE_KEY (and VAPID_PUBLIC_KEY, checked against it) in bulkhead's environment:
//      Mastodon's variables in Mastodon's form (VapidKey::FromBase64Url), so bulkhead can run with
//      Mastodon's .env.production. The file below is then neither read nor created — as
//      BULKHEAD_PASSWORD wins over the `password` setting.
//   2. The file `vapid_private_key_file` (default <data_dir>/vapid.pem): a PEM private key, or
//      Mastodon's two lines (VAPID_PRIVATE_KEY=… and VAPID_PUBLIC_KEY=…, e.g. .env.production
//      itself); created as PKCS#8 PEM (mode 0600, written atomically) when absent, so that
//      subscriptions made against its public key keep working across restarts.
// `bulkhead vapid-key import` writes the variables' key into the file of 2.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "bulkhead/config/config.h"
#include "bulkhead/encoders/vapid.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// Mastodon's variable names (its .env.production).
inline constexpr char kVapidPrivateKeyVariable[] = "VAPID_PRIVATE_KEY";
inline constexpr char kVapidPublicKeyVariable[] = "VAPID_PUBLIC_KEY";

// The two variables as found: unset and empty are both nullopt, surrounding blanks are trimmed.
// Wipes the private key's text when destroyed.
struct VapidKeyVariables {
  std::optional<std::string> private_key;
  std::optional<std::string> public_key;
  // Where they were read, for messages: "the environment" or the file's path.
  std::string origin = "the environment";

  VapidKeyVariables() = default;
  VapidKeyVariables(const VapidKeyVariables&) = default;
  VapidKeyVariables& operator=(const VapidKeyVariables&) = default;
  ~VapidKeyVariables();
};

// From the process environment.
VapidKeyVariables VapidKeyVariablesFromEnvironment();

// From the text of an env file as Mastodon's .env.production is written: NAME=VALUE lines, an
// optional `export ` before the name, the value optionally in single or double quotes, `#`
// comments and blank lines; lines naming other variables are ignored. `origin` names the file.
VapidKeyVariables VapidKeyVariablesFromEnvFile(std::string_view text, std::string origin);

// The key the variables hold; nullopt when VAPID_PRIVATE_KEY is not set. InvalidArgument names
// the variable and the problem (and where it was read), e.g. "VAPID_PUBLIC_KEY is not the public
// key of VAPID_PRIVATE_KEY (the environment)"; VAPID_PUBLIC_KEY without VAPID_PRIVATE_KEY is an
// error too (the key meant to sign is missing).
Result<std::optional<VapidKey>> VapidKeyFromVariables(const VapidKeyVariables& variables);

// The key file in effect for `config`.
std::string VapidKeyPath(const Config& config);

// Reads a key file: PEM, or Mastodon's VAPID_PRIVATE_KEY= / VAPID_PUBLIC_KEY= lines. NotFound
// when it does not exist; other errors name the path.
Result<VapidKey> LoadVapidKeyFile(const std::string& path);

// LoadVapidKeyFile; when the file does not exist, generates a key and saves it there (creating
// the directory), setting *created. Errors name the path.
Result<VapidKey> LoadOrCreateVapidKey(const std::string& path, bool* created = nullptr);

// Saves `key` at `path` as PKCS#8 PEM (mode 0600, atomically), creating the directory.
Status SaveVapidKey(const VapidKey& key, const std::string& path);

struct ServerVapidKey {
  VapidKey key;
  // Where it came from, for the log: "VAPID_PRIVATE_KEY (the environment)" or the file's path.
  std::string source;
  bool created = false;  // the file was generated now
  // Set when the variables won over a key file that holds another key: what to warn about
  // (public keys only).
  std::string warning;
};

// The key in effect (see the file comment). `create`: generate the file when absent (the
// server, `bulkhead vapid-key`); without it a missing file is NotFound.
Result<ServerVapidKey> ResolveVapidKey(const Config& config, const VapidKeyVariables& variables,
                                       bool create);

}  // namespace bulkhead
