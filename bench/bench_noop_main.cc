// bench_noop: end-to-end throughput of no-op jobs through a real `bulkhead serve` over real
// loopback sockets.
//
//   bench_noop [--store URL] [--jobs N] [--connections C] [--pipeline P] [--server PATH]
//              [--nodes K] [--arg-bytes B] [--push-only]
//
// 1. Starts `bulkhead serve` (default: the `bulkhead` binary beside this one) on free loopback
//    ports, with the store given (default sqlite:<temp dir>/bench.db; memory: works too).
//    --nodes K starts K such processes on the same store URL (a shared store: redis://; each
//    node has its own ports and data dir) and connection i talks to node i % K.
// 2. Push phase: N no-op jobs as PUSHB batches, spread over C connections in parallel. Each job's
//    args hold one string of B bytes (--arg-bytes, default 0: `"args":[]`).
//    --push-only stops here: the jobs stay queued (for measuring what they cost in the store),
//    and the last line is `push_jobs_per_second <N> store=<name> job_json_bytes=<size>`.
// 3. Fetch+ack phase: C connections, each a loop until every job was fetched:
//      --pipeline 1: FETCH, wait for the job, ACK, wait for +OK (two round trips per job).
//      --pipeline P > 1: keeps P FETCHes in flight per connection; each write carries the ACKs of
//      the previous batch followed by the next P FETCHes, so a job costs 2/P round trips. The
//      server still handles every command one at a time and in order.
//    The connections never ask for more jobs than were pushed, so no FETCH waits on an empty
//    queue.
// 4. Verifies that every job was fetched exactly once and acked exactly once (+OK), reads INFO,
//    stops the server with SIGTERM.
// The last line of the output is `jobs_per_second <N> store=<name> nodes=<K>`, where N = jobs /
// (push time + fetch+ack time), both phases measured from the first request to the last reply.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bulkhead/client/faktory_client.h"

namespace bulkhead {
namespace {

using SteadyClock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr const char* kQueue = "bench";
constexpr const char* kJidPrefix = "bench-";

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

std::string Jid(int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s%010lld", kJidPrefix, static_cast<long long>(i));
  return buf;
}

// Index of a job from its JSON (the jid written by Jid()); -1 when absent or foreign.
int64_t JobIndex(const std::string& job_json, std::string* jid_out) {
  size_t key = job_json.find("\"jid\"");
  if (key == std::string::npos) return -1;
  size_t open = job_json.find('"', job_json.find(':', key + 5));
  if (open == std::string::npos) return -1;
  size_t close = job_json.find('"', open + 1);
  if (close == std::string::npos) return -1;
  *jid_out = job_json.substr(open + 1, close - open - 1);
  if (jid_out->rfind(kJidPrefix, 0) != 0) return -1;
  char* end = nullptr;
  long long v = std::strtoll(jid_out->c_str() + std::strlen(kJidPrefix), &end, 10);
  if (*end != '\0') return -1;
  return v;
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

std::string TailOfFile(const std::string& path, size_t max_bytes = 4000) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max_bytes ? "..." + s.substr(s.size() - max_bytes) : s;
}

// A `bulkhead serve` child process. Not thread-safe; owned by main.
class ServerProcess {
 public:
  ~ServerProcess() { Stop(); }

  // `dir` is this process's own: its log and data dir go there.
  Status Start(const std::string& binary, const std::string& store, const std::string& dir) {
    port_ = FreeLoopbackPort();
    int http_port = FreeLoopbackPort();
    if (port_ <= 0 || http_port <= 0) return Status::Unavailable("no free loopback port");
    log_path_ = dir + "/server.log";
    std::string data_dir = dir + "/data";
    fs::create_directories(data_dir);
    std::vector<std::string> args = {binary,       "serve",
                                     "--listen",   "127.0.0.1:" + std::to_string(port_),
                                     "--http",     "127.0.0.1:" + std::to_string(http_port),
                                     "--store",    store,
                                     "--data-dir", data_dir};
    pid_ = fork();
    if (pid_ < 0) return Status::Unavailable("fork failed");
    if (pid_ == 0) {
      int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log >= 0) {
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
      }
      unsetenv("BULKHEAD_PASSWORD");
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      std::perror("execv");
      _exit(127);
    }
    // Ready when a full HELLO handshake succeeds; bounded at 30 s.
    auto start = SteadyClock::now();
    while (SecondsSince(start) < 30) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return Status::Unavailable("server exited during startup (status " +
                                   std::to_string(status) + "); its log:\n" +
                                   TailOfFile(log_path_));
      }
      FaktoryConnectOptions options;
      options.port = port_;
      options.timeout = std::chrono::milliseconds(1000);
      if (FaktoryClient::Connect(options).ok()) return Status::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Status::Unavailable("server not ready within 30 s; its log:\n" + TailOfFile(log_path_));
  }

  // SIGTERM, then SIGKILL after 30 s. Returns a description of how it ended.
  std::string Stop() {
    if (pid_ <= 0) return "not running";
    kill(pid_, SIGTERM);
    auto start = SteadyClock::now();
    int status = 0;
    while (true) {
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (SecondsSince(start) > 30) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = -1;
        return "did not stop within 30 s of SIGTERM; killed";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
    char buf[128];
    if (WIFEXITED(status)) {
      std::snprintf(buf, sizeof(buf), "exited %d after SIGTERM in %.2f s", WEXITSTATUS(status),
                    SecondsSince(start));
    } else {
      std::snprintf(buf, sizeof(buf), "ended by signal %d", WTERMSIG(status));
    }
    return buf;
  }

  int port() const { return port_; }
  const std::string& log_path() const { return log_path_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_path_;
};

struct Shared {
  int64_t jobs = 0;
  std::atomic<int64_t> unclaimed{0};  // FETCHes still to be sent (one per job)
  std::vector<std::atomic<uint32_t>> fetched;
  std::vector<std::atomic<uint32_t>> acked;
  std::atomic<int64_t> nulls{0};
  std::mutex error_mu;
  std::string first_error;  // guarded by error_mu

  void Fail(const std::string& e) {
    std::lock_guard<std::mutex> lock(error_mu);
    if (first_error.empty()) first_error = e;
  }
  bool failed() {
    std::lock_guard<std::mutex> lock(error_mu);
    return !first_error.empty();
  }
};

int64_t Claim(Shared& s, int64_t want) {
  int64_t cur = s.unclaimed.load();
  while (cur > 0) {
    int64_t take = std::min(cur, want);
    if (s.unclaimed.compare_exchange_weak(cur, cur - take)) return take;
  }
  return 0;
}

// The JSON of job `i`; `arg` (may be empty: no args) is its one argument, already quoted.
std::string JobJson(int64_t i, const std::string& arg) {
  return R"({"jid":")" + Jid(i) + R"(","jobtype":"noop","queue":")" + kQueue + R"(","args":[)" +
         arg + "]}";
}

void PushWorker(int port, Shared& s, int64_t begin, int64_t end, int batch,
                const std::string& arg) {
  auto c = FaktoryClient::Connect("127.0.0.1", port);
  if (!c.ok()) return s.Fail("push connect: " + c.status().ToString());
  for (int64_t i = begin; i < end && !s.failed(); i += batch) {
    std::string body = "[";
    for (int64_t j = i; j < std::min(end, i + batch); ++j) {
      if (j != i) body += ',';
      body += JobJson(j, arg);
    }
    body += ']';
    Result<std::string> r = (*c)->PushBulk(body);
    if (!r.ok()) return s.Fail(r.status().ToString());
    if (*r != "{}") return s.Fail("PUSHB rejected jobs: " + r->substr(0, 500));
  }
  (*c)->End();
}

// Records a FETCH reply; appends the jid to `acks` when it is a job.
bool TakeFetchReply(Shared& s, const FaktoryReply& r,
                    std::vector<std::pair<int64_t, std::string>>* acks) {
  if (r.kind == FaktoryReply::Kind::kNull) {
    s.nulls++;
    s.unclaimed++;  // fetch it again
    return true;
  }
  if (r.kind != FaktoryReply::Kind::kBulk) {
    s.Fail("FETCH: unexpected reply " + r.text);
    return false;
  }
  std::string jid;
  int64_t idx = JobIndex(r.text, &jid);
  if (idx < 0 || idx >= s.jobs) {
    s.Fail("FETCH returned a job that was not pushed: " + r.text.substr(0, 200));
    return false;
  }
  s.fetched[idx]++;
  acks->emplace_back(idx, std::move(jid));
  return true;
}

bool TakeAckReply(Shared& s, const FaktoryReply& r, int64_t idx) {
  if (!r.is_ok()) {
    s.Fail("ACK " + Jid(idx) + ": unexpected reply " + r.text);
    return false;
  }
  s.acked[idx]++;
  return true;
}

void FetchAckWorker(int port, Shared& s, int pipeline, int index) {
  const std::string wid = "bench-" + std::to_string(getpid()) + "-" + std::to_string(index);
  auto c = FaktoryClient::Connect("127.0.0.1", port, "", wid);
  if (!c.ok()) return s.Fail("fetch connect: " + c.status().ToString());
  FaktoryClient& client = **c;
  const std::string fetch_line = std::string("FETCH ") + kQueue + "\r\n";
  std::vector<std::pair<int64_t, std::string>> acks;  // jobs fetched, not yet acked
  std::string out;
  while (!s.failed()) {
    int64_t k = Claim(s, pipeline);
    if (k == 0 && acks.empty()) break;
    out.clear();
    for (const auto& [idx, jid] : acks) out += "ACK {\"jid\":\"" + jid + "\"}\r\n";
    if (pipeline == 1) {
      // Strict request/response: ACK round trip, then FETCH round trip.
      if (!acks.empty()) {
        Status st = client.SendRaw(out);
        if (!st.ok()) return s.Fail(st.ToString());
        Result<FaktoryReply> r = client.ReadReply();
        if (!r.ok()) return s.Fail("ACK: " + r.status().ToString());
        if (!TakeAckReply(s, *r, acks[0].first)) return;
        acks.clear();
      }
      if (k == 0) continue;
      Status st = client.SendRaw(fetch_line);
      if (!st.ok()) return s.Fail(st.ToString());
      Result<FaktoryReply> r = client.ReadReply();
      if (!r.ok()) return s.Fail("FETCH: " + r.status().ToString());
      if (!TakeFetchReply(s, *r, &acks)) return;
      continue;
    }
    for (int64_t i = 0; i < k; ++i) out += fetch_line;
    Status st = client.SendRaw(out);
    if (!st.ok()) return s.Fail(st.ToString());
    std::vector<std::pair<int64_t, std::string>> sent_acks;
    sent_acks.swap(acks);
    for (const auto& [idx, jid] : sent_acks) {
      Result<FaktoryReply> r = client.ReadReply();
      if (!r.ok()) return s.Fail("ACK: " + r.status().ToString());
      if (!TakeAckReply(s, *r, idx)) return;
    }
    for (int64_t i = 0; i < k; ++i) {
      Result<FaktoryReply> r = client.ReadReply();
      if (!r.ok()) return s.Fail("FETCH: " + r.status().ToString());
      if (!TakeFetchReply(s, *r, &acks)) return;
    }
  }
  client.End();
}

double CpuSeconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec +
         u.ru_stime.tv_usec / 1e6;
}

std::string StoreName(const std::string& url) {
  size_t colon = url.find(':');
  return colon == std::string::npos ? url : url.substr(0, colon);
}

int Run(int argc, char** argv) {
  CLI::App app{"bench_noop: no-op jobs end to end through bulkhead serve (push, fetch, ack)"};
  std::string store;
  int64_t jobs = 200'000;
  int connections = 4;
  int pipeline = 32;
  int batch = 1000;
  int nodes = 1;
  int arg_bytes = 0;
  bool push_only = false;
  std::string server;
  app.add_option("--store", store, "store URL (default sqlite:<temp dir>/bench.db; or memory:)");
  app.add_option("--jobs", jobs, "number of jobs")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  app.add_option("--connections", connections, "connections pushing and fetching")
      ->check(CLI::Range(1, 1000));
  app.add_option("--pipeline", pipeline, "FETCHes in flight per connection (1 = no pipelining)")
      ->check(CLI::Range(1, 10'000));
  app.add_option("--batch", batch, "jobs per PUSHB")->check(CLI::Range(1, 100'000));
  app.add_option("--nodes", nodes, "bulkhead serve processes on the same store (shared: redis://)")
      ->check(CLI::Range(1, 64));
  app.add_option("--arg-bytes", arg_bytes, "bytes of the one string argument of each job")
      ->check(CLI::Range(0, 10'000'000));
  app.add_flag("--push-only", push_only, "push, then stop the server(s): the jobs stay queued");
  app.add_option("--server", server, "path of the bulkhead binary (default: beside bench_noop)");
  CLI11_PARSE(app, argc, argv);

  if (server.empty()) {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    server = (ec ? fs::path(argv[0]).parent_path() : self.parent_path()) / "bulkhead";
  }
  if (access(server.c_str(), X_OK) != 0) {
    std::cerr << "bench_noop: server binary " << server << " is not executable (use --server)\n";
    return 2;
  }
  char tmpl[] = "/tmp/bench_noop.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 2;
  }
  std::string dir = tmpl;
  if (store.empty()) store = "sqlite:" + dir + "/bench.db";
  const std::string arg = arg_bytes > 0 ? "\"" + std::string(arg_bytes, 'x') + "\"" : "";
  const size_t job_json_bytes = JobJson(0, arg).size();

  std::printf(
      "bench_noop: server=%s store=%s nodes=%d jobs=%lld connections=%d pipeline=%d batch=%d "
      "job_json_bytes=%zu%s\n",
      server.c_str(), store.c_str(), nodes, static_cast<long long>(jobs), connections, pipeline,
      batch, job_json_bytes, push_only ? " push-only" : "");
  std::fflush(stdout);

  int rc = 0;
  {
    std::vector<std::unique_ptr<ServerProcess>> procs;
    std::vector<int> ports;  // connection i talks to ports[i % nodes]
    for (int n = 0; n < nodes; ++n) {
      std::string node_dir = dir + "/node" + std::to_string(n);
      fs::create_directories(node_dir);
      procs.push_back(std::make_unique<ServerProcess>());
      Status started = procs.back()->Start(server, store, node_dir);
      if (!started.ok()) {
        std::cerr << "bench_noop: node " << n << ": " << started.message() << "\n";
        procs.clear();
        fs::remove_all(dir);
        return 1;
      }
      ports.push_back(procs.back()->port());
    }
    auto port_of = [&ports](int connection) { return ports[connection % ports.size()]; };

    Shared s;
    s.jobs = jobs;
    s.fetched = std::vector<std::atomic<uint32_t>>(jobs);
    s.acked = std::vector<std::atomic<uint32_t>>(jobs);

    // Push phase.
    auto push_start = SteadyClock::now();
    {
      std::vector<std::thread> threads;
      int64_t per = (jobs + connections - 1) / connections;
      for (int i = 0; i < connections; ++i) {
        int64_t b = i * per;
        int64_t e = std::min(jobs, b + per);
        if (b >= e) break;
        threads.emplace_back(PushWorker, port_of(i), std::ref(s), b, e, batch, std::cref(arg));
      }
      for (std::thread& t : threads) t.join();
    }
    double push_s = SecondsSince(push_start);

    // Fetch+ack phase.
    double fetch_s = 0;
    if (!s.failed() && !push_only) {
      s.unclaimed = jobs;
      auto fetch_start = SteadyClock::now();
      std::vector<std::thread> threads;
      for (int i = 0; i < connections; ++i) {
        threads.emplace_back(FetchAckWorker, port_of(i), std::ref(s), pipeline, i);
      }
      for (std::thread& t : threads) t.join();
      fetch_s = SecondsSince(fetch_start);
    }

    // Verification.
    int64_t not_fetched = 0, refetched = 0, not_acked = 0, reacked = 0;
    for (int64_t i = 0; i < jobs; ++i) {
      uint32_t f = s.fetched[i].load(), a = s.acked[i].load();
      not_fetched += f == 0;
      refetched += f > 1;
      not_acked += a == 0;
      reacked += a > 1;
    }
    std::string info_summary = "(INFO unavailable)";
    if (auto c = FaktoryClient::Connect("127.0.0.1", ports[0]); c.ok()) {
      if (Result<std::string> info = (*c)->Info(); info.ok()) {
        nlohmann::json j = nlohmann::json::parse(*info, nullptr, false);
        if (j.is_object() && j.contains("faktory")) {
          const nlohmann::json& f = j["faktory"];
          int64_t left = 0;
          if (f.contains("queues") && f["queues"].contains(kQueue)) {
            left = f["queues"][kQueue].get<int64_t>();
          }
          int64_t working = f.contains("sets") ? f["sets"].value("working", int64_t{-1}) : -1;
          info_summary = "INFO after: queue " + std::string(kQueue) + " size " +
                         std::to_string(left) + ", working " + std::to_string(working) +
                         ", total_processed " + f.value("total_processed", nlohmann::json()).dump();
          if (left != (push_only ? jobs : 0) || working > 0) {
            s.Fail("server still holds jobs after the run: " + info_summary);
          }
        }
      }
    }
    std::string stopped;
    for (size_t n = 0; n < procs.size(); ++n) {
      stopped += (n ? "; " : "") + procs[n]->Stop();
    }

    if (s.failed()) {
      std::cerr << "bench_noop: FAILED: " << s.first_error << "\nserver log tail:\n"
                << TailOfFile(procs[0]->log_path()) << "\n";
      rc = 1;
    } else if (push_only) {
      std::printf("push: %lld jobs in %.3f s = %.0f jobs/s (PUSHB of %d jobs, %d connections)\n",
                  static_cast<long long>(jobs), push_s, jobs / push_s, batch, connections);
      std::printf("left queued: %s\nserver: %s\n", info_summary.c_str(), stopped.c_str());
      std::printf("push_jobs_per_second %.0f store=%s job_json_bytes=%zu\n", jobs / push_s,
                  StoreName(store).c_str(), job_json_bytes);
    } else if (not_fetched || refetched || not_acked || reacked) {
      std::cerr << "bench_noop: FAILED verification: not fetched " << not_fetched
                << ", fetched twice " << refetched << ", not acked " << not_acked
                << ", acked twice " << reacked << "\n";
      rc = 1;
    } else {
      std::printf("push: %lld jobs in %.3f s = %.0f jobs/s (PUSHB of %d jobs, %d connections)\n",
                  static_cast<long long>(jobs), push_s, jobs / push_s, batch, connections);
      if (pipeline == 1) {
        std::printf(
            "fetch+ack: %lld jobs in %.3f s = %.0f jobs/s (%d connections, no pipelining: "
            "FETCH round trip then ACK round trip per job)\n",
            static_cast<long long>(jobs), fetch_s, jobs / fetch_s, connections);
      } else {
        std::printf(
            "fetch+ack: %lld jobs in %.3f s = %.0f jobs/s (%d connections, pipelined: %d "
            "FETCHes in flight per connection, each write = ACKs of the previous batch + "
            "next %d FETCHes)\n",
            static_cast<long long>(jobs), fetch_s, jobs / fetch_s, connections, pipeline, pipeline);
      }
      std::printf("verified: every job fetched once and acked once (+OK); FETCH nulls %lld; %s\n",
                  static_cast<long long>(s.nulls.load()), info_summary.c_str());
      std::printf("server: %s\n", stopped.c_str());
      // Where the CPU went (the servers are this process's only children, reaped by Stop()).
      std::printf("cpu: bench client %.2f s, server%s %.2f s, wall %.2f s\n",
                  CpuSeconds(RUSAGE_SELF), nodes > 1 ? "s (all nodes)" : "",
                  CpuSeconds(RUSAGE_CHILDREN), push_s + fetch_s);
      std::printf("jobs_per_second %.0f store=%s nodes=%d\n", jobs / (push_s + fetch_s),
                  StoreName(store).c_str(), nodes);
    }
  }
  fs::remove_all(dir);
  return rc;
}

}  // namespace
}  // namespace bulkhead

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  return bulkhead::Run(argc, argv);
}
