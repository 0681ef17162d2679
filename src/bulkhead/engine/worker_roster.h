// WorkerRoster: the consumers identified by a wid in HELLO, their heartbeat and lifecycle state.
// One record per wid, shared by all of that wid's connections and dropped with the last one or
// when it stays silent past the timeout. States only move forward: running → quiet → terminate.
//
// Thread-compatible; owned by the event loop.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bulkhead/util/clock.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

enum class WorkerState { kRunning = 0, kQuiet = 1, kTerminate = 2 };
const char* WorkerStateName(WorkerState s);
// "quiet" / "terminate" / "running" (also "" → running); InvalidArgument otherwise.
Result<WorkerState> ParseWorkerState(const std::string& s);

struct WorkerInfo {
  std::string wid;
  std::string hostname;
  int64_t pid = 0;
  std::vector<std::string> labels;
  WorkerState state = WorkerState::kRunning;
  TimePoint started_at;
  TimePoint last_beat;
  int connections = 0;
  int64_t rss_kb = 0;
};

class WorkerRoster {
 public:
  // Adds a connection for info.wid, creating the record if needed.
  void Connect(const WorkerInfo& info, TimePoint now);
  // Removes a connection; the record goes with the last one.
  void Disconnect(const std::string& wid);
  // Records a heartbeat. `reported` (may be empty) is the client's own state, applied if it moves
  // forward. NotFound ("unknown worker <wid>") when the wid is not registered.
  Result<WorkerState> Beat(const std::string& wid, const std::string& reported, int64_t rss_kb,
                           TimePoint now);
  // Server-side state change (API). NotFound for unknown wids; a backward move is ignored.
  Status Signal(const std::string& wid, WorkerState state);
  // Signals every worker.
  void SignalAll(WorkerState state);
  WorkerState StateOf(const std::string& wid) const;
  // Drops workers silent for longer than `timeout`; returns their wids (their connections should
  // be closed by the caller).
  std::vector<std::string> Reap(TimePoint now, Duration timeout);

  size_t size() const { return workers_.size(); }
  const std::map<std::string, WorkerInfo>& workers() const { return workers_; }

 private:
  std::map<std::string, WorkerInfo> workers_;
};

}  // namespace bulkhead
