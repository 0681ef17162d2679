// The settings table (settings.h) as documentation: `bulkhead serve --help` and the README's
// settings table, generated so that they cannot drift from what the server reads.
#pragma once

#include <string>

#include "bulkhead/config/settings.h"

namespace bulkhead {

// The default as the docs show it: shown_default, or the default value ("none" when empty).
std::string DefaultText(const Setting& setting);
// The accepted values as the docs show them: "8–1000", "≥ 1", "process, power", or "".
std::string ValuesText(const Setting& setting);

// The README's settings table (markdown, one line per row, ending in a newline). Rows that differ
// only in one part of the key (the per-type [delivery.TYPE] timeouts) share one line.
std::string SettingsMarkdown();
// Every file setting as an aligned `key  default` line, for `serve --help`.
std::string SettingsHelp();

// README.md's generated part sits between these two lines.
inline constexpr const char* kReadmeSettingsBegin =
    "<!-- settings table: generated from src/bulkhead/config/settings.cc -->";
inline constexpr const char* kReadmeSettingsEnd = "<!-- end of settings table -->";

}  // namespace bulkhead
