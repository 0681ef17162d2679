#include "bulkhead/dispatch/outcome_record.h"

#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

bool IsEventName(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

Status Bad(const std::string& field, const std::string& what) {
  return Status::InvalidArgument("outcome." + field + " " + what);
}

// Reads the string `field` into `out`; absent leaves it empty unless `required`.
Status ReadString(const nlohmann::json& doc, const char* field, bool required, std::string& out) {
  auto it = doc.find(field);
  if (it == doc.end() || it->is_null()) {
    return required ? Bad(field, "is missing") : Status::Ok();
  }
  if (!it->is_string()) return Bad(field, "must be a string");
  out = it->get<std::string>();
  if (required && out.empty()) return Bad(field, "must not be empty");
  return Status::Ok();
}

Status ReadTime(const nlohmann::json& doc, const char* field, bool required,
                std::optional<TimePoint>& out) {
  std::string text;
  if (Status s = ReadString(doc, field, required, text); !s.ok()) return s;
  if (text.empty()) return Status::Ok();
  Result<TimePoint> t = ParseRfc3339(text);
  if (!t.ok()) return Bad(field, "is not an RFC 3339 time: " + t.status().message());
  out = *t;
  return Status::Ok();
}

Status ReadStatus(const nlohmann::json& doc, std::optional<int>& out) {
  auto it = doc.find("status");
  if (it == doc.end() || it->is_null()) return Status::Ok();
  if (!it->is_number_integer() || it->get<int64_t>() < 100 || it->get<int64_t>() > 599) {
    return Bad("status", "must be an HTTP status (100 to 599) or null");
  }
  out = it->get<int>();
  return Status::Ok();
}

}  // namespace

std::string OutcomeJobType(std::string_view event) { return "bulkhead." + std::string(event); }

nlohmann::json ToJson(const OutcomeRecord& r) {
  nlohmann::json doc = {{"event", r.event},
                        {"at", FormatRfc3339(r.at)},
                        {"host", r.host},
                        {"status", r.status ? nlohmann::json(*r.status) : nlohmann::json()}};
  if (!r.reason.empty()) doc["reason"] = r.reason;
  if (!r.jid.empty()) doc["jid"] = r.jid;
  if (!r.jobtype.empty()) doc["jobtype"] = r.jobtype;
  if (!r.url.empty()) doc["url"] = r.url;
  if (!r.context.is_null()) doc["context"] = r.context;
  if (r.since) doc["since"] = FormatRfc3339(*r.since);
  return doc;
}

Result<OutcomeRecord> OutcomeRecordFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("outcome must be a JSON object");
  OutcomeRecord r;
  if (Status s = ReadString(doc, "event", true, r.event); !s.ok()) return s;
  if (!IsEventName(r.event)) return Bad("event", "must be lowercase letters, digits and '_'");
  std::optional<TimePoint> at;
  if (Status s = ReadTime(doc, "at", true, at); !s.ok()) return s;
  r.at = *at;
  if (Status s = ReadString(doc, "host", true, r.host); !s.ok()) return s;
  if (Status s = ReadStatus(doc, r.status); !s.ok()) return s;
  for (auto [field, out] : {std::pair{"reason", &r.reason}, std::pair{"jid", &r.jid},
                            std::pair{"jobtype", &r.jobtype}, std::pair{"url", &r.url}}) {
    if (Status s = ReadString(doc, field, false, *out); !s.ok()) return s;
  }
  if (auto it = doc.find("context"); it != doc.end() && !it->is_null()) {
    if (!it->is_object()) return Bad("context", "must be a JSON object");
    r.context = *it;
  }
  if (Status s = ReadTime(doc, "since", false, r.since); !s.ok()) return s;
  return r;
}

nlohmann::json PositionalOutcomeArgs(const OutcomeRecord& r) {
  if (r.event == kEventWebPushGone) return nlohmann::json::array({r.url, r.jid});
  if (r.event == kEventDeliveryDead) {
    return nlohmann::json::array({r.jid, r.jobtype, r.reason, r.url});
  }
  if (r.event == kEventHostUnavailable || r.event == kEventHostAvailable) {
    return nlohmann::json::array({r.host});
  }
  return nlohmann::json::array({ToJson(r)});
}

}  // namespace bulkhead
