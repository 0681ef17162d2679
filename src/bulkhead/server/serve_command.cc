#include "bulkhead/server/serve_command.h"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <functional>

#include "bulkhead/config/settings_doc.h"
#include "bulkhead/server/server.h"
#include "bulkhead/util/offset_clock.h"

namespace bulkhead {

ServeCommand::ServeCommand(CLI::App& app) {
  command_ = app.add_subcommand("serve", "Run the server (Faktory protocol + HTTP API).");
  command_->add_option("--config", config_file_, "TOML config file; flags override its settings")
      ->check(CLI::ExistingFile);
  flags_ = std::make_unique<SettingFlags>(*command_);
  command_->add_flag("--salvage-damaged-jobs", salvage_damaged_jobs_,
                     "one-off recovery: move jobs whose stored payload is damaged to the table "
                     "damaged_jobs and serve the others (docs/operations.md)");
  command_->add_flag("--testing-clock", testing_clock_,
                     "for tests only: run on a clock that POST /api/testing/clock moves forward "
                     "(to see what happens days later without waiting); never in production");
  // Built only when help is shown. CLI11 prints a callback's text, a newline, then the footer
  // string, which a subcommand inherits from the app: cleared, so that only this footer shows.
  command_->footer(std::string());
  command_->footer(std::function<std::string()>([] {
    std::string footer =
        "\nSETTINGS of the --config file (TOML; README.md \"Configuration\" says what each does),\n"
        "with their defaults; [jobtypes.NAME] retry sets retries per job type:\n" +
        SettingsHelp();
    footer.pop_back();
    return footer;
  }));
}

bool ServeCommand::selected() const { return command_->parsed(); }

Result<Config> ServeCommand::BuildConfig() const {
  auto loaded = LoadConfigOrDefaults(config_file_);
  if (!loaded.ok()) return loaded.status();
  Config config = std::move(*loaded);
  if (Status s = flags_->ApplyTo(config); !s.ok()) return s;
  config.salvage_damaged_jobs = salvage_damaged_jobs_;
  if (const char* pw = std::getenv("BULKHEAD_PASSWORD"); pw && *pw) config.password = pw;
  return config;
}

Status ServeCommand::Run() {
  auto config = BuildConfig();
  if (!config.ok()) return config.status();
  spdlog::set_level(spdlog::level::from_str(config->log_level));
  // The testing clock is declared before the server, which holds a reference to it.
  std::unique_ptr<OffsetClock> testing_clock;
  ServerTestHooks hooks;
  if (testing_clock_) {
    testing_clock = std::make_unique<OffsetClock>(SystemClock::Instance());
    hooks.testing_clock = testing_clock.get();
    spdlog::warn(
        "serve --testing-clock: POST /api/testing/clock moves this server's time; for "
        "tests only");
  }
  Clock& clock = testing_clock ? static_cast<Clock&>(*testing_clock) : SystemClock::Instance();
  Server server(std::move(*config), clock, std::move(hooks));
  if (Status s = server.Start(); !s.ok()) return s;
  server.Run();
  if (!server.exit_status().ok()) return server.exit_status();
  spdlog::info("bulkhead stopped");
  return Status::Ok();
}

}  // namespace bulkhead
