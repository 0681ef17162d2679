#include "bulkhead/http/http_server.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulkhead {
namespace {

TEST(HttpResponseOutTest, ErrorFromStatusNamesTheProblemWithTheStatusItsCodeMeans) {
  const std::pair<Status, int> cases[] = {
      {Status::InvalidArgument("bad path"), 400},
      {Status::PermissionDenied("no"), 403},
      {Status::NotFound("no such key"), 404},
      {Status::FailedPrecondition("busy"), 409},
      {Status(StatusCode::kResourceExhausted, "full"), 429},
      {Status::Unavailable("disk"), 503},
      {Status(StatusCode::kInternal, "bug"), 500},
  };
  for (const auto& [status, http] : cases) {
    HttpResponseOut r = HttpResponseOut::Error(status);
    EXPECT_EQ(r.status, http) << status.message();
    EXPECT_EQ(nlohmann::json::parse(r.body)["error"], status.message());
    EXPECT_EQ(r.content_type, "application/json");
  }
}

}  // namespace
}  // namespace bulkhead
