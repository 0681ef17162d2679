// Settings: the one table of `bulkhead serve`'s settings. Each row names a TOML key as written in
// the file ("listen", "delivery.webpush.total_timeout_ms"), the Config member it sets, its doc,
// its range or allowed values and, for some, a `serve` flag. The table drives the TOML reader
// (config_file.cc), Config::Validate's per-setting checks, the serve flags (setting_flags.h),
// `bulkhead serve --help` and the README's settings table (settings_doc.h).
//
// Not rows, because a row holds one scalar or list: [jobtypes.NAME] tables (a map keyed by job
// type, read by config_file.cc) and the checks that relate settings to each other (the TLS pair,
// host caps, timeouts against the total, kept in Config::Validate).
//
// A new setting: a member in config.h, a row in settings.cc (and `make`'s README check tells you
// to regenerate the README table).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "bulkhead/config/config.h"

namespace bulkhead {

// The Config member a setting reads and writes: a function returning a reference to it.
using SettingField =
    std::variant<std::string& (*)(Config&), int& (*)(Config&), int64_t& (*)(Config&),
                 bool& (*)(Config&), std::vector<std::string>& (*)(Config&)>;

// A setting's value, whatever its member's width: integers are int64_t here.
using SettingValue = std::variant<std::string, int64_t, bool, std::vector<std::string>>;

// SettingField for the member reached through a path of pointers to members, e.g.
// MemberField<&Config::delivery, &DeliverySettings::host_cap_max>().
template <auto... Members>
SettingField MemberField() {
  return +[](Config & c) -> auto& { return (c.*....*Members); };
}

struct Setting {
  std::string key{};  // as written in TOML, dotted for tables: "delivery.host_cap_max"
  SettingField field{};
  std::string doc{};      // one line: `serve --help` and the README
  std::string details{};  // README only: more of the story (may be empty)
  std::string flag{};     // "--listen"; empty: the file only
  // Integers: inclusive bounds; unset: the member type's. zero_is_off: 0 turns the feature off
  // (said in messages and docs).
  std::optional<int64_t> min{};
  std::optional<int64_t> max{};
  bool zero_is_off = false;
  // Strings: the values accepted (empty: any), or a check returning what is wrong ("" if fine).
  std::vector<std::string> allowed{};
  std::string (*check)(const std::string& value) = nullptr;
  std::string values{};  // how the docs describe the accepted values when `check` decides
  // The default as documented when the member's default means "derived" (an empty store URL
  // means sqlite:<data_dir>/bulkhead.db); empty: the member's default value.
  std::string shown_default{};
  // An older spelling of another key: both in one file is an error.
  std::string older_spelling_of{};
};

// The rows of the [delivery] table and of its per-type tables (settings_delivery.cc).
std::vector<Setting> DeliveryRows();
std::vector<Setting> DeliveryKindRows();
// The rows of the [sidekiq] table (settings_sidekiq.cc).
std::vector<Setting> SidekiqRows();
// What is wrong with a Sidekiq queue name as a [sidekiq] setting ("" if fine).
std::string SidekiqQueueNameProblem(const std::string& name);

// Every setting, in documentation order. Built once; never changes.
const std::vector<Setting>& Settings();
// The row for `key` as written in TOML, or null.
const Setting* FindSetting(const std::string& key);

// What a setting's member holds (int and int64_t members are both kInteger).
enum class SettingType { kString, kInteger, kBool, kStringList };
SettingType TypeOf(const Setting& setting);
// "a string", "an integer", "true or false" or "an array of strings": what the member takes.
std::string ExpectedType(const Setting& setting);
// The setting's value in `config`.
SettingValue GetSetting(const Setting& setting, const Config& config);
// What is wrong with `value` for `setting` ("must be at least 1, not 0"), or "" when it fits the
// member's type and the setting's range, allowed values and check. The text follows the key.
std::string SettingProblem(const Setting& setting, const SettingValue& value);
// Writes `value` into the setting's member. InvalidArgument "NAME problem" when SettingProblem
// finds one (NAME: `name`, or the key when empty, e.g. a flag's "--listen"); the member is then
// unchanged.
Status SetSetting(const Setting& setting, const SettingValue& value, Config& config,
                  const std::string& name = "");
// The first setting of `config` whose value has a problem, as InvalidArgument "KEY problem".
Status ValidateSettings(const Config& config);

// `value` as a TOML literal: "a \"quoted\" string", 42, true, ["a", "b"].
std::string TomlLiteral(const SettingValue& value);
}  // namespace bulkhead
