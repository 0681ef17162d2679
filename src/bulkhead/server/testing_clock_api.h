// The HTTP route that moves a server's clock, for tests only:
//
//   POST /api/testing/clock   body: {"advance_seconds": N}   (N >= 0, an integer)
//     200 {"now": RFC 3339, "offset_seconds": the total offset}
//     400 {"error": ...} naming the problem (not JSON, no or a bad advance_seconds, too far)
//     404 {"error": ...} on a server not started with `bulkhead serve --testing-clock`
//
// The clock is an OffsetClock (util/offset_clock.h) that `serve --testing-clock` puts under every
// part of the server; without the flag the server runs on the system clock and this route only
// says so, so an operator cannot move a production server's time. With a password configured the
// route needs `Authorization: Bearer <password>` (bearer_auth.h), as /api/keys does.
#pragma once

#include <string>

#include "bulkhead/http/http_server.h"
#include "bulkhead/util/offset_clock.h"

namespace bulkhead {

inline constexpr char kTestingClockPath[] = "/api/testing/clock";

// Registers the route above on `http`. `clock`: the server's clock when it was started with
// --testing-clock (outlives `http`'s handlers), else null.
void RegisterTestingClockApi(HttpServer& http, OffsetClock* clock, const std::string& password);

// The answer to one request (the route's handler, apart from authentication).
HttpResponseOut AdvanceTestingClock(OffsetClock* clock, const std::string& body);

}  // namespace bulkhead
