// KeysCommand: `bulkhead keys add|list|remove`, the command-line client of a running server's
// signing-key API (/api/keys, see server/keys_api.h). The SQLite store is held exclusively by the
// server, so keys are always registered through it, never by writing the database.
//
//   bulkhead keys add KEY_ID PEM_FILE     register or replace (PEM_FILE "-" reads stdin)
//   bulkhead keys list [--json]           key id, bits, fingerprint (never a private key)
//   bulkhead keys remove KEY_ID
//
// Every subcommand takes --http HOST:PORT (default 127.0.0.1:7420) or --http https://HOST:PORT
// with --ca FILE for a server that serves TLS; the password, when the server
// has one, comes from BULKHEAD_PASSWORD and is sent as `Authorization: Bearer`. The PEM is read
// into memory, sent once and wiped; it is never printed.
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

class KeysCommand {
 public:
  // Registers `keys` and its subcommands on `app`.
  explicit KeysCommand(CLI::App& app);
  KeysCommand(const KeysCommand&) = delete;
  KeysCommand& operator=(const KeysCommand&) = delete;

  // True when the parsed command line chose `keys`.
  bool selected() const;
  // Runs the chosen subcommand against the server, writing its result to `out`. The error names
  // what went wrong: an unreachable server, a refused password, or the server's own message.
  Status Run(std::ostream& out);

 private:
  Status Add(std::ostream& out);
  Status List(std::ostream& out);
  Status Remove(std::ostream& out);

  CLI::App* keys_ = nullptr;
  CLI::App* add_ = nullptr;
  CLI::App* list_ = nullptr;
  CLI::App* remove_ = nullptr;
  std::string http_ = "127.0.0.1:7420";
  std::string ca_file_;
  std::string key_id_;
  std::string pem_file_;
  bool json_ = false;
};

// "http://HOST:PORT/api/keys" (`http_address` may also be a URL with http:// or https://) plus
// "/<percent-encoded key_id>" when key_id is not empty; every byte but RFC 3986 unreserved
// characters is escaped.
std::string KeysApiUrl(const std::string& http_address, const std::string& key_id);

}  // namespace bulkhead
