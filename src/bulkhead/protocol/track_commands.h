// The handlers of Faktory Enterprise's TRACK command (SET, GET; docs/tracking.md), listed in the
// command table (commands.cc). Parse → Engine::tracking() → reply.
#pragma once

#include <string_view>

#include "bulkhead/protocol/session.h"

namespace bulkhead {

// TRACK <SET {json} | GET <jid>>.
void CmdTrack(Session& s, std::string_view args, Responder r);

}  // namespace bulkhead
