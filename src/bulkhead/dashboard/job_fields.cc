#include "bulkhead/dashboard/job_fields.h"

#include "bulkhead/util/json.h"

namespace bulkhead::dashboard {
namespace {

std::string Text(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return "";
  return it->is_string() ? it->get<std::string>() : DumpJson(*it);
}

}  // namespace

JobFields ReadJobFields(const JobRecord& job) {
  JobFields f;
  auto doc = ParseJson(job.payload, kDefaultMaxJsonDepth);
  if (!doc.ok() || !doc->is_object()) {
    f.args = job.payload;
    return f;
  }
  const nlohmann::json& j = *doc;
  if (auto it = j.find("args"); it != j.end()) f.args = DumpJson(*it);
  if (auto it = j.find("custom"); it != j.end() && !it->is_null()) f.custom = it->dump(2);
  if (auto it = j.find("retry"); it != j.end() && it->is_number_integer()) f.retry = *it;
  f.created_at = Text(j, "created_at");
  f.enqueued_at = Text(j, "enqueued_at");
  f.at = Text(j, "at");
  if (auto it = j.find("failure"); it != j.end() && it->is_object()) {
    const nlohmann::json& fail = *it;
    std::string type = Text(fail, "errtype"), message = Text(fail, "message");
    f.error = type.empty() ? message : message.empty() ? type : type + ": " + message;
    f.failed_at = Text(fail, "failed_at");
    if (auto rc = fail.find("retry_count"); rc != fail.end() && rc->is_number_integer()) {
      f.retry_count = *rc;
    }
    if (auto bt = fail.find("backtrace"); bt != fail.end() && bt->is_array()) {
      for (const auto& line : *bt) {
        f.backtrace += (line.is_string() ? line.get<std::string>() : DumpJson(line)) + "\n";
      }
    }
  }
  return f;
}

TimePoint ScoreTime(const JobRecord& job) {
  return TimePoint(std::chrono::duration_cast<Duration>(std::chrono::microseconds(job.score)));
}

}  // namespace bulkhead::dashboard
