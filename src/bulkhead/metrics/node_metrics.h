// Which figures are one node's own when several bulkhead nodes share a store (Redis).
//
// A node's own figures (its connections and logins, the workers connected to it, its deliveries
// and compartments, its job runtimes, its store connection, its build and start time) carry the
// label node="<node id>" there (Registry::SetExtraLabel), so that the nodes' series stay apart
// whatever the scraper adds. The figures every node reads alike from the shared store (queue sizes
// and latencies, the scheduled, retry, dead and working sets, the processed and failed counters)
// carry no node label: every node reports the same cluster-wide value (take one, or max(), never
// sum()).
#pragma once

#include <string_view>

namespace bulkhead {

// True unless `family` is one of the cluster-wide families above. A family added later is per
// node until it is listed as cluster-wide.
bool IsPerNodeMetric(std::string_view family);

}  // namespace bulkhead
