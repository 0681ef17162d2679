#include "bulkhead/client/backup_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "bulkhead/client/api_call.h"

namespace bulkhead {
namespace {

constexpr auto kPollEvery = std::chrono::milliseconds(200);

// The backup JSON of the server's answer (server/backup_api.h), or why it is not one.
Result<nlohmann::json> BackupJson(const ApiResponse& r) {
  auto doc = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("state")) {
    return Status::Unavailable("backup: the server's answer is not a backup state: " + r.body);
  }
  return doc;
}

std::string ProgressLine(const nlohmann::json& doc) {
  int64_t done = doc.value("pages_done", int64_t{0});
  int64_t total = doc.value("pages_total", int64_t{0});
  int percent = total > 0 ? static_cast<int>(done * 100 / total) : 0;
  return "backup: " + std::to_string(done) + "/" + std::to_string(total) + " pages (" +
         std::to_string(percent) + "%)";
}

}  // namespace

BackupCommand::BackupCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "backup", "Write a consistent copy of a running server's SQLite store to PATH.");
  command_->add_option("path", path_, "the copy's file (on the server's machine; replaced)")
      ->required();
  command_->add_option("--http", http_,
                       "the server's HTTP address HOST:PORT, or https://HOST:PORT when it serves "
                       "TLS (default 127.0.0.1:7420)");
  command_->add_option("--ca", ca_file_, "CA certificate (PEM) for an https:// server");
  command_->footer(
      "The password, if the server has one, comes from BULKHEAD_PASSWORD. Restore with "
      "`bulkhead restore PATH` while the server is stopped.");
}

bool BackupCommand::selected() const { return command_->parsed(); }

Status BackupCommand::Run(std::ostream& out, std::ostream& err) {
  std::string path = std::filesystem::absolute(path_).lexically_normal().string();
  const std::string url = ApiBaseUrl(http_) + "/api/backup";
  const std::string what = "backup to " + path;
  Result<ApiResponse> r =
      CallApi("POST", url, nlohmann::json{{"path", path}}.dump(), "application/json", ca_file_);
  if (!r.ok()) return r.status();
  if (r->status != 202) return ApiError(*r, what);
  std::string last_line;
  for (;;) {
    Result<nlohmann::json> doc = BackupJson(*r);
    if (!doc.ok()) return doc.status();
    std::string state = doc->value("state", "");
    if (doc->value("path", "") != path) {
      return Status::Unavailable(what + ": the server now reports a backup to " +
                                 doc->value("path", "?"));
    }
    if (state == "failed") return Status::Unavailable(what + " failed: " + doc->value("error", ""));
    if (state == "done") {
      out << "backup written to " << path << " (" << doc->value("bytes", int64_t{0}) << " bytes, "
          << doc->value("pages_total", int64_t{0}) << " pages, " << doc->value("seconds", 0.0)
          << " s)\n";
      return Status::Ok();
    }
    if (std::string line = ProgressLine(*doc); line != last_line) {
      err << line << "\n" << std::flush;
      last_line = line;
    }
    std::this_thread::sleep_for(kPollEvery);
    r = CallApi("GET", url, "", "", ca_file_);
    if (!r.ok()) return r.status();
    if (r->status != 200) return ApiError(*r, what);
  }
}

}  // namespace bulkhead
