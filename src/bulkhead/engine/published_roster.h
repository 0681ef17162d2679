// A node's worker roster in the form it publishes to a store shared by several nodes, so
// that every node's /api/workers and Busy page list the workers of the whole cluster, idle ones
// included (ClusterLink::SetRosterSource, ClusterLink::ListOtherRosters).
//
// The text is a JSON array, one object per worker: {"wid", "hostname", "pid", "labels", "state",
// "started_at_us", "last_beat_us", "connections", "rss_kb"} (times in µs since the epoch).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "bulkhead/engine/worker_roster.h"
#include "bulkhead/util/status.h"

namespace bulkhead {

// A worker and the node it is connected to.
struct NodeWorker {
  std::string node;
  WorkerInfo info;
};

std::string EncodeRoster(const std::map<std::string, WorkerInfo>& workers);

// The workers of a published roster. InvalidArgument naming the problem when `text` is not a
// JSON array of objects with a string "wid"; other members that are missing or of another type
// (a node of another version) read as their defaults.
Result<std::vector<WorkerInfo>> DecodeRoster(std::string_view text);

}  // namespace bulkhead
