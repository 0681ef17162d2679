#include "bulkhead/replay/sidekiq_scenario.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <vector>

#include "bulkhead/client/faktory_client.h"
#include "bulkhead/replay/child_process.h"
#include "bulkhead/replay/push_endpoint.h"
#include "bulkhead/replay/replay_ruby_text.h"
#include "bulkhead/replay/scenario_records.h"
#include "bulkhead/replay/sidekiq_redis.h"

namespace bulkhead {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Sidekiq loads Ruby and its gems before it registers: seconds on a busy 2-core machine.
constexpr auto kSidekiqStartTimeout = std::chrono::seconds(30);
// After the load stops: how long to wait for timeline jobs and healthy deliveries still on their
// way (this only bounds a stalled run).
constexpr auto kSidekiqDrainTimeout = std::chrono::seconds(5);
constexpr auto kAppRedisTimeout = std::chrono::milliseconds(5000);

// Everything one scenario starts; stopped in reverse order (Sidekiq, bulkhead, redis-server),
// each process with its whole process group.
struct SidekiqRig {
  std::filesystem::path dir;
  std::unique_ptr<PushEndpoint> healthy;
  std::unique_ptr<PushEndpoint> faulty;
  std::unique_ptr<ChildProcess> redis;
  std::unique_ptr<ChildProcess> server;
  std::unique_ptr<ChildProcess> sidekiq;
  std::thread reader;

  ~SidekiqRig() {
    if (sidekiq) sidekiq->Stop();
    if (reader.joinable()) reader.join();  // ends at Sidekiq's EOF
    if (server) server->Stop();
    if (redis) redis->Stop();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

// Polls `ready` every 50 ms until it holds; Unavailable with `child`'s log when the child exits
// first or kSidekiqStartTimeout passes.
Status WaitReady(ChildProcess& child, const std::string& what, const std::function<bool()>& ready) {
  auto deadline = Clock::now() + kSidekiqStartTimeout;
  while (!ready()) {
    if (child.Poll() || Clock::now() > deadline) {
      return Status::Unavailable(what + (child.Poll() ? " exited at start" : " did not start") +
                                 "; its log:\n" + child.StderrTail());
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Status::Ok();
}

class SidekiqScenario {
 public:
  SidekiqScenario(const ReplayOptions& options, Fault fault, SidekiqPush push, std::ostream& err)
      : options_(options), fault_(fault), push_(push), err_(err) {
    result_.name = std::string(FaultName(fault)) +
                   (push == SidekiqPush::kInline ? " (Sidekiq, 2019)" : " (Sidekiq + bulkhead)");
    result_.fault = fault;
    result_.duration_s = options.duration_s;
  }

  Result<ScenarioResult> Run() {
    if (Status s = Setup(); !s.ok()) return s;
    if (Status s = Load(); !s.ok()) return s;
    records_.WaitDrained(*rig_.healthy, kSidekiqDrainTimeout);
    (void)Sample();
    CollectScenario(records_, *rig_.healthy, *rig_.faulty, result_);
    return std::move(result_);
  }

 private:
  Status Setup() {
    char tmpl[] = "/tmp/bulkhead-replay-sidekiq-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Status::Internal("mkdtemp failed");
    rig_.dir = tmpl;
    auto healthy = PushEndpoint::Start({});
    if (!healthy.ok()) return healthy.status();
    rig_.healthy = std::move(*healthy);
    PushEndpointOptions fo;
    fo.fault = fault_;
    auto faulty = PushEndpoint::Start(fo);
    if (!faulty.ok()) return faulty.status();
    rig_.faulty = std::move(*faulty);
    auto keys = ReplaySubscriptionKeys();
    if (!keys.ok()) return keys.status();
    keys_ = *keys;
    if (Status s = StartRedis(); !s.ok()) return s;
    if (push_ == SidekiqPush::kBridge) {
      if (Status s = StartBulkhead(); !s.ok()) return s;
    }
    return StartSidekiq();
  }

  // A redis-server without persistence on a free port: the application's Redis.
  Status StartRedis() {
    auto bin = FindOnPath("redis-server");
    auto port = FreePort();
    if (!bin.ok()) return bin.status();
    if (!port.ok()) return port.status();
    redis_port_ = *port;
    auto redis =
        ChildProcess::Spawn({*bin, "--port", std::to_string(redis_port_), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", rig_.dir.string()},
                            (rig_.dir / "redis.log").string(), false, true);
    if (!redis.ok()) return redis.status();
    rig_.redis = std::move(*redis);
    return WaitReady(*rig_.redis, "redis-server", [&] {
      auto c = SidekiqRedis::Connect(redis_port_, kAppRedisTimeout);
      if (!c.ok() || !(*c)->SetSize("queues").ok()) return false;
      sampler_ = std::move(*c);
      return true;
    });
  }

  // `bulkhead serve` (this executable) whose Sidekiq bridge takes kReplayBridgeQueue from the
  // application's Redis; ready once INFO says the bridge is up.
  Status StartBulkhead() {
    auto self = SelfExecutable();
    auto fwp = FreePort();
    auto http = FreePort();
    if (!self.ok()) return self.status();
    if (!fwp.ok()) return fwp.status();
    if (!http.ok()) return http.status();
    const auto config = rig_.dir / "bulkhead.toml";
    Status w = WriteTextFile(config, "[sidekiq]\nredis = \"" + RedisUrl() + "\"\nqueues = [\"" +
                                         kReplayBridgeQueue + "\"]\n");
    if (!w.ok()) return w;
    const auto data = rig_.dir / "bulkhead";
    std::error_code ec;
    std::filesystem::create_directories(data, ec);
    auto server = ChildProcess::Spawn(
        {*self, "serve", "--listen", "127.0.0.1:" + std::to_string(*fwp), "--http",
         "127.0.0.1:" + std::to_string(*http), "--data-dir", data.string(),
         "--allow-private-targets", "--log-level", "warn", "--config", config.string()},
        (rig_.dir / "bulkhead.log").string(), false, true);
    if (!server.ok()) return server.status();
    rig_.server = std::move(*server);
    FaktoryConnectOptions co;
    co.host = "127.0.0.1";
    co.port = *fwp;
    if (const char* pw = std::getenv("BULKHEAD_PASSWORD"); pw != nullptr) co.password = pw;
    return WaitReady(*rig_.server, "the bulkhead server (with its Sidekiq bridge)", [&] {
      if (!info_client_) {
        auto c = FaktoryClient::Connect(co);
        if (!c.ok()) return false;
        info_client_ = std::move(*c);
      }
      auto info = Info();
      return info.ok() && (*info)["sidekiq"].is_object() && (*info)["sidekiq"].value("up", false);
    });
  }

  // `sidekiq -r replay_worker.rb -c CONCURRENCY -q default`, ready once it has registered itself
  // (the `processes` set, as Sidekiq's Web UI counts processes).
  Status StartSidekiq() {
    auto env = FindOnPath("env");
    auto sidekiq = FindOnPath("sidekiq");
    if (!env.ok()) return env.status();
    if (!sidekiq.ok()) return sidekiq.status();
    const auto worker = rig_.dir / "replay_worker.rb";
    if (Status w = WriteTextFile(worker, std::string(replay_ruby_text::k_replay_worker)); !w.ok())
      return w;
    auto proc = ChildProcess::Spawn(
        {*env, "REDIS_URL=" + RedisUrl(),
         std::string("REPLAY_PUSH=") + (push_ == SidekiqPush::kInline ? "inline" : "bulkhead"),
         std::string("REPLAY_BRIDGE_QUEUE=") + kReplayBridgeQueue, *sidekiq, "-r", worker.string(),
         "-c", std::to_string(options_.concurrency), "-q", "default", "-t", "1"},
        (rig_.dir / "sidekiq.log").string(), true, true);
    if (!proc.ok()) return proc.status();
    rig_.sidekiq = std::move(*proc);
    rig_.reader =
        std::thread([this, fd = rig_.sidekiq->stdout_fd()] { records_.ReadWorkerLines(fd); });
    return WaitReady(*rig_.sidekiq, "sidekiq", [&] {
      auto n = sampler_->SetSize("processes");
      return n.ok() && *n >= 1;
    });
  }

  std::string RedisUrl() const { return "redis://127.0.0.1:" + std::to_string(redis_port_) + "/0"; }

  Result<nlohmann::json> Info() { return InfoDocument(*info_client_); }

  // Pushes at `rate` per second from t0 for the duration on a connection of its own;
  // `push_one(redis, i)` pushes job i. Stops at the first error (kept in records_).
  void Pace(double rate, const std::function<Status(SidekiqRedis&, int64_t)>& push_one) {
    auto redis = SidekiqRedis::Connect(redis_port_, kAppRedisTimeout);
    if (!redis.ok()) return records_.SetLoadError(redis.status());
    records_.Pace(rate, options_.duration_s, result_.t0_us,
                  [&](int64_t i) { return push_one(**redis, i); });
  }

  // FeedInsertWorker.perform_async(status_id, follower_id, 'home', options): the replay's
  // timing in the options.
  Status PushTimeline(SidekiqRedis& redis, int64_t i, std::mt19937_64& rng) {
    int64_t cpu = std::uniform_int_distribution<int64_t>(1000, 2000)(rng);
    int64_t now = SteadyMicros();
    {
      std::lock_guard lock(records_.mu);
      records_.timeline_created.push_back(now);
    }
    nlohmann::json args = {i, 1 + i % 1000, "home", {{"created_us", now}, {"cpu_us", cpu}}};
    return redis.Push("default", "FeedInsertWorker", args, true);
  }

  // Web::PushNotificationWorker.perform_async with the subscription row and the notification
  // it would look up; job i is for the faulty host when floor((i+1)f) moves (exactly
  // bad_fraction of them, spread evenly).
  Status PushNotification(SidekiqRedis& redis, int64_t i) {
    double f = options_.bad_fraction;
    bool bad = std::floor(static_cast<double>(i + 1) * f) > std::floor(static_cast<double>(i) * f);
    int64_t now = SteadyMicros();
    uint16_t port = bad ? rig_.faulty->port() : rig_.healthy->port();
    nlohmann::json subscription = {
        {"endpoint", "http://127.0.0.1:" + std::to_string(port) + "/push/" + std::to_string(i) +
                         "/" + std::to_string(now)},
        {"keys", {{"p256dh", keys_.first}, {"auth", keys_.second}}}};
    nlohmann::json notification = {
        {"id", i}, {"payload", "{\"title\":\"replay\",\"seq\":" + std::to_string(i) + "}"}};
    {
      std::lock_guard lock(records_.mu);
      if (bad) {
        ++records_.faulty_pushed;
      } else {
        records_.healthy_pushed[i] = now;
      }
    }
    return redis.Push("default", "Web::PushNotificationWorker", {subscription, notification}, 5);
  }

  Status Load() {
    result_.t0_us = SteadyMicros() + 100'000;
    std::thread timeline([&] {
      std::mt19937_64 rng(42);
      Pace(options_.timeline_per_s,
           [&](SidekiqRedis& r, int64_t i) { return PushTimeline(r, i, rng); });
    });
    std::thread pushes([&] {
      Pace(options_.webpush_per_s,
           [&](SidekiqRedis& r, int64_t i) { return PushNotification(r, i); });
    });
    records_.SampleEachSecond(
        options_.duration_s, result_.t0_us, [&] { return Sample(); }, [&] { Progress(false); });
    timeline.join();
    pushes.join();
    Progress(true);
    if (Status e = records_.LoadError(); !e.ok()) {
      return Status::Unavailable("the load stopped: " + e.message() + "\nsidekiq log:\n" +
                                 rig_.sidekiq->StderrTail());
    }
    return Status::Ok();
  }

  // Sidekiq's figures (and bulkhead's, with the bridge) now.
  Status Sample() {
    ServerSample s;
    s.t_s = static_cast<double>(SteadyMicros() - result_.t0_us) / 1e6;
    auto retry = sampler_->SortedSetSize("retry");
    auto dead = sampler_->SortedSetSize("dead");
    auto latency = sampler_->QueueLatencyMs("default");
    if (!retry.ok()) return retry.status();
    if (!dead.ok()) return dead.status();
    if (!latency.ok()) return latency.status();
    s.retry_set = *retry;
    s.dead_set = *dead;
    s.queue_latency_ms = *latency;
    if (push_ == SidekiqPush::kInline) {
      // Only push requests fail. Counted by the worker as they fail: Sidekiq's own stat:failed
      // is flushed by the process heartbeat, seconds late.
      std::lock_guard lock(records_.mu);
      s.faulty_failures = records_.failed;
    }
    if (push_ == SidekiqPush::kBridge) {
      auto info = Info();
      if (!info.ok()) return info.status();
      const auto& sets = (*info)["faktory"]["sets"];
      s.retry_set += sets.value("retries", int64_t{0});
      s.dead_set += sets.value("dead", int64_t{0});
      AddHostFigures(*info, "127.0.0.1:" + std::to_string(rig_.faulty->port()), s);
    }
    records_.AddSample(s);
    return Status::Ok();
  }

  void Progress(bool final) {
    if (!options_.progress) return;
    records_.Progress(err_, result_.name, options_.duration_s, rig_.healthy->Arrivals().size(),
                      final);
  }

  const ReplayOptions& options_;
  const Fault fault_;
  const SidekiqPush push_;
  std::ostream& err_;
  ScenarioRecords records_;  // outlives rig_'s reader thread
  SidekiqRig rig_;
  int redis_port_ = 0;
  std::unique_ptr<SidekiqRedis> sampler_;       // main thread only
  std::unique_ptr<FaktoryClient> info_client_;  // with the bridge; main thread only
  std::pair<std::string, std::string> keys_;

  ScenarioResult result_;
};

}  // namespace

Result<ScenarioResult> RunSidekiqScenario(const ReplayOptions& options, Fault fault,
                                          SidekiqPush push, std::ostream& err) {
  return SidekiqScenario(options, fault, push, err).Run();
}

}  // namespace bulkhead
