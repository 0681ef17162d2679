// A reservation whose FETCH reply was lost: when the command connection comes back, the node
// gives back the reservations it holds that none of its callers received, to their queue with no
// retry spent, and keeps those it handed out.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "bulkhead/redis/testing/redis_server_process.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/testing/make_job.h"
#include "bulkhead/store/testing/redis_nodes_fixture.h"
#include "bulkhead/store/testing/shared_redis.h"
#include "bulkhead/store/testing/test_loop.h"

namespace bulkhead {
namespace {

using namespace std::chrono_literals;

class RedisReclaimTest : public RedisNodesTest {
 protected:
  RedisReclaimTest() : RedisNodesTest("reclaim", 10s) {}
  std::string Fetch(Store& store) {
    using R = Result<std::optional<JobRecord>>;
    R r = Await<R>([&](auto cb) { store.Fetch({"default"}, now_, cb); });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && r->has_value() ? (*r)->jid : "";
  }
  RedisReply Redis(std::vector<std::string> argv) {
    auto r = BlockingRedisCommand(server_->connect_options(), std::move(argv));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(*r) : RedisReply();
  }
  std::string Key(const std::string& name) const { return "{" + namespace_ + "}:" + name; }

  TimePoint now_ = FromUnixMicros(1'700'000'000'000'000);
};

TEST_F(RedisReclaimTest, AReservationWhoseFetchReplyWasLostGoesBackAtTheReconnect) {
  auto a = OpenNode("node-a");
  ASSERT_TRUE(a);
  for (const char* jid : {"job-known-01", "job-lost-001"}) {
    ASSERT_TRUE(Await<Status>([&](auto cb) { a->Push(MakeJob(jid), cb); }).ok());
  }
  EXPECT_EQ(Fetch(*a), "job-known-01") << "handed out to A's caller";
  {
    // The FETCH that Redis ran for A but whose reply A never read: the same reservation, made
    // under A's node id by another connection that then vanishes.
    auto ghost = OpenNode("node-a");
    ASSERT_TRUE(ghost);
    EXPECT_EQ(Fetch(*ghost), "job-lost-001");
    ghost->AbandonForTests();
  }
  // The jids of A's reservation set, without the member that keeps it a hash table (prelude.lua:
  // LARGE, which starts with byte 255).
  auto reserved_by_a = [&] {
    std::set<std::string> jids;
    RedisReply members = Redis({"SMEMBERS", Key("reserved:node-a")});
    for (const RedisReply& e : members.elements()) {
      if (e.str().front() != '\xff') jids.insert(e.str());
    }
    return jids;
  };
  ASSERT_EQ(reserved_by_a(), (std::set<std::string>{"job-known-01", "job-lost-001"}));

  std::map<std::string, size_t> woken;
  a->cluster().SetWakeHandler([&woken](const std::string& queue, size_t n) { woken[queue] += n; });

  // A's command connection drops (as with a fail-over); A reconnects by itself.
  Redis({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  loop_.RunUntil([&] { return a->reservations_reclaimed() == 1; });
  loop_.RunUntil([&] { return woken["default"] == 1; });  // A's own FETCHes hear it too
  EXPECT_EQ(reserved_by_a(), std::set<std::string>{"job-known-01"})
      << "the one A's caller holds stays";
  auto queued = Redis({"LRANGE", Key("q:default"), "0", "-1"});
  ASSERT_EQ(queued.elements().size(), 1u);
  EXPECT_EQ(queued.elements()[0].str(), "job-lost-001");
  EXPECT_TRUE(Redis({"ZSCORE", Key("working"), "job-lost-001"}).is_nil());

  // Given back, not failed: fetched again, with no retry counted.
  using R = Result<std::optional<JobRecord>>;
  R again = Await<R>([&](auto cb) { a->Fetch({"default"}, now_, cb); });
  ASSERT_TRUE(again.ok() && again->has_value()) << again.status().ToString();
  EXPECT_EQ((*again)->jid, "job-lost-001");
  EXPECT_EQ((*again)->payload.find("retry_count"), std::string::npos) << (*again)->payload;
  EXPECT_EQ(a->reservations_reclaimed(), 1) << "nothing else given back";
  a->cluster().SetWakeHandler(nullptr);
}

}  // namespace
}  // namespace bulkhead
