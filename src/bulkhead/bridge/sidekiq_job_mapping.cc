#include "bulkhead/bridge/sidekiq_job_mapping.h"

#include "bulkhead/bridge/sidekiq_time.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {

// A class name as the bridge takes it: a non-empty string without control characters (a name
// with them would reach logs, the dashboard and Faktory workers). `field` names it in the error.
Result<std::string> ClassName(const nlohmann::json& job, const char* field) {
  auto it = job.find(field);
  if (it == job.end() || it->is_null()) {
    return Status::InvalidArgument(std::string("the job has no ") + field);
  }
  if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
    return Status::InvalidArgument(std::string(field) + " must be a non-empty string");
  }
  const std::string& name = it->get_ref<const std::string&>();
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(std::string(field) + " holds a control character");
    }
  }
  return name;
}

}  // namespace

std::optional<int> FaktoryRetryOf(const nlohmann::json& job) {
  auto retry = job.find("retry");
  if (retry == job.end() || retry->is_null()) return std::nullopt;
  auto dead = job.find("dead");
  bool keep_dead = !(dead != job.end() && dead->is_boolean() && !dead->get<bool>());
  if (retry->is_boolean()) return retry->get<bool>() ? std::nullopt : std::optional<int>(0);
  if (!retry->is_number_integer()) return std::nullopt;
  int64_t n = retry->get<int64_t>();
  if (n <= 0) return keep_dead ? -1 : 0;
  return static_cast<int>(std::min<int64_t>(n, 1'000'000));
}

Result<nlohmann::json> MapSidekiqJob(std::string_view text, const SidekiqMappingLimits& limits) {
  if (text.size() > limits.max_job_bytes) {
    return Status::InvalidArgument("the job is " + std::to_string(text.size()) +
                                   " bytes; at most " + std::to_string(limits.max_job_bytes) +
                                   " are taken (sidekiq.max_job_bytes)");
  }
  auto parsed = ParseJson(text, limits.max_json_depth);
  if (!parsed.ok()) return Status::InvalidArgument("not JSON: " + parsed.status().message());
  nlohmann::json job = std::move(*parsed);
  if (!job.is_object()) return Status::InvalidArgument("the job is not a JSON object");
  auto klass = ClassName(job, "class");
  if (!klass.ok()) return klass.status();
  std::string jobtype = *klass;
  if ((jobtype == kActiveJobWrapper || jobtype == kSidekiqActiveJobWrapper) &&
      job.contains("wrapped")) {
    auto wrapped = ClassName(job, "wrapped");
    if (!wrapped.ok()) return wrapped.status();
    jobtype = *wrapped;
  }
  auto args = job.find("args");
  if (args == job.end() || !args->is_array()) {
    return Status::InvalidArgument("args must be an array");
  }
  nlohmann::json out = {{"jobtype", std::move(jobtype)}, {"args", std::move(*args)}};
  job.erase("args");
  if (auto jid = job.find("jid"); jid != job.end()) out["jid"] = *jid;
  auto queue = job.find("queue");
  out["queue"] = queue == job.end() || queue->is_null() ? nlohmann::json("default") : *queue;
  if (std::optional<int> retry = FaktoryRetryOf(job)) out["retry"] = *retry;
  if (auto created = job.find("created_at"); created != job.end()) {
    if (std::optional<TimePoint> at = ReadSidekiqTimestamp(*created)) {
      out["created_at"] = FormatRfc3339(*at);
    }
  }
  job.erase("at");
  out["custom"] = {{"sidekiq", std::move(job)}};
  return out;
}

}  // namespace bulkhead
