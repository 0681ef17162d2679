// The FWP command table: parse → engine operation → reply, one handler per verb.
#pragma once

#include <string_view>

#include "bulkhead/protocol/session.h"

namespace bulkhead {

// Runs one command line (without its line ending) for `session`; replies through `responder`
// exactly once, now or later.
void RunCommand(Session& session, std::string_view line, Responder responder);

}  // namespace bulkhead
