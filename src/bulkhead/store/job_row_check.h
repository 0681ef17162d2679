// JobRowProblem: whether a jobs row read back from the store can be served. A row is served only
// when its state is a known JobState and its payload is a JSON object whose top-level "jid" is the
// row's jid; anything else is a damaged row (see SqliteChangeLog's damage notes).
#pragma once

#include <string>

#include "bulkhead/store/job_record.h"

namespace bulkhead {

// Why a row with state `state` holding `job` cannot be served, or "" when it can. `job.state` is
// not read (the row's raw `state` may be outside JobState).
std::string JobRowProblem(int state, const JobRecord& job);

}  // namespace bulkhead
