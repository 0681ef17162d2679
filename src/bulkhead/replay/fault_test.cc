#include "bulkhead/replay/fault.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(FaultTest, EveryNameRoundTrips) {
  for (Fault f : AllFaults()) {
    auto parsed = ParseFault(FaultName(f));
    ASSERT_TRUE(parsed.ok()) << FaultName(f);
    EXPECT_EQ(*parsed, f);
    EXPECT_FALSE(FaultDescription(f).empty());
  }
  EXPECT_EQ(AllFaults().size(), 7u);
  EXPECT_EQ(*ParseFault("none"), Fault::kNone);
}

TEST(FaultTest, UnknownNameListsTheValidOnes) {
  auto parsed = ParseFault("slowdrip");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("unknown fault \"slowdrip\""), std::string::npos);
  EXPECT_NE(parsed.status().message().find("slow-drip"), std::string::npos);
}

}  // namespace
}  // namespace bulkhead
