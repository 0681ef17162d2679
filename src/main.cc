// bulkhead: the command-line entry point. `bulkhead --help` is the manual.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "bulkhead/client/faktory_client.h"
#include "bulkhead/config/config.h"
#include "bulkhead/server/server.h"
#include "bulkhead/util/rng.h"

namespace {

constexpr const char* kDescription = R"(bulkhead - a Faktory-compatible job server and outbound delivery engine

bulkhead keeps jobs durably (SQLite by default, zero setup) and speaks the Faktory
work protocol, so existing Faktory clients in any language push, fetch,
acknowledge and fail jobs against it.)";

constexpr const char* kFooter = R"(
ENVIRONMENT
  BULKHEAD_PASSWORD  password clients must present (serve); never pass it as a flag
  FAKTORY_URL        server for push/info, e.g. tcp://:password@127.0.0.1:7419

FILES
  ./data/bulkhead.db  the default embedded store (sqlite:<data-dir>/bulkhead.db)

EXAMPLES
  bulkhead serve                                  serve on 127.0.0.1:7419 and :7420
  bulkhead serve --config /etc/bulkhead.toml      settings from a TOML file
  bulkhead push '{"jid":"a1b2c3d4e5","jobtype":"Mail","args":[1]}'
  echo '{"jobtype":"Mail","args":[]}' | bulkhead push   (a jid is generated)
  bulkhead info

See README.md and docs/ for the protocol, configuration and operations.)";

int Fail(const std::string& message) {
  std::cerr << "bulkhead: " << message << "\n";
  return 1;
}

bulkhead::Result<std::unique_ptr<bulkhead::FaktoryClient>> ConnectFromEnv(const std::string& url) {
  auto parsed = url.empty() ? bulkhead::FaktoryUrlFromEnvironment() : bulkhead::ParseFaktoryUrl(url);
  if (!parsed.ok()) return parsed.status();
  return bulkhead::FaktoryClient::Connect(*parsed);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "bulkhead"};
  app.footer(kFooter);
  app.require_subcommand(1);

  // serve
  bulkhead::Config flags;
  std::string config_file;
  auto* serve = app.add_subcommand("serve", "Run the server (Faktory protocol + HTTP API).");
  serve->add_option("--config", config_file, "TOML config file; flags override its settings")
      ->check(CLI::ExistingFile);
  auto* o_listen = serve->add_option("--listen", flags.listen,
                                     "Faktory protocol address HOST:PORT (default 127.0.0.1:7419)");
  auto* o_http = serve->add_option("--http", flags.http,
                                   "HTTP address for /healthz and /api (default 127.0.0.1:7420)");
  auto* o_store = serve->add_option(
      "--store", flags.store, "store URL: sqlite:PATH (default sqlite:<data-dir>/bulkhead.db) or memory:");
  auto* o_data = serve->add_option("--data-dir", flags.data_dir, "data directory (default ./data)");
  auto* o_private = serve->add_flag("--allow-private-targets", flags.allow_private_targets,
                                    "allow deliveries to private/loopback addresses and plain http");
  auto* o_log = serve->add_option("--log-level", flags.log_level,
                                  "trace, debug, info, warn, error (default info)");

  // push
  std::string job_text, url;
  auto* push = app.add_subcommand("push", "Push one job (JSON from the argument or stdin).");
  push->add_option("job", job_text, "job JSON; read from stdin when absent");
  push->add_option("--url", url, "server URL (default $FAKTORY_URL or tcp://127.0.0.1:7419)");

  auto* info = app.add_subcommand("info", "Print the server's INFO document.");
  info->add_option("--url", url, "server URL (default $FAKTORY_URL or tcp://127.0.0.1:7419)");

  app.add_subcommand("version", "Print the version.");

  CLI11_PARSE(app, argc, argv);

  if (app.got_subcommand("version")) {
    std::cout << "bulkhead " << BULKHEAD_VERSION << " (Faktory protocol v2, compatible with 1.10)\n";
    return 0;
  }

  if (app.got_subcommand("serve")) {
    bulkhead::Config config;
    if (!config_file.empty()) {
      auto loaded = bulkhead::LoadConfigFile(config_file);
      if (!loaded.ok()) return Fail(loaded.status().message());
      config = std::move(*loaded);
    }
    if (o_listen->count()) config.listen = flags.listen;
    if (o_http->count()) config.http = flags.http;
    if (o_store->count()) config.store = flags.store;
    if (o_data->count()) config.data_dir = flags.data_dir;
    if (o_private->count()) config.allow_private_targets = flags.allow_private_targets;
    if (o_log->count()) config.log_level = flags.log_level;
    if (const char* pw = std::getenv("BULKHEAD_PASSWORD"); pw && *pw) config.password = pw;
    spdlog::set_level(spdlog::level::from_str(config.log_level));
    bulkhead::Server server(std::move(config));
    bulkhead::Status s = server.Start();
    if (!s.ok()) return Fail(s.message());
    server.Run();
    spdlog::info("bulkhead stopped");
    return 0;
  }

  if (app.got_subcommand("push")) {
    if (job_text.empty()) {
      job_text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    }
    auto doc = nlohmann::json::parse(job_text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return Fail("the job must be a JSON object");
    if (!doc.contains("jid")) doc["jid"] = bulkhead::RandomHex(12);
    if (!doc.contains("args")) doc["args"] = nlohmann::json::array();
    auto client = ConnectFromEnv(url);
    if (!client.ok()) return Fail(client.status().message());
    bulkhead::Status s = (*client)->Push(doc.dump());
    if (!s.ok()) return Fail(s.message());
    std::cout << doc["jid"].get<std::string>() << "\n";
    (*client)->End();
    return 0;
  }

  if (app.got_subcommand("info")) {
    auto client = ConnectFromEnv(url);
    if (!client.ok()) return Fail(client.status().message());
    auto text = (*client)->Info();
    if (!text.ok()) return Fail(text.status().message());
    std::cout << nlohmann::json::parse(*text).dump(2) << "\n";
    (*client)->End();
    return 0;
  }
  return 0;
}
