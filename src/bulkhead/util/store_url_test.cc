#include "bulkhead/util/store_url.h"

#include <gtest/gtest.h>

namespace bulkhead {
namespace {

TEST(StoreUrlTest, SqliteStorePathReadsBothSpellingsAndNothingElse) {
  EXPECT_EQ(SqliteStorePath("sqlite:data/bulkhead.db"), "data/bulkhead.db");
  EXPECT_EQ(SqliteStorePath("sqlite:///var/lib/bulkhead/bulkhead.db"),
            "/var/lib/bulkhead/bulkhead.db");
  EXPECT_EQ(SqliteStorePath("sqlite:"), "");
  EXPECT_EQ(SqliteStorePath("memory:"), std::nullopt);
  EXPECT_EQ(SqliteStorePath("redis://127.0.0.1:6379"), std::nullopt);
  EXPECT_EQ(SqliteStorePath("SQLITE:x"), std::nullopt);
}

}  // namespace
}  // namespace bulkhead
