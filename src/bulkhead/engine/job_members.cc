#include "bulkhead/engine/job_members.h"

#include <simdjson.h>

#include <nlohmann/json.hpp>

namespace bulkhead {

JobMember* JobMembers::Find(std::string_view key) {
  // By length first: most keys of a job are read, and most lengths name one key.
  switch (key.size()) {
    case 2:
      return key == "at" ? &at : nullptr;
    case 3:
      return key == "jid" ? &jid : nullptr;
    case 4:
      return key == "args" ? &args : nullptr;
    case 5:
      return key == "queue" ? &queue : key == "retry" ? &retry : nullptr;
    case 6:
      return key == "custom" ? &custom : nullptr;
    case 7:
      return key == "jobtype" ? &jobtype : nullptr;
    case 10:
      return key == "created_at" ? &created_at : nullptr;
    case 11:
      return key == "reserve_for" ? &reserve_for : key == "enqueued_at" ? &enqueued_at : nullptr;
    default:
      return nullptr;
  }
}

JobMembers MembersOf(const nlohmann::json& object) {
  using Type = JobMember::Type;
  JobMembers members;
  members.count = object.size();
  for (auto it = object.begin(); it != object.end(); ++it) {
    const nlohmann::json& value = it.value();
    JobMember* member = members.Find(it.key());
    if (member == nullptr) continue;
    switch (value.type()) {
      case nlohmann::json::value_t::null:
        member->type = Type::kNull;
        break;
      case nlohmann::json::value_t::boolean:
        member->type = Type::kBoolean;
        break;
      case nlohmann::json::value_t::number_integer:
        member->type = Type::kInteger;
        member->integer = value.get<int64_t>();
        break;
      case nlohmann::json::value_t::number_unsigned:
        member->type = Type::kUnsigned;
        member->integer = value.get<int64_t>();
        break;
      case nlohmann::json::value_t::number_float:
        member->type = Type::kFloat;
        member->real = value.get<double>();
        break;
      case nlohmann::json::value_t::string:
        member->type = Type::kString;
        member->text = value.get<std::string>();
        break;
      case nlohmann::json::value_t::array:
        member->type = Type::kArray;
        break;
      default:  // object; binary and discarded never come from parsing text
        member->type = Type::kObject;
        break;
    }
  }
  return members;
}

JobMembers MembersOf(const simdjson::dom::object& object) {
  using Type = JobMember::Type;
  using simdjson::dom::element_type;
  JobMembers members;
  std::vector<std::string_view> keys;
  keys.reserve(16);
  for (simdjson::dom::key_value_pair kv : object) {
    ++members.count;
    keys.push_back(kv.key);
    JobMember* member = members.Find(kv.key);
    if (member == nullptr) continue;
    *member = JobMember{};  // a repeated key: its last value counts
    const simdjson::dom::element& value = kv.value;
    switch (value.type()) {
      case element_type::NULL_VALUE:
        member->type = Type::kNull;
        break;
      case element_type::BOOL:
        member->type = Type::kBoolean;
        break;
      case element_type::INT64:  // nlohmann: a negative integer signed, any other unsigned
        member->integer = value.get_int64().value_unsafe();
        member->type = member->integer < 0 ? Type::kInteger : Type::kUnsigned;
        break;
      case element_type::UINT64:
        member->type = Type::kUnsigned;
        member->integer = static_cast<int64_t>(value.get_uint64().value_unsafe());
        break;
      case element_type::DOUBLE:
        member->type = Type::kFloat;
        member->real = value.get_double().value_unsafe();
        break;
      case element_type::STRING:
        member->type = Type::kString;
        member->text = value.get_string().value_unsafe();
        break;
      case element_type::ARRAY:
        member->type = Type::kArray;
        break;
      case element_type::OBJECT:
        member->type = Type::kObject;
        break;
    }
  }
  members.repeated_key = AnyRepeated(keys);
  return members;
}

}  // namespace bulkhead
