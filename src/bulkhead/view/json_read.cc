#include "bulkhead/view/json_read.h"

#include "bulkhead/util/time_format.h"

namespace bulkhead::json_read {

using nlohmann::json;

int64_t Int(const json& obj, const char* key, int64_t otherwise) {
  if (!obj.is_object()) return otherwise;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<int64_t>() : otherwise;
}

double Double(const json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : 0;
}

std::string String(const json& obj, const char* key) {
  if (!obj.is_object()) return "?";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "?";
}

const json& Member(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it != obj.end() ? *it : kNull;
}

bool Bool(const json& obj, const char* key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

std::optional<TimePoint> ReadTime(const json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  auto t = ParseRfc3339(it->get<std::string>());
  return t.ok() ? std::optional<TimePoint>(*t) : std::nullopt;
}

}  // namespace bulkhead::json_read
