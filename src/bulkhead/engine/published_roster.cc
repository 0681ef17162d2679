#include "bulkhead/engine/published_roster.h"

#include <nlohmann/json.hpp>

#include "bulkhead/util/json.h"

namespace bulkhead {
namespace {

template <typename T>
T Read(const nlohmann::json& obj, const char* key, T otherwise) {
  auto it = obj.find(key);
  if (it == obj.end()) return otherwise;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->get<std::string>() : otherwise;
  } else {
    return it->is_number_integer() ? it->get<T>() : otherwise;
  }
}

}  // namespace

std::string EncodeRoster(const std::map<std::string, WorkerInfo>& workers) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [wid, w] : workers) {
    out.push_back({{"wid", w.wid},
                   {"hostname", w.hostname},
                   {"pid", w.pid},
                   {"labels", w.labels},
                   {"state", WorkerStateName(w.state)},
                   {"started_at_us", ToUnixMicros(w.started_at)},
                   {"last_beat_us", ToUnixMicros(w.last_beat)},
                   {"connections", w.connections},
                   {"rss_kb", w.rss_kb}});
  }
  return DumpJson(out);  // a wid or hostname is the client's bytes: invalid UTF-8 is replaced
}

Result<std::vector<WorkerInfo>> DecodeRoster(std::string_view text) {
  auto parsed = ParseJson(text, kDefaultMaxJsonDepth);
  if (!parsed.ok())
    return Status::InvalidArgument("a published roster: " + parsed.status().message());
  const nlohmann::json& doc = *parsed;
  if (!doc.is_array()) return Status::InvalidArgument("a published roster must be a JSON array");
  std::vector<WorkerInfo> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json& w = doc[i];
    if (!w.is_object() || !w.contains("wid") || !w["wid"].is_string()) {
      return Status::InvalidArgument("worker " + std::to_string(i) +
                                     " of a published roster has no string \"wid\"");
    }
    WorkerInfo info;
    info.wid = w["wid"].get<std::string>();
    info.hostname = Read<std::string>(w, "hostname", "");
    info.pid = Read<int64_t>(w, "pid", 0);
    if (auto labels = w.find("labels"); labels != w.end() && labels->is_array()) {
      for (const auto& l : *labels) {
        if (l.is_string()) info.labels.push_back(l.get<std::string>());
      }
    }
    auto state = ParseWorkerState(Read<std::string>(w, "state", ""));
    info.state = state.ok() ? *state : WorkerState::kRunning;
    info.started_at = FromUnixMicros(Read<int64_t>(w, "started_at_us", 0));
    info.last_beat = FromUnixMicros(Read<int64_t>(w, "last_beat_us", 0));
    info.connections = Read<int>(w, "connections", 0);
    info.rss_kb = Read<int64_t>(w, "rss_kb", 0);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace bulkhead
