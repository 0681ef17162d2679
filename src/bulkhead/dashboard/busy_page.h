// The Busy page: the workers connected to this node (wid, hostname, pid, labels, last heartbeat,
// state) with quiet/terminate, the jobs each worker holds with how long they have run, and the
// reserved jobs no worker holds. Pure renderer.
//
// The holders come from the store (Store::ListHeld), so with several nodes on one store a job
// held by a worker connected to another node is listed under its wid too, marked as not
// connected here (the roster, quiet and terminate are this node's).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bulkhead/dashboard/layout.h"
#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/store/job_record.h"
#include "bulkhead/store/store.h"

namespace bulkhead::dashboard {

struct BusyData {
  std::map<std::string, WorkerInfo> workers;  // connected to this node
  std::vector<Store::HeldJob> held;           // reserved jobs a worker holds (any node)
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
