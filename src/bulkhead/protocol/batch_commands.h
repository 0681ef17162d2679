// The handlers of Faktory Enterprise's BATCH command (NEW, OPEN, COMMIT, STATUS; docs/batches.md),
// listed in the command table (commands.cc). Parse → Engine::batches() → reply.
#pragma once

#include <string_view>

#include "bulkhead/protocol/session.h"

namespace bulkhead {

// BATCH <NEW {json} | OPEN <bid> | COMMIT <bid> | STATUS <bid>>.
void CmdBatch(Session& s, std::string_view args, Responder r);

}  // namespace bulkhead
