// bulkhead: the command-line entry point. `bulkhead --help` is the manual.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "bulkhead/client/faktory_client.h"
#include "bulkhead/client/keys_command.h"
#include "bulkhead/config/config.h"
#include "bulkhead/dispatch/vapid_key_file.h"
#include "bulkhead/replay/replay_command.h"
#include "bulkhead/server/server.h"
#include "bulkhead/util/rng.h"
#include "bulkhead/view/stats_text.h"

namespace {

constexpr const char* kDescription =
    R"(bulkhead - a Faktory-compatible job server and outbound delivery engine

bulkhead keeps jobs durably (SQLite by default, zero setup) and speaks the Faktory
work protocol, so existing Faktory clients in any language push, fetch,
acknowledge and fail jobs against it.)";

constexpr const char* kFooter = R"(
ENVIRONMENT
  BULKHEAD_PASSWORD  password clients must present (serve); never pass it as a flag;
                     `keys` sends it as the HTTP API's bearer token
  FAKTORY_URL        server for push/info/stats, e.g. tcp://:password@127.0.0.1:7419, or
                     tcp+tls://:password@host:7419 for a server with a TLS certificate

FILES
  ./data/bulkhead.db  the default embedded store (sqlite:<data-dir>/bulkhead.db)
  ./data/vapid.pem    the Web Push (VAPID) private key, created on first start (mode 0600)

EXAMPLES
  bulkhead serve                                  serve on 127.0.0.1:7419 and :7420
  bulkhead serve --config /etc/bulkhead.toml      settings from a TOML file
  bulkhead serve --tls-cert-file cert.pem --tls-key-file key.pem
                                                  TLS on both ports (SIGHUP reloads the files)
  bulkhead info --url tcp+tls://bulkhead.example:7419 --ca ca.pem
  bulkhead push '{"jid":"a1b2c3d4e5","jobtype":"Mail","args":[1]}'
  echo '{"jobtype":"Mail","args":[]}' | bulkhead push   (a jid is generated)
  bulkhead info
  bulkhead stats                                  queues with latency, sets, hosts
  bulkhead keys add https://example.com/users/alice#main-key alice.pem
                                                  register an actor's ActivityPub signing key
  bulkhead keys list                              key ids, sizes and fingerprints
  bulkhead vapid-key --data-dir /var/lib/bulkhead the public key browsers subscribe with
  bulkhead replay --baseline                      the incident, replayed on loopback

See README.md and docs/ for the protocol, configuration and operations.)";

int Fail(const std::string& message) {
  std::cerr << "bulkhead: " << message << "\n";
  return 1;
}

bulkhead::Result<std::unique_ptr<bulkhead::FaktoryClient>> ConnectFromEnv(const std::string& url,
                                                                          const std::string& ca) {
  auto parsed =
      url.empty() ? bulkhead::FaktoryUrlFromEnvironment() : bulkhead::ParseFaktoryUrl(url);
  if (!parsed.ok()) return parsed.status();
  return bulkhead::FaktoryClient::Connect(*parsed, "", ca);
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
      "--store", flags.store,
      "store URL: sqlite:PATH (default sqlite:<data-dir>/bulkhead.db) or memory:");
  auto* o_data = serve->add_option("--data-dir", flags.data_dir, "data directory (default ./data)");
  auto* o_private =
      serve->add_flag("--allow-private-targets", flags.allow_private_targets,
                      "allow deliveries to private/loopback addresses and plain http");
  auto* o_log = serve->add_option("--log-level", flags.log_level,
                                  "trace, debug, info, warn, error (default info)");
  serve->add_flag("--salvage-damaged-jobs", flags.salvage_damaged_jobs,
                  "one-off recovery: move jobs whose stored payload is damaged to the table "
                  "damaged_jobs and serve the others (docs/operations.md)");
  auto* o_tls_cert = serve->add_option("--tls-cert-file", flags.tls_cert_file,
                                       "PEM certificate (chain): both ports then speak TLS only");
  auto* o_tls_key =
      serve->add_option("--tls-key-file", flags.tls_key_file, "PEM private key of --tls-cert-file");

  // push
  std::string job_text, url, ca_file;
  const char* kUrlHelp =
      "server URL (default $FAKTORY_URL or tcp://127.0.0.1:7419; tcp+tls:// for TLS)";
  const char* kCaHelp =
      "CA certificate (PEM) to verify a tcp+tls:// server with (default: the system's)";
  auto* push = app.add_subcommand("push", "Push one job (JSON from the argument or stdin).");
  push->add_option("job", job_text, "job JSON; read from stdin when absent");
  push->add_option("--url", url, kUrlHelp);
  push->add_option("--ca", ca_file, kCaHelp);

  auto* info = app.add_subcommand("info", "Print the server's INFO document.");
  info->add_option("--url", url, kUrlHelp);
  info->add_option("--ca", ca_file, kCaHelp);

  auto* stats = app.add_subcommand("stats", "Queues, sets, workers and hosts at a glance.");
  stats->add_option("--url", url, kUrlHelp);
  stats->add_option("--ca", ca_file, kCaHelp);

  std::string vapid_config, vapid_data_dir;
  auto* vapid = app.add_subcommand(
      "vapid-key", "Print the VAPID public key (base64url), generating the key if absent.");
  auto* o_vapid_config =
      vapid->add_option("--config", vapid_config, "TOML config file")->check(CLI::ExistingFile);
  vapid->add_option("--data-dir", vapid_data_dir, "data directory (default ./data)")
      ->excludes(o_vapid_config);

  // keys add|list|remove: a client of the running server's /api/keys.
  bulkhead::KeysCommand keys_command(app);

  app.add_subcommand("version", "Print the version.");

  // replay (and its hidden worker process): run during parsing, exit code kept here.
  int replay_exit = -1;
  bulkhead::RegisterReplayCommands(app, &replay_exit);

  CLI11_PARSE(app, argc, argv);
  if (replay_exit >= 0) return replay_exit;

  if (app.got_subcommand("version")) {
    std::cout << "bulkhead " << BULKHEAD_VERSION
              << " (Faktory protocol v2, compatible with 1.10)\n";
    return 0;
  }

  if (app.got_subcommand("vapid-key")) {
    bulkhead::Config config;
    if (!vapid_config.empty()) {
      auto loaded = bulkhead::LoadConfigFile(vapid_config);
      if (!loaded.ok()) return Fail(loaded.status().message());
      config = std::move(*loaded);
    }
    if (!vapid_data_dir.empty()) config.data_dir = vapid_data_dir;
    std::string path = bulkhead::VapidKeyPath(config);
    bool created = false;
    auto key = bulkhead::LoadOrCreateVapidKey(path, &created);
    if (!key.ok()) return Fail(key.status().message());
    if (created) std::cerr << "bulkhead: generated " << path << "\n";
    std::cout << key->public_key_b64url() << "\n";
    return 0;
  }

  if (keys_command.selected()) {
    bulkhead::Status s = keys_command.Run(std::cout);
    return s.ok() ? 0 : Fail(s.message());
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
    config.salvage_damaged_jobs = flags.salvage_damaged_jobs;
    if (o_tls_cert->count()) config.tls_cert_file = flags.tls_cert_file;
    if (o_tls_key->count()) config.tls_key_file = flags.tls_key_file;
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
    auto client = ConnectFromEnv(url, ca_file);
    if (!client.ok()) return Fail(client.status().message());
    bulkhead::Status s = (*client)->Push(doc.dump());
    if (!s.ok()) return Fail(s.message());
    std::cout << doc["jid"].get<std::string>() << "\n";
    (*client)->End();
    return 0;
  }

  if (app.got_subcommand("stats")) {
    auto client = ConnectFromEnv(url, ca_file);
    if (!client.ok()) return Fail(client.status().message());
    auto text = (*client)->Info();
    if (!text.ok()) return Fail(text.status().message());
    auto out = bulkhead::StatsTextFromInfo(*text, [&](const std::vector<std::string>& queues) {
      return (*client)->QueueLatency(queues);
    });
    if (!out.ok()) return Fail(out.status().message());
    std::fputs(out->c_str(), stdout);
    (*client)->End();
    return 0;
  }

  if (app.got_subcommand("info")) {
    auto client = ConnectFromEnv(url, ca_file);
    if (!client.ok()) return Fail(client.status().message());
    auto text = (*client)->Info();
    if (!text.ok()) return Fail(text.status().message());
    std::cout << nlohmann::json::parse(*text).dump(2) << "\n";
    (*client)->End();
    return 0;
  }
  return 0;
}
