#include "bulkhead/server/backup_api.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "bulkhead/http/bearer_auth.h"
#include "bulkhead/util/json.h"

namespace bulkhead {
namespace {

// The running or last backup; lives as long as the routes (shared with the store's callbacks).
struct BackupState {
  std::string state = "none";
  std::string path;
  BackupProgress progress;
  int64_t bytes = 0;
  std::string error;
  TimePoint started{};
  TimePoint finished{};

  nlohmann::json Json(const Clock& clock) const {
    nlohmann::json j = {{"state", state},
                        {"path", path},
                        {"pages_done", progress.pages_done},
                        {"pages_total", progress.pages_total}};
    if (state == "none") return j;
    TimePoint end = state == "running" ? clock.Now() : finished;
    j["seconds"] = std::chrono::duration<double>(end - started).count();
    if (state == "done") j["bytes"] = bytes;
    if (state == "failed") j["error"] = error;
    return j;
  }
};

// Why `store` cannot be backed up by bulkhead (it has no StoreBackup).
std::string NoBackupReason(const Store& store) {
  if (store.Name() == "memory") {
    return "the memory: store keeps nothing on disk, so there is nothing to back up (use a "
           "sqlite: store for jobs that survive a restart)";
  }
  if (store.Name() == "redis") {
    return "the Redis store lives in Redis: back it up there, with BGSAVE (an RDB snapshot) or "
           "AOF persistence (docs/operations.md, \"Backups\")";
  }
  return "the " + std::string(store.Name()) + " store has no online backup";
}

void StartBackup(Store& store, const Clock& clock, const std::shared_ptr<BackupState>& state,
                 const HttpRequestIn& req, const HttpServer::Reply& reply) {
  StoreBackup* backup = store.backup();
  if (backup == nullptr) {
    reply(HttpResponseOut::Error(501, NoBackupReason(store)));
    return;
  }
  auto body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object() || !body.contains("path") || !body["path"].is_string()) {
    reply(HttpResponseOut::Error(400, "the body must be {\"path\": \"/absolute/path\"}"));
    return;
  }
  std::string path = body["path"].get<std::string>();
  // A refusal comes inline, before Backup returns (store_backup.h); the rest is posted later.
  auto returned = std::make_shared<bool>(false);
  auto refused = std::make_shared<Status>();
  auto progress = [state](const BackupProgress& p) { state->progress = p; };
  auto done = [state, returned, refused, &clock](Result<BackupResult> r) {
    if (!*returned) {
      *refused = r.status();
      return;
    }
    state->finished = clock.Now();
    if (r.ok()) {
      state->state = "done";
      state->bytes = r->bytes;
      state->progress = {r->pages, r->pages};
    } else {
      state->state = "failed";
      state->error = r.status().message();
    }
  };
  backup->Backup(path, progress, done);
  *returned = true;
  if (!refused->ok()) {
    reply(HttpResponseOut::Error(*refused));
    return;
  }
  *state = BackupState{"running", path, {}, 0, "", clock.Now(), {}};
  reply(HttpResponseOut::Json(202, DumpJson(state->Json(clock))));
}

}  // namespace

void RegisterBackupApi(HttpServer& http, Store& store, const Clock& clock,
                       const std::string& password) {
  auto state = std::make_shared<BackupState>();
  http.Route("POST", kBackupApiPath,
             RequireBearer(password, [&store, &clock, state](const HttpRequestIn& req,
                                                             HttpServer::Reply reply) {
               StartBackup(store, clock, state, req, reply);
             }));
  http.Route(
      "GET", kBackupApiPath,
      RequireBearer(password, [&clock, state](const HttpRequestIn&, HttpServer::Reply reply) {
        reply(HttpResponseOut::Json(200, DumpJson(state->Json(clock))));
      }));
}

}  // namespace bulkhead
