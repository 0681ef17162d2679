// Readers of parsed JSON (INFO, /api/*) that never throw: a missing or mistyped field reads as 0,
// false, "?", null or nullopt, so a reply from an older or newer server still renders.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "bulkhead/util/clock.h"

namespace bulkhead::json_read {

// The number at `key` of `obj` (`otherwise` when `obj` is not an object or the field is not a
// number).
int64_t Int(const nlohmann::json& obj, const char* key, int64_t otherwise = 0);
double Double(const nlohmann::json& obj, const char* key);
// The string at `key`, or "?".
std::string String(const nlohmann::json& obj, const char* key);
// The value at `key`, or a null value.
const nlohmann::json& Member(const nlohmann::json& obj, const char* key);
bool Bool(const nlohmann::json& obj, const char* key);
// The RFC 3339 time at `key`; nullopt when absent, not a string or not a time.
std::optional<TimePoint> ReadTime(const nlohmann::json& obj, const char* key);

}  // namespace bulkhead::json_read
