// The Busy page: the workers (wid, node, hostname, pid, labels, last heartbeat, state) with
// quiet/terminate, the jobs each worker holds with how long they have run, and the reserved jobs
// no worker holds. Pure renderer.
//
// With several nodes on one store it shows the whole cluster: the workers connected to the
// other nodes come from the rosters those nodes publish with their heartbeat (Engine::
// ClusterWorkers, at most a heartbeat interval old), the holders from the store
// (HolderStore::List), and quiet/terminate reach a worker wherever it is connected
// (Engine::SignalWorker).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bulkhead/dashboard/layout.h"
#include "bulkhead/engine/published_roster.h"
#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/store/store.h"

namespace bulkhead::dashboard {

struct BusyData {
  std::map<std::string, WorkerInfo> workers;  // connected to this node
  std::vector<NodeWorker> elsewhere;          // connected to the other nodes, by node and wid
  std::vector<HolderStore::HeldJob> held;     // reserved jobs a worker holds (any node)
  bool held_truncated = false;                // more were held than listed
  std::vector<JobRecord> working;             // the first reserved jobs (List of kWorking)
  size_t working_total = 0;                   // reserved jobs in all
  // The store is shared by several nodes: a worker of another node can be signalled from here.
  bool shared_store = false;
};

// When a reservation began: its expiry minus its length (a renewed reservation counts from its
// last renewal).
TimePoint ReservedSince(const JobRecord& job);

std::string RenderBusyPage(const PageContext& ctx, const BusyData& data);

}  // namespace bulkhead::dashboard
