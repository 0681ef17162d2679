// Cluster-wide delivery caps: the dispatcher applies its share of the caps for the live node
// count its store reports, and follows the count when it changes. A fake count (NodeCountStore)
// over the memory store, a scripted transport and a ManualClock: every figure is exact. Runs with
// the store answering inline and deferred (dispatch/testing/store_timing.h).

#include <gtest/gtest.h>

#include <string>

#include "bulkhead/dispatch/dispatcher.h"
#include "bulkhead/dispatch/testing/store_timing.h"
#include "bulkhead/engine/job_parser.h"
#include "bulkhead/transport/testing/scripted_transport.h"

namespace bulkhead {
namespace {

using std::chrono::seconds;

// The memory store, reporting the node count the test sets (as the Redis store learns it at each
// heartbeat) and telling the handler when it changes.
class NodeCountStore final : public DeferredStore {
 public:
  NodeCountStore(std::unique_ptr<Store> inner, Poster poster)
      : DeferredStore(std::move(inner), std::move(poster)),
        link_(DeferredStore::cluster(), later()) {}
  ClusterLink& cluster() override { return link_; }
  void SetNodes(size_t n) {
    link_.nodes_ = n;
    if (link_.handler_) link_.handler_(n);
  }
  bool has_handler() const { return static_cast<bool>(link_.handler_); }

 private:
  struct NodeCountLink final : DeferredClusterLink {
    using DeferredClusterLink::DeferredClusterLink;
    size_t live_nodes() const override { return nodes_; }
    void SetNodeCountHandler(NodeCountHandler handler) override { handler_ = std::move(handler); }
    size_t nodes_ = 1;
    NodeCountHandler handler_;
  };
  NodeCountLink link_;
};

class ClusterCapsTest : public ::testing::TestWithParam<StoreTiming> {
 protected:
  ClusterCapsTest() : transport_(clock_) {
    ApplyDeliveryDefaults(config_);
    auto inner = OpenStoreFromUrl("memory:", [](std::function<void()> f) { f(); });
    EXPECT_TRUE(inner.ok());
    Store::Poster poster = [](std::function<void()> f) { f(); };
    if (GetParam() == StoreTiming::kDeferred) {
      poster = [this](std::function<void()> f) { boost::asio::post(io_, std::move(f)); };
    }
    store_ = std::make_unique<NodeCountStore>(std::move(*inner), poster);
    engine_ = std::make_unique<Engine>(io_, *store_, config_, clock_, rng_);
  }
  ~ClusterCapsTest() override {
    if (dispatcher_) engine_->SetBuiltinJobs(nullptr);
  }

  void Start(int global, int host_initial, int host_max) {
    dconfig_.compartments.global_max_in_flight = global;
    dconfig_.compartments.compartment.limit.initial_limit = host_initial;
    dconfig_.compartments.compartment.limit.max_limit = host_max;
    dispatcher_ = std::make_unique<Dispatcher>(io_, *engine_, transport_, nullptr, keys_, clock_,
                                               rng_, dconfig_);
    engine_->SetBuiltinJobs(dispatcher_.get());
    transport_.AfterEachAnswer([this] { Settle(io_); });
    dispatcher_->Start();
    Settle(io_);
  }

  // `n` webhook jobs to `host`, whose answers come 1 s after each request.
  void PushTo(const std::string& host, int n) {
    transport_.Script(host,
                      ScriptedTransport::Behaviour{seconds(1), ScriptedTransport::Status(200)});
    for (int i = 0; i < n; ++i) {
      nlohmann::json doc = {{"jobtype", "webhook"},
                            {"jid", host + "-" + std::to_string(i)},
                            {"args", {{{"url", "https://" + host + "/hook"}}}}};
      auto job = ParseJobDocument(doc, clock_.Now());
      ASSERT_TRUE(job.ok()) << job.status().ToString();
      Status s = Await<Status>(io_, "PUSH", [&](std::function<void(Status)> done) {
        engine_->Push(std::move(*job), std::move(done));
      });
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    Settle(io_);
  }

  void SetNodes(size_t n) {
    store_->SetNodes(n);
    Settle(io_);
  }

  // Advances the clock by `d` and delivers the answers due.
  void Advance(Duration d) {
    clock_.Advance(d);
    transport_.AnswerDue(clock_.Now());
    Settle(io_);
  }

  int InFlight() const { return static_cast<int>(transport_.InFlight()); }

  Config config_;
  ManualClock clock_;
  ScriptedRng rng_;
  boost::asio::io_context io_;
  ScriptedTransport transport_;
  std::unique_ptr<NodeCountStore> store_;
  std::unique_ptr<Engine> engine_;
  InMemoryKeyRing keys_;
  DispatcherConfig dconfig_;
  std::unique_ptr<Dispatcher> dispatcher_;
};

TEST_P(ClusterCapsTest, GlobalCapIsTheNodesShareAndFollowsTheCount) {
  store_->SetNodes(2);  // before the start: the first share is already the node's
  Start(/*global=*/8, /*host_initial=*/4, /*host_max=*/32);
  for (int h = 0; h < 12; ++h) PushTo("h" + std::to_string(h) + ".example", 1);
  EXPECT_EQ(InFlight(), 4) << "8 / 2 nodes";
  DeliverySnapshot snap = dispatcher_->Snapshot();
  EXPECT_EQ(snap.cluster_nodes, 2);
  EXPECT_EQ(snap.max_in_flight, 4);
  EXPECT_EQ(snap.host_cap_max, 16);

  SetNodes(1);  // the other node died: this one grows at once
  EXPECT_EQ(InFlight(), 8);
  EXPECT_EQ(dispatcher_->Snapshot().max_in_flight, 8);

  SetNodes(4);  // two nodes joined: the share shrinks, nothing in flight is cancelled
  EXPECT_EQ(InFlight(), 8);
  EXPECT_EQ(dispatcher_->Snapshot().max_in_flight, 2);
  for (const auto& call : transport_.calls) EXPECT_FALSE(call.answered) << call.request.url;

  Advance(seconds(1));  // the 8 answer; new attempts start only under the new share
  EXPECT_EQ(dispatcher_->stats().acked, 8);
  EXPECT_EQ(InFlight(), 2);
  EXPECT_EQ(transport_.calls.size(), 10u);
  Advance(seconds(1));
  EXPECT_EQ(InFlight(), 2);
  EXPECT_EQ(transport_.calls.size(), 12u);
  Advance(seconds(1));
  EXPECT_EQ(dispatcher_->stats().acked, 12);
}

TEST_P(ClusterCapsTest, HostCapBoundsAreTheNodesShare) {
  store_->SetNodes(2);
  Start(/*global=*/100, /*host_initial=*/8, /*host_max=*/8);
  PushTo("one.example", 20);
  EXPECT_EQ(transport_.max_in_flight("one.example"), 4) << "8 / 2 nodes";
  DeliverySnapshot snap = dispatcher_->Snapshot();
  ASSERT_EQ(snap.hosts.size(), 1u);
  EXPECT_EQ(snap.hosts[0].limit, 4);
  EXPECT_EQ(snap.host_cap_max, 4);

  SetNodes(1);
  EXPECT_EQ(transport_.in_flight("one.example"), 8) << "the cap scales back to the whole";
  SetNodes(3);
  EXPECT_EQ(dispatcher_->Snapshot().hosts[0].limit, 2) << "8 / 3, floor";
  Advance(seconds(1));
  EXPECT_EQ(transport_.in_flight("one.example"), 2);
}

TEST_P(ClusterCapsTest, ShareNeverFallsBelowOneAndTheHandlerGoesWithTheDispatcher) {
  store_->SetNodes(5);
  Start(/*global=*/2, /*host_initial=*/1, /*host_max=*/1);
  PushTo("a.example", 2);
  EXPECT_EQ(InFlight(), 1) << "2 / 5 rounds down to 0: at least 1";
  EXPECT_TRUE(store_->has_handler());
  engine_->SetBuiltinJobs(nullptr);
  dispatcher_.reset();
  EXPECT_FALSE(store_->has_handler()) << "a destroyed dispatcher is no longer told";
}

INSTANTIATE_TEST_SUITE_P(Timings, ClusterCapsTest, kBothTimings, StoreTimingName);

}  // namespace
}  // namespace bulkhead
