#include "bulkhead/view/cluster_view.h"

#include <gtest/gtest.h>

#include "bulkhead/view/info_json.h"

namespace bulkhead {
namespace {

TEST(ClusterViewTest, FromTheSnapshotThroughInfoAndBack) {
  DeliverySnapshot s;
  s.cluster_nodes = 2;
  s.max_in_flight = 128;
  s.in_flight = 3;
  s.host_cap_min = 1;
  s.host_cap_max = 16;
  InfoSnapshot info;
  info.delivery = ClusterViewFrom(s);
  std::string text = RenderInfoJson(info);
  EXPECT_NE(text.find(R"("delivery":{"cluster_nodes":2,"host_cap_max":16,"host_cap_min":1,)"
                      R"("in_flight":3,"max_in_flight":128})"),
            std::string::npos)
      << text;
  auto back = ParseInfoJson(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->delivery.has_value());
  EXPECT_EQ(*back->delivery, *info.delivery);
}

TEST(ClusterViewTest, NoDispatcherNoKeyAndBadMembersReadAsDefaults) {
  InfoSnapshot info;
  std::string text = RenderInfoJson(info);
  EXPECT_EQ(text.find("\"delivery\""), std::string::npos) << text;
  EXPECT_FALSE(ParseInfoJson(text)->delivery.has_value());
  EXPECT_EQ(ParseClusterJson(nlohmann::json{{"cluster_nodes", "x"}}), ClusterView{});
  EXPECT_EQ(ParseClusterJson(nlohmann::json::array()), ClusterView{});
}

}  // namespace
}  // namespace bulkhead
