#include "bulkhead/engine/cluster_signals.h"

#include <spdlog/spdlog.h>

namespace bulkhead {

ClusterSignals::ClusterSignals(ClusterLink& link, WorkerRoster& workers, WakeFn wake)
    : link_(link), workers_(workers), wake_(std::move(wake)) {
  link_.SetWakeHandler(
      alive_.Guard([this](const std::string& queue, size_t count) { wake_(queue, count); }));
  link_.SetWorkerSignalHandler(
      alive_.Guard([this](const std::string& wid, const std::string& name) {
        auto state = ParseWorkerState(name);
        if (!state.ok() || *state == WorkerState::kRunning) return;
        (void)SignalHere(wid, *state);  // NotFound: connected to another node
      }));
  link_.SetRosterSource([this] { return EncodeRoster(workers_.workers()); });
}

ClusterSignals::~ClusterSignals() {
  link_.SetWakeHandler(nullptr);
  link_.SetWorkerSignalHandler(nullptr);
  link_.SetRosterSource(nullptr);
}

Status ClusterSignals::SignalHere(const std::string& wid, WorkerState state) {
  if (!wid.empty()) return workers_.Signal(wid, state);
  workers_.SignalAll(state);
  return Status::Ok();
}

Status ClusterSignals::SignalWorker(const std::string& wid, WorkerState state) {
  if (link_.shared()) link_.PublishWorkerSignal(wid, WorkerStateName(state));
  Status s = SignalHere(wid, state);
  if (s.code() == StatusCode::kNotFound && link_.shared()) return Status::Ok();
  return s;
}

void ClusterSignals::ClusterWorkers(std::function<void(Result<std::vector<NodeWorker>>)> cb) {
  link_.ListOtherRosters(alive_.Guard(
      [this, cb = std::move(cb)](Result<std::vector<ClusterLink::NodeRoster>> rosters) {
        if (!rosters.ok()) return cb(rosters.status());
        std::vector<NodeWorker> out;
        const std::string here = link_.node_id();
        for (const auto& [wid, info] : workers_.workers()) out.push_back({here, info});
        for (const ClusterLink::NodeRoster& r : *rosters) {
          auto workers = DecodeRoster(r.roster);
          if (!workers.ok()) {
            spdlog::warn("the worker roster of node {} does not read: {}", r.node,
                         workers.status().message());
            continue;
          }
          for (WorkerInfo& info : *workers) out.push_back({r.node, std::move(info)});
        }
        cb(std::move(out));
      }));
}

}  // namespace bulkhead
