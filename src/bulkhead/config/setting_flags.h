// SettingFlags: the `serve` flags generated from the settings table (settings.h): one CLI11
// option per row that has a flag, its help the row's doc and default. Flags override the file.
//
// Thread-compatible; lives as long as the CLI11 app it registered on (CLI11 writes into it while
// parsing).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bulkhead/config/config.h"
#include "bulkhead/config/settings.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace bulkhead {

class SettingFlags {
 public:
  // Adds the flags to `command`.
  explicit SettingFlags(CLI::App& command);
  SettingFlags(const SettingFlags&) = delete;
  SettingFlags& operator=(const SettingFlags&) = delete;

  // Writes the flags given on the parsed command line over `config`; flags not given leave it
  // as it is. InvalidArgument names the flag and what is wrong with its value.
  Status ApplyTo(Config& config) const;

 private:
  struct Flag {
    const Setting* setting = nullptr;
    CLI::Option* option = nullptr;
    std::string text;  // string and integer settings: the value as given
    bool on = false;   // boolean settings
  };
  std::vector<std::unique_ptr<Flag>> flags_;  // stable addresses: CLI11 writes into them
};

}  // namespace bulkhead
