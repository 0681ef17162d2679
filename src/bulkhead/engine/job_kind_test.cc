#include "bulkhead/engine/job_kind.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(JobKindTest, JobKindNamesRoundTrip) {
  for (JobKind kind : {JobKind::kWebPush, JobKind::kActivityPub, JobKind::kWebhook})
    EXPECT_EQ(JobKindFromName(JobKindName(kind)), kind);
  EXPECT_STREQ(JobKindName(JobKind::kActivityPub), "activitypub");
  EXPECT_EQ(JobKindFromName("WebPush"), std::nullopt);
  EXPECT_EQ(JobKindFromName("email"), std::nullopt);
  EXPECT_EQ(JobKindFromName(""), std::nullopt);
}

}  // namespace
}  // namespace bulkhead
