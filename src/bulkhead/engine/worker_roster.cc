#include "bulkhead/engine/worker_roster.h"

namespace bulkhead {

const char* WorkerStateName(WorkerState s) {
  switch (s) {
    case WorkerState::kRunning:
      return "running";
    case WorkerState::kQuiet:
      return "quiet";
    case WorkerState::kTerminate:
      return "terminate";
  }
  return "running";
}

Result<WorkerState> ParseWorkerState(const std::string& s) {
  if (s.empty() || s == "running") return WorkerState::kRunning;
  if (s == "quiet") return WorkerState::kQuiet;
  if (s == "terminate") return WorkerState::kTerminate;
  return Status::InvalidArgument("unknown worker state " + s);
}

void WorkerRoster::Connect(const WorkerInfo& info, TimePoint now) {
  auto [it, inserted] = workers_.try_emplace(info.wid, info);
  if (inserted) {
    it->second.started_at = now;
    it->second.connections = 0;
  }
  it->second.last_beat = now;
  it->second.connections++;
}

void WorkerRoster::Disconnect(const std::string& wid) {
  auto it = workers_.find(wid);
  if (it == workers_.end()) return;
  if (--it->second.connections <= 0) workers_.erase(it);
}

Result<WorkerState> WorkerRoster::Beat(const std::string& wid, const std::string& reported,
                                       int64_t rss_kb, TimePoint now) {
  auto it = workers_.find(wid);
  if (it == workers_.end()) return Status::NotFound("unknown worker " + wid);
  it->second.last_beat = now;
  if (rss_kb > 0) it->second.rss_kb = rss_kb;
  auto r = ParseWorkerState(reported);
  if (r.ok() && *r > it->second.state) it->second.state = *r;
  return it->second.state;
}

Status WorkerRoster::Signal(const std::string& wid, WorkerState state) {
  auto it = workers_.find(wid);
  if (it == workers_.end()) return Status::NotFound("unknown worker " + wid);
  if (state > it->second.state) it->second.state = state;
  return Status::Ok();
}

void WorkerRoster::SignalAll(WorkerState state) {
  for (auto& [wid, w] : workers_) {
    if (state > w.state) w.state = state;
  }
}

WorkerState WorkerRoster::StateOf(const std::string& wid) const {
  auto it = workers_.find(wid);
  return it == workers_.end() ? WorkerState::kRunning : it->second.state;
}

std::vector<std::string> WorkerRoster::Reap(TimePoint now, Duration timeout) {
  std::vector<std::string> gone;
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (now - it->second.last_beat > timeout) {
      gone.push_back(it->first);
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

}  // namespace bulkhead
