// ValidateReplayOptions: --store and --nodes, and what --pipeline sidekiq accepts.
#include <gtest/gtest.h>

#include "bulkhead/replay/replay.h"

namespace bulkhead {
namespace {

TEST(ReplayOptionsTest, SeveralNodesNeedARedisStoreAndAWorkerThreadEach) {
  ReplayOptions o;
  EXPECT_TRUE(ValidateReplayOptions(o).ok()) << "one node on the embedded store";
  o.nodes = 2;
  Status s = ValidateReplayOptions(o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--store redis://"), std::string::npos) << s.message();
  o.store = "sqlite:/tmp/x.db";
  EXPECT_FALSE(ValidateReplayOptions(o).ok()) << "an embedded store is one process's";
  for (const char* url : {"redis://127.0.0.1:6379", "rediss://r.example:6380",
                          "redis-sentinel://127.0.0.1:26379/main"}) {
    o.store = url;
    EXPECT_TRUE(ValidateReplayOptions(o).ok()) << url;
  }
  o.nodes = 9;
  EXPECT_NE(ValidateReplayOptions(o).message().find("--nodes"), std::string::npos);
  o.nodes = 0;
  EXPECT_FALSE(ValidateReplayOptions(o).ok());
  o.nodes = 4;
  o.concurrency = 3;
  EXPECT_NE(ValidateReplayOptions(o).message().find("--concurrency"), std::string::npos)
      << "each node's worker gets at least one thread";
}

TEST(ReplayOptionsTest, TheSidekiqPipelineRunsItsOwnPairOnOneStore) {
  ReplayOptions o;
  o.pipeline = Pipeline::kSidekiq;
  EXPECT_TRUE(ValidateReplayOptions(o).ok());
  o.baseline = true;
  EXPECT_NE(ValidateReplayOptions(o).message().find("--pipeline sidekiq"), std::string::npos);
  o = {};
  o.pipeline = Pipeline::kSidekiq;
  o.store = "redis://127.0.0.1:6379";
  EXPECT_FALSE(ValidateReplayOptions(o).ok()) << "the bridged run's bulkhead is on its own store";
}

}  // namespace
}  // namespace bulkhead
