#include "bulkhead/client/connect_options.h"

#include <CLI/CLI.hpp>

namespace bulkhead {

void ConnectOptions::AddTo(CLI::App& command) {
  command.add_option(
      "--url", url,
      "server URL (default $FAKTORY_URL or tcp://127.0.0.1:7419; tcp+tls:// for TLS)");
  command.add_option(
      "--ca", ca_file,
      "CA certificate (PEM) to verify a tcp+tls:// server with (default: the system's)");
}

Result<std::unique_ptr<FaktoryClient>> ConnectOptions::Connect() const {
  auto parsed = url.empty() ? FaktoryUrlFromEnvironment() : ParseFaktoryUrl(url);
  if (!parsed.ok()) return parsed.status();
  return FaktoryClient::Connect(*parsed, "", ca_file);
}

}  // namespace bulkhead
