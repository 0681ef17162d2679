// Two nodes' delivery engines over one Redis namespace (a real redis-server, one RedisStore per
// node, scripted transports, one ManualClock): a breaker opened on one node parks the host on the
// other, and only one node probes the half-open host; its success closes the host everywhere.
#include "bulkhead/dispatch/shared_host_states.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "bulkhead/config/config.h"
#include "bulkhead/dispatch/dispatcher.h"
#include "bulkhead/dispatch/dispatcher_config.h"
#include "bulkhead/engine/engine.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/store/redis_store.h"
#include "bulkhead/store/testing/shared_redis.h"
#include "bulkhead/store/testing/test_loop.h"
#include "bulkhead/transport/testing/scripted_transport.h"

namespace bulkhead {
namespace {

constexpr char kHost[] = "dead.example";

// One node: its store (its own connection and node id on the shared namespace), engine,
// transport and dispatcher.
struct Node {
  std::unique_ptr<RedisStore> store;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<ScriptedTransport> transport;
  std::unique_ptr<Dispatcher> dispatcher;

  ~Node() {
    if (engine) engine->SetBuiltinJobs(nullptr);
    dispatcher.reset();
    engine.reset();
    if (store) store->Close();
  }
  size_t Calls() const { return transport->calls.size(); }
  BreakerState Breaker(TimePoint now) const {
    const Compartment* c = dispatcher->compartments().Find(kHost);
    return c ? c->breaker().state(now) : BreakerState::kClosed;
  }
  size_t Parked() const {
    const Compartment* c = dispatcher->compartments().Find(kHost);
    return c ? c->parked_count() : 0;
  }
};

class SharedHostStatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    server_ = SharedRedis(&error);
    ASSERT_NE(server_, nullptr) << error;
    ns_ = UniqueRedisNamespace("hosts");
    ApplyDeliveryDefaults(config_);
    config_.allow_private_targets = true;
    dconfig_ = MakeDispatcherConfig(config_);
    dconfig_.compartments.compartment.breaker.failure_threshold = 2;
    for (const char* id : {"node-a", "node-b"}) nodes_.push_back(StartNode(id));
  }

  std::unique_ptr<Node> StartNode(const std::string& id) {
    auto n = std::make_unique<Node>();
    RedisStoreOptions o;
    o.url = *ParseRedisUrl(server_->url());
    o.redis_namespace = ns_;
    o.node_id = id;
    n->store = std::make_unique<RedisStore>(loop_.io(), std::move(o));
    Status s = n->store->Open();
    EXPECT_TRUE(s.ok()) << s.ToString();
    n->engine = std::make_unique<Engine>(loop_.io(), *n->store, config_, clock_, rng_);
    n->transport = std::make_unique<ScriptedTransport>(clock_);
    n->dispatcher = std::make_unique<Dispatcher>(loop_.io(), *n->engine, *n->transport, nullptr,
                                                 keys_, clock_, rng_, dconfig_);
    n->engine->SetBuiltinJobs(n->dispatcher.get());
    n->dispatcher->Start();
    return n;
  }

  // Pushes a webhook job for kHost through `node`.
  void PushWebhook(Node& node, const std::string& jid) {
    nlohmann::json doc = {{"jid", jid},
                          {"jobtype", "webhook"},
                          {"args", {{{"url", std::string("https://") + kHost + "/hook"}}}}};
    auto job = ParseJobDocument(doc, clock_.Now());
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    std::optional<Status> pushed;
    node.engine->Push(std::move(*job), [&](Status s) { pushed = s; });
    loop_.RunUntil([&] { return pushed.has_value(); });
    ASSERT_TRUE(pushed->ok()) << pushed->ToString();
  }

  // Answers every unanswered request of both nodes with `status`; returns how many.
  size_t AnswerAll(int status) {
    size_t n = 0;
    for (auto& node : nodes_) {
      for (size_t i : node->transport->Pending()) {
        node->transport->Answer(i, ScriptedTransport::Status(status));
        ++n;
      }
    }
    return n;
  }
  size_t PendingCalls() {
    size_t n = 0;
    for (auto& node : nodes_) n += node->transport->Pending().size();
    return n;
  }

  // Fails requests for kHost until a node's breaker opens; returns that node's index.
  int OpenTheBreaker() {
    for (int i = 0; i < 20; ++i) {
      for (int k = 0; k < 2; ++k) {
        if (nodes_[k]->Breaker(clock_.Now()) != BreakerState::kClosed) return k;
      }
      PushWebhook(*nodes_[i % 2], "hoststate-open-" + std::to_string(i));
      loop_.RunUntil([&] { return PendingCalls() > 0; });
      AnswerAll(500);
    }
    ADD_FAILURE() << "no breaker opened after 20 failures";
    return 0;
  }

  TestLoop loop_;
  RedisServerProcess* server_ = nullptr;
  std::string ns_;
  ManualClock clock_;
  ScriptedRng rng_;  // always 0: no jitter
  Config config_;
  DispatcherConfig dconfig_;
  InMemoryKeyRing keys_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

TEST_F(SharedHostStatesTest, ABreakerOpenedOnOneNodeParksTheHostOnTheOther) {
  const int opener = OpenTheBreaker();
  Node& other = *nodes_[1 - opener];
  loop_.RunUntil([&] { return other.Breaker(clock_.Now()) == BreakerState::kOpen; });

  // A job for the host taken by the other node now waits there: no request is sent.
  const size_t calls = other.Calls() + nodes_[opener]->Calls();
  for (int i = 0; i < 4; ++i) PushWebhook(other, "hoststate-parked-" + std::to_string(i));
  loop_.RunUntil([&] { return other.Parked() + nodes_[opener]->Parked() == 4; });
  EXPECT_EQ(other.Calls() + nodes_[opener]->Calls(), calls);
}

TEST_F(SharedHostStatesTest, OneNodeProbesTheHalfOpenHostAndItsSuccessClosesItEverywhere) {
  const int opener = OpenTheBreaker();
  loop_.RunUntil([&] { return nodes_[1 - opener]->Breaker(clock_.Now()) == BreakerState::kOpen; });
  for (int i = 0; i < 6; ++i) PushWebhook(*nodes_[i % 2], "hoststate-waiting-" + std::to_string(i));
  loop_.RunUntil([&] { return nodes_[0]->Parked() + nodes_[1]->Parked() == 6; });
  ASSERT_EQ(PendingCalls(), 0u);

  // The open interval ends on both nodes at once (they share its end); both pump.
  clock_.Advance(dconfig_.compartments.compartment.breaker.max_open_interval);
  for (auto& node : nodes_) node->dispatcher->Pump();
  loop_.RunUntil([&] { return PendingCalls() == 1; });
  // Both lease answers are in once one node holds the lease and the other holds its probes.
  auto held = [&](Node& n) {
    const Compartment* c = n.dispatcher->compartments().Find(kHost);
    return c != nullptr && c->probe_hold_until().has_value();
  };
  int prober = nodes_[0]->dispatcher->shared_hosts()->leased().contains(kHost) ? 0 : 1;
  loop_.RunUntil([&] {
    return nodes_[prober]->dispatcher->shared_hosts()->leased().contains(kHost) &&
           held(*nodes_[1 - prober]);
  });
  for (auto& node : nodes_) node->dispatcher->Pump();  // sends at once whatever may start
  EXPECT_EQ(PendingCalls(), 1u) << "one probe for the cluster";
  EXPECT_EQ(nodes_[prober]->transport->Pending().size(), 1u);

  // The probe succeeds: the host closes on every node and the parked jobs go out.
  const size_t other_calls = nodes_[1 - prober]->Calls();
  AnswerAll(200);
  loop_.RunUntil([&] {
    return nodes_[1 - prober]->Breaker(clock_.Now()) == BreakerState::kClosed &&
           nodes_[1 - prober]->Calls() > other_calls;
  });
  EXPECT_FALSE(nodes_[prober]->dispatcher->shared_hosts()->leased().contains(kHost))
      << "the lease is released once the breaker closed";
}

}  // namespace
}  // namespace bulkhead
