// LogDone: the completion callback of a store or engine write whose failure the delivery engine
// only logs (an ACK, a FAIL, a reservation renewal, a saved host state): the job or host stays as
// the store has it, and the reaper or the next result tries again.
#pragma once

#include <functional>
#include <string>

#include "bulkhead/util/status.h"

namespace bulkhead {

// A callback that logs "delivery SUBJECT: WHAT failed: ERROR" as a warning when its Status is not
// ok, and does nothing otherwise. `subject` is the jid or host the write is about.
std::function<void(Status)> LogDone(std::string what, std::string subject);

}  // namespace bulkhead
