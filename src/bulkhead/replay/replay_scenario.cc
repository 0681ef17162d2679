#include "bulkhead/replay/replay_scenario.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "bulkhead/client/faktory_client.h"
#include "bulkhead/replay/child_process.h"
#include "bulkhead/replay/push_endpoint.h"
#include "bulkhead/replay/scenario_records.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr auto kServerReadyTimeout = std::chrono::seconds(20);
constexpr auto kWorkerReadyTimeout = std::chrono::seconds(20);
// After the load stops: how long to wait for timeline jobs and healthy deliveries still on their
// way (everything healthy takes milliseconds; this only bounds a broken run).
constexpr auto kDrainTimeout = std::chrono::seconds(5);

std::string Password() {
  const char* pw = std::getenv("BULKHEAD_PASSWORD");
  return pw != nullptr ? pw : "";
}

// One bulkhead server process and its timeline worker.
struct ReplayNode {
  std::unique_ptr<ChildProcess> server;
  std::unique_ptr<ChildProcess> worker;
  uint16_t fwp_port = 0;
  std::thread reader;
};

// Everything one scenario starts; destroyed in reverse order (workers, servers, endpoints).
struct Rig {
  std::filesystem::path dir;
  std::unique_ptr<PushEndpoint> healthy;
  std::unique_ptr<PushEndpoint> faulty;
  std::vector<ReplayNode> nodes;  // sized once, before any reader starts

  ~Rig() {
    for (auto& n : nodes) {
      if (n.worker) n.worker->Stop();
      if (n.reader.joinable()) n.reader.join();  // ends at the worker's EOF
    }
    for (auto& n : nodes) {
      if (n.server) n.server->Stop();
    }
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

class Scenario {
 public:
  Scenario(const ReplayOptions& options, Fault fault, std::string name, std::ostream& err)
      : options_(options), fault_(fault), err_(err) {
    result_.name = std::move(name);
    if (options.pipeline == Pipeline::kSharedPool) result_.name += " (shared pool)";
    if (options.pipeline == Pipeline::kThrottled) result_.name += " (throttled)";
    result_.fault = fault;
    result_.duration_s = options.duration_s;
  }

  Result<ScenarioResult> Run() {
    Status s = Setup();
    if (!s.ok()) return s;
    s = Load();
    if (!s.ok()) return s;
    Drain();
    Collect();
    if (!redis_namespace_.empty() && options_.store.starts_with("redis")) {
      (void)info_clients_[0]->Flush();  // the scenario's jobs leave the user's Redis
    }
    return std::move(result_);
  }

 private:
  Status Setup() {
    char tmpl[] = "/tmp/bulkhead-replay-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return Status::Internal("mkdtemp failed");
    rig_.dir = tmpl;
    if (Status s = StartEndpoints(); !s.ok()) return s;
    auto self = SelfExecutable();
    if (!self.ok()) return self.status();
    rig_.nodes.resize(static_cast<size_t>(options_.nodes));
    redis_namespace_ = "replay-" + RandomHex(6);
    for (size_t i = 0; i < rig_.nodes.size(); ++i) {
      if (Status s = StartServer(*self, i); !s.ok()) return s;
    }
    for (size_t i = 0; i < rig_.nodes.size(); ++i) {
      if (Status s = StartWorker(*self, i); !s.ok()) return s;
    }
    auto keys = ReplaySubscriptionKeys();
    if (!keys.ok()) return keys.status();
    keys_ = *keys;
    return Status::Ok();
  }

  // The healthy and the faulty push endpoints.
  Status StartEndpoints() {
    auto healthy = PushEndpoint::Start({});
    if (!healthy.ok()) return healthy.status();
    rig_.healthy = std::move(*healthy);
    PushEndpointOptions fo;
    fo.fault = fault_;
    auto faulty = PushEndpoint::Start(fo);
    if (!faulty.ok()) return faulty.status();
    rig_.faulty = std::move(*faulty);
    faulty_host_ = "127.0.0.1:" + std::to_string(rig_.faulty->port());
    return Status::Ok();
  }

  // The serve config file's text (empty: none): the throttle of kThrottled; on a Redis store the
  // scenario's namespace and a 1 s heartbeat (the nodes learn of each other within a second).
  std::string ServeConfig() const {
    std::string text;
    if (!options_.store.empty() && options_.store.starts_with("redis")) {
      text += "redis_namespace = \"" + redis_namespace_ +
              "\"\nredis_heartbeat_ms = 1000\nredis_heartbeat_ttl_ms = 5000\n";
    }
    if (options_.pipeline == Pipeline::kThrottled) {
      text += "[throttles]\npush = { concurrency = " + std::to_string(kThrottledPushConcurrency) +
              ", timeout = " + std::to_string(kThrottledPushTimeoutSeconds) + " }\n";
    }
    return text;
  }

  // `bulkhead serve` (this executable) for node `i` on free ports, waited for until a client
  // connects.
  Status StartServer(const std::string& self, size_t i) {
    ReplayNode& node = rig_.nodes[i];
    auto fwp = FreePort();
    auto http = FreePort();
    if (!fwp.ok()) return fwp.status();
    if (!http.ok()) return http.status();
    node.fwp_port = *fwp;
    const std::filesystem::path data = rig_.dir / ("node-" + std::to_string(i));
    std::error_code ec;
    std::filesystem::create_directories(data, ec);
    if (ec) return Status::Internal("cannot create " + data.string() + ": " + ec.message());
    std::vector<std::string> serve = {self,
                                      "serve",
                                      "--listen",
                                      "127.0.0.1:" + std::to_string(*fwp),
                                      "--http",
                                      "127.0.0.1:" + std::to_string(*http),
                                      "--data-dir",
                                      data.string(),
                                      "--allow-private-targets",
                                      "--log-level",
                                      "warn"};
    if (!options_.tls_cert_file.empty()) {
      serve.insert(serve.end(), {"--tls-cert-file", options_.tls_cert_file, "--tls-key-file",
                                 options_.tls_key_file});
    }
    if (!options_.store.empty()) serve.insert(serve.end(), {"--store", options_.store});
    if (std::string text = ServeConfig(); !text.empty()) {
      auto config = rig_.dir / "bulkhead.toml";
      if (Status s = WriteTextFile(config, text); !s.ok()) return s;
      serve.insert(serve.end(), {"--config", config.string()});
    }
    auto server = ChildProcess::Spawn(serve, (data / "server.log").string(), false);
    if (!server.ok()) return server.status();
    node.server = std::move(*server);
    auto deadline = Clock::now() + kServerReadyTimeout;
    for (;;) {
      auto c = FaktoryClient::Connect(ClientOptions(i));
      if (c.ok()) {
        info_clients_.push_back(std::move(*c));
        break;
      }
      if (node.server->Poll() || Clock::now() > deadline) {
        return Status::Unavailable("the bulkhead server (node " + std::to_string(i) +
                                   ") did not start: " + c.status().message() + "\nserver log:\n" +
                                   node.server->StderrTail());
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    return Status::Ok();
  }

  // Node `i`'s timeline worker (this executable), with its share of the worker threads, waited
  // for until its server counts it.
  Status StartWorker(const std::string& self, size_t i) {
    ReplayNode& node = rig_.nodes[i];
    const size_t n = rig_.nodes.size();
    const size_t threads = static_cast<size_t>(options_.concurrency) / n +
                           (i < static_cast<size_t>(options_.concurrency) % n ? 1 : 0);
    std::vector<std::string> worker_args = {self,
                                            "replay-worker",
                                            "--port",
                                            std::to_string(node.fwp_port),
                                            "--concurrency",
                                            std::to_string(threads)};
    if (options_.pipeline == Pipeline::kThrottled) {
      worker_args.insert(worker_args.end(), {"--queue", "default,push"});
    }
    if (!options_.tls_cert_file.empty()) {
      worker_args.push_back("--tls");
      if (!options_.ca_file.empty())
        worker_args.insert(worker_args.end(), {"--ca", options_.ca_file});
    }
    auto worker = ChildProcess::Spawn(
        worker_args, (rig_.dir / ("worker-" + std::to_string(i) + ".log")).string(), true);
    if (!worker.ok()) return worker.status();
    node.worker = std::move(*worker);
    node.reader =
        std::thread([this, fd = node.worker->stdout_fd()] { records_.ReadWorkerLines(fd); });
    auto deadline = Clock::now() + kWorkerReadyTimeout;
    for (;;) {
      auto info = Info(i);
      if (info.ok() && (*info)["server"].value("workers", 0) >= 1) break;
      if (node.worker->Poll() || Clock::now() > deadline) {
        return Status::Unavailable("the timeline worker of node " + std::to_string(i) +
                                   " did not connect\nworker log:\n" + node.worker->StderrTail());
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    return Status::Ok();
  }

  // How the load generator and the INFO reader connect to node `i`'s server.
  FaktoryConnectOptions ClientOptions(size_t i) const {
    FaktoryConnectOptions co;
    co.host = "127.0.0.1";
    co.port = rig_.nodes[i].fwp_port;
    co.password = Password();
    co.tls = !options_.tls_cert_file.empty();
    co.ca_file = options_.ca_file;
    return co;
  }

  // INFO of node `i` (main thread).
  Result<nlohmann::json> Info(size_t i = 0) { return InfoDocument(*info_clients_[i]); }

  // Paces pushes at `rate` per second from t0 for the duration, job i through node i % nodes;
  // `make_job(i, now_us)` returns the job's JSON. Stops at the first PUSH error (kept in
  // records_).
  void Pace(double rate, const std::function<std::string(int64_t, int64_t)>& make_job) {
    std::vector<std::unique_ptr<FaktoryClient>> clients;
    for (size_t n = 0; n < rig_.nodes.size(); ++n) {
      auto client = FaktoryClient::Connect(ClientOptions(n));
      if (!client.ok()) {
        records_.SetLoadError(client.status());
        return;
      }
      clients.push_back(std::move(*client));
    }
    records_.Pace(rate, options_.duration_s, result_.t0_us, [&](int64_t i) {
      return clients[static_cast<size_t>(i) % clients.size()]->Push(make_job(i, SteadyMicros()));
    });
    for (auto& client : clients) client->End();
  }

  // The Web Push job number `i`, pushed at `now`, to the faulty host when `bad`: a webpush job
  // for bulkhead to deliver, or Mastodon's push_notification job for the app's worker threads.
  std::string WebPushJob(int64_t i, int64_t now, bool bad) {
    uint16_t port = bad ? rig_.faulty->port() : rig_.healthy->port();
    std::string endpoint = "http://127.0.0.1:" + std::to_string(port) + "/push/" +
                           std::to_string(i) + "/" + std::to_string(now);
    std::string payload = "{\"title\":\"replay\",\"seq\":" + std::to_string(i) + "}";
    if (options_.pipeline != Pipeline::kBulkhead) {
      // Mastodon's Web::PushNotificationWorker: retry 5, run by the app's worker threads; with
      // kThrottled in its own throttled queue.
      return nlohmann::json{
          {"jid", RandomHex(12)},
          {"jobtype", "push_notification"},
          {"queue", options_.pipeline == Pipeline::kThrottled ? "push" : "default"},
          {"retry", 5},
          {"args", nlohmann::json::array({{{"endpoint", endpoint}, {"payload", payload}}})}}
          .dump();
    }
    nlohmann::json args = {
        {"subscription",
         {{"endpoint", endpoint}, {"keys", {{"p256dh", keys_.first}, {"auth", keys_.second}}}}},
        {"payload", payload},
        {"urgency", "normal"}};
    return nlohmann::json{{"jid", RandomHex(12)},
                          {"jobtype", "webpush"},
                          {"queue", "default"},  // the queue the timeline worker serves
                          {"args", nlohmann::json::array({args})}}
        .dump();
  }

  Status Load() {
    result_.t0_us = SteadyMicros() + 100'000;
    std::mt19937_64 cpu_rng(42);
    std::thread timeline([&] {
      Pace(options_.timeline_per_s, [&](int64_t, int64_t now) {
        int64_t cpu = std::uniform_int_distribution<int64_t>(1000, 2000)(cpu_rng);
        nlohmann::json job = {{"jid", RandomHex(12)},
                              {"jobtype", "timeline"},
                              {"queue", "default"},
                              {"args", {now, cpu}}};
        std::lock_guard lock(records_.mu);
        records_.timeline_created.push_back(now);
        return job.dump();
      });
    });
    std::thread webpush([&] {
      Pace(options_.webpush_per_s, [&](int64_t i, int64_t now) {
        // Exactly bad_fraction of the jobs, spread evenly: job i is bad when floor((i+1)f) moves.
        double f = options_.bad_fraction;
        bool bad =
            std::floor(static_cast<double>(i + 1) * f) > std::floor(static_cast<double>(i) * f);
        std::string job = WebPushJob(i, now, bad);
        std::lock_guard lock(records_.mu);
        if (bad) {
          ++records_.faulty_pushed;
        } else {
          records_.healthy_pushed[i] = now;
        }
        return job;
      });
    });

    // Sample once a second while the load runs.
    records_.SampleEachSecond(
        options_.duration_s, result_.t0_us, [&] { return Sample(); }, [&] { Progress(false); });
    timeline.join();
    webpush.join();
    if (options_.progress) Progress(true);
    if (Status e = records_.LoadError(); !e.ok()) {
      return Status::Unavailable("the load stopped: " + e.message() + "\nserver log:\n" +
                                 rig_.nodes[0].server->StderrTail());
    }
    return Status::Ok();
  }

  Status Sample() {
    auto info = Info();
    if (!info.ok()) return info.status();
    ServerSample s;
    s.t_s = static_cast<double>(SteadyMicros() - result_.t0_us) / 1e6;
    const auto& sets = (*info)["faktory"]["sets"];
    s.retry_set = sets.value("retries", int64_t{0});
    s.dead_set = sets.value("dead", int64_t{0});
    auto latency = info_clients_[0]->QueueLatency({"default"});
    if (!latency.ok()) return latency.status();
    auto lat = nlohmann::json::parse(*latency, nullptr, false);
    if (lat.is_object()) s.queue_latency_ms = lat.value("default", 0.0) * 1000.0;
    if (options_.pipeline != Pipeline::kBulkhead) {
      // Only push requests fail here (timeline jobs never do), and only the faulty host's.
      s.faulty_failures = (*info)["faktory"].value("total_failures", int64_t{0});
    }
    if (options_.pipeline == Pipeline::kBulkhead) {
      // Each node has its own compartments: parked jobs and failures add up; the breaker is
      // shared (the first node's is shown).
      for (size_t n = 0; n < rig_.nodes.size(); ++n) {
        auto node_info = n == 0 ? info : Info(n);
        if (!node_info.ok()) return node_info.status();
        AddHostFigures(*node_info, faulty_host_, s);
      }
    }
    records_.AddSample(s);
    return Status::Ok();
  }

  void Progress(bool final) {
    if (!options_.progress) return;
    records_.Progress(err_, result_.name, options_.duration_s, rig_.healthy->Arrivals().size(),
                      final);
  }

  // Waits (bounded) for timeline jobs and healthy deliveries still under way, then takes a last
  // sample.
  void Drain() {
    records_.WaitDrained(*rig_.healthy, kDrainTimeout);
    (void)Sample();
  }

  void Collect() { CollectScenario(records_, *rig_.healthy, *rig_.faulty, result_); }

  const ReplayOptions& options_;
  const Fault fault_;
  std::ostream& err_;
  ScenarioRecords records_;  // what the load and the workers record; outlives rig_'s readers
  Rig rig_;
  std::vector<std::unique_ptr<FaktoryClient>> info_clients_;  // one per node, main thread only
  std::string redis_namespace_;                               // on a Redis store
  std::string faulty_host_;
  std::pair<std::string, std::string> keys_;

  ScenarioResult result_;
};

}  // namespace

Result<ScenarioResult> RunScenario(const ReplayOptions& options, Fault fault, std::string name,
                                   std::ostream& err) {
  return Scenario(options, fault, std::move(name), err).Run();
}

}  // namespace bulkhead
