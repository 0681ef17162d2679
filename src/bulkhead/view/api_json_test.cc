#include "bulkhead/view/api_json.h"

#include <gtest/gtest.h>

#include "bulkhead/view/testdata/example_snapshot.h"

namespace bulkhead {
namespace {

using view_testing::ExampleSnapshot;

TEST(ApiJsonTest, Workers) {
  EXPECT_EQ(RenderWorkersJson(ExampleSnapshot().engine.workers),
            R"([{"connections":2,"hostname":"box","labels":["a","b"],"pid":42,"rss_kb":1024,)"
            R"("state":"quiet","wid":"w1"}])");
  EXPECT_EQ(RenderWorkersJson({}), "[]");
}

TEST(ApiJsonTest, HostsAsTheDispatcherGaveThem) {
  InfoSnapshot info = ExampleSnapshot();
  EXPECT_EQ(RenderHostsJson(*info.hosts), info.hosts->dump());
  EXPECT_EQ(RenderHostsJson(nlohmann::json::array()), "[]");
  EXPECT_EQ(RenderHostsJson(nlohmann::json::object()), "[]") << "never anything but an array";
}

}  // namespace
}  // namespace bulkhead
