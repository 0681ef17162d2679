#include "bulkhead/config/setting_flags.h"

#include <CLI/CLI.hpp>
#include <charconv>

#include "bulkhead/config/settings_doc.h"

namespace bulkhead {
namespace {

std::string FlagHelp(const Setting& s) {
  std::string values = ValuesText(s);
  return s.doc + (values.empty() ? "" : " (" + values + ")");
}

}  // namespace

SettingFlags::SettingFlags(CLI::App& command) {
  for (const Setting& s : Settings()) {
    if (s.flag.empty()) continue;
    auto flag = std::make_unique<Flag>();
    flag->setting = &s;
    if (TypeOf(s) == SettingType::kBool) {
      flag->option = command.add_flag(s.flag, flag->on, FlagHelp(s));
    } else {
      flag->option = command.add_option(s.flag, flag->text, FlagHelp(s));
      flag->option->default_str(DefaultText(s));
      if (TypeOf(s) == SettingType::kInteger) flag->option->type_name("INT");
    }
    flags_.push_back(std::move(flag));
  }
}

Status SettingFlags::ApplyTo(Config& config) const {
  for (const auto& flag : flags_) {
    if (flag->option->count() == 0) continue;
    const Setting& s = *flag->setting;
    SettingValue value = flag->text;
    if (TypeOf(s) == SettingType::kBool) {
      value = flag->on;
    } else if (TypeOf(s) == SettingType::kInteger) {
      // No integer row has a flag today; any row may name one, and this makes it work.
      int64_t n = 0;
      const std::string& t = flag->text;
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
      if (ec != std::errc() || end != t.data() + t.size()) {
        return Status::InvalidArgument(s.flag + " must be an integer, not \"" + t + "\"");
      }
      value = n;
    }
    if (Status st = SetSetting(s, value, config, s.flag); !st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace bulkhead
