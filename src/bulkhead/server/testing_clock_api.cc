#include "bulkhead/server/testing_clock_api.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "bulkhead/http/bearer_auth.h"
#include "bulkhead/util/json.h"
#include "bulkhead/util/time_format.h"

namespace bulkhead {
namespace {}  // namespace

HttpResponseOut AdvanceTestingClock(OffsetClock* clock, const std::string& body) {
  if (clock == nullptr) {
    return HttpResponseOut::Error(
        404,
        "this server runs on the system clock: its clock moves only when it was started "
        "with `bulkhead serve --testing-clock` (for tests)");
  }
  auto doc = ParseJson(body, kDefaultMaxJsonDepth);
  if (!doc.ok()) {
    return HttpResponseOut::Error(400, "the body is not JSON: " + doc.status().message());
  }
  const nlohmann::json* seconds = nullptr;
  if (doc->is_object() && doc->contains("advance_seconds")) seconds = &(*doc)["advance_seconds"];
  if (seconds == nullptr || !seconds->is_number_integer() || seconds->get<int64_t>() < 0) {
    return HttpResponseOut::Error(
        400, "the body must be {\"advance_seconds\": N} with N a whole number of seconds >= 0");
  }
  // Bounded before the conversion to the clock's units, which a huge count would overflow.
  if (seconds->get<int64_t>() > kMaxClockOffsetSeconds) {
    return HttpResponseOut::Error(400, "the clock moves at most 10 years ahead in all");
  }
  if (Status s = clock->Advance(std::chrono::seconds(seconds->get<int64_t>())); !s.ok()) {
    return HttpResponseOut::Error(400, s.message());
  }
  const auto offset = std::chrono::duration_cast<std::chrono::seconds>(clock->offset()).count();
  spdlog::warn("testing clock: moved {} s forward, now {} s ahead of the system clock",
               seconds->get<int64_t>(), offset);
  return HttpResponseOut::Json(
      200, DumpJson({{"now", FormatRfc3339(clock->Now())}, {"offset_seconds", offset}}));
}

void RegisterTestingClockApi(HttpServer& http, OffsetClock* clock, const std::string& password) {
  http.Route("POST", kTestingClockPath,
             RequireBearer(password, [clock](const HttpRequestIn& req, HttpServer::Reply reply) {
               reply(AdvanceTestingClock(clock, req.body));
             }));
}

}  // namespace bulkhead
