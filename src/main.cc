// bulkhead: the command-line entry point. `bulkhead --help` is the manual.
// main() builds the CLI11 app from the subcommands (each its own XxxCommand file pair) and runs
// the one chosen; a failure prints "bulkhead: MESSAGE" to stderr and exits 1.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "bulkhead/client/backup_command.h"
#include "bulkhead/client/info_command.h"
#include "bulkhead/client/keys_command.h"
#include "bulkhead/client/push_command.h"
#include "bulkhead/client/restore_command.h"
#include "bulkhead/client/stats_command.h"
#include "bulkhead/client/vapid_key_command.h"
#include "bulkhead/client/version_command.h"
#include "bulkhead/replay/replay_command.h"
#include "bulkhead/server/serve_command.h"

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
  VAPID_PRIVATE_KEY  Mastodon's Web Push key pair (its .env.production, its form): serve and
  VAPID_PUBLIC_KEY   vapid-key sign with it instead of the key file; vapid-key import writes it
                     into the key file

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
  bulkhead vapid-key import --env-file /home/mastodon/live/.env.production --data-dir /var/lib/bulkhead
                                                  sign with Mastodon's VAPID key pair
  bulkhead backup /var/backups/bulkhead.db        a consistent copy, while the server runs
  bulkhead restore /var/backups/bulkhead.db --data-dir /var/lib/bulkhead
                                                  put it back (the server stopped)
  bulkhead replay --baseline                      the incident, replayed on loopback

See README.md and docs/ for the protocol, configuration and operations.)";

// The exit code for a command's result: 0, or 1 with "bulkhead: MESSAGE" on stderr.
int Finish(const bulkhead::Status& status) {
  if (status.ok()) return 0;
  std::cerr << "bulkhead: " << status.message() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "bulkhead"};
  app.footer(kFooter);
  app.require_subcommand(1);

  bulkhead::ServeCommand serve(app);
  bulkhead::PushCommand push(app);
  bulkhead::InfoCommand info(app);
  bulkhead::StatsCommand stats(app);
  bulkhead::VapidKeyCommand vapid_key(app);
  bulkhead::KeysCommand keys(app);  // keys add|list|remove: a client of the server's /api/keys
  // backup: a consistent copy of a running server's store; restore: one put back, server stopped
  bulkhead::BackupCommand backup(app);
  bulkhead::RestoreCommand restore(app);
  bulkhead::VersionCommand version(app);
  // replay (and its hidden worker process) runs during parsing; its exit code is kept here.
  int replay_exit = -1;
  bulkhead::RegisterReplayCommands(app, &replay_exit);

  CLI11_PARSE(app, argc, argv);
  if (replay_exit >= 0) return replay_exit;

  if (version.selected()) return Finish(version.Run(std::cout));
  if (vapid_key.selected()) {
    return Finish(
        vapid_key.Run(std::cout, std::cerr, bulkhead::VapidKeyVariablesFromEnvironment()));
  }
  if (keys.selected()) return Finish(keys.Run(std::cout));
  if (backup.selected()) return Finish(backup.Run(std::cout, std::cerr));
  if (restore.selected()) return Finish(restore.Run(std::cout));
  if (serve.selected()) return Finish(serve.Run());
  if (push.selected()) return Finish(push.Run(std::cin, std::cout));
  if (stats.selected()) return Finish(stats.Run(std::cout));
  if (info.selected()) return Finish(info.Run(std::cout));
  return 0;
}
