// bench_push_rtt: plain PUSH, one per round trip, on one connection (no pipelining, no PUSHB) —
// what a producer that calls `client.push(job)` in a loop does. Each PUSH is answered only once
// its job is durable, so this measures the latency of one commit per round trip.
//
//   bench_push_rtt [--jobs N] [--warmup W] [--rounds R] [--server PATH] [--no-power]
//
// In one run, each against a fresh `bulkhead serve` (default: the `bulkhead` binary beside this
// one) on free loopback ports:
//   memory   the memory: store (no durability): the in-run baseline, network + event loop only
//   sqlite   the SQLite store, durability = "process" (WAL, synchronous=NORMAL: no fsync per
//            commit; a lone PUSH is answered once the event loop has copied it into the redo log)
//   power    the SQLite store, durability = "power" (synchronous=FULL: an fsync per commit, on the
//            writer thread)
// For each: W warm-up PUSHes, then N timed ones; pushes per second, round-trip percentiles, and
// where the server spent its CPU per PUSH, by thread (from /proc/PID/task/*/stat; the SQLite
// writer thread is "bulkhead-sqlite") with the voluntary context switches per PUSH (each is a
// thread going to sleep: a hand-off). --rounds R (default 3) runs them all R times, the order
// reversed every other round; the last lines are the median of the rounds' ratios against memory
// (each round's listed) and each store's median rate.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bulkhead/client/faktory_client.h"

namespace bulkhead {
namespace {

using SteadyClock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// CPU time (user + system, seconds) and voluntary context switches of each thread of `pid`,
// by thread name.
struct ThreadUsage {
  double cpu_seconds = 0;
  int64_t voluntary_switches = 0;
};
std::map<std::string, ThreadUsage> ThreadsOf(pid_t pid) {
  std::map<std::string, ThreadUsage> out;
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::string stat = ReadFile(task.path() / "stat");
    size_t open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::string name = stat.substr(open + 1, close - open - 1);
    std::istringstream rest(stat.substr(close + 2));
    std::string field;
    std::vector<std::string> fields;
    while (rest >> field) fields.push_back(field);
    if (fields.size() < 13) continue;
    // After the name: state(0) ... utime(11) stime(12), in clock ticks.
    ThreadUsage& u = out[name];
    u.cpu_seconds += (std::stod(fields[11]) + std::stod(fields[12])) / ticks;
    std::istringstream status(ReadFile(task.path() / "status"));
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
        u.voluntary_switches += std::stoll(line.substr(24));
      }
    }
  }
  return out;
}

// A `bulkhead serve` child process.
class ServerProcess {
 public:
  ~ServerProcess() { Stop(); }

  Status Start(const std::string& binary, const std::string& store, const std::string& durability,
               const std::string& dir) {
    port_ = FreeLoopbackPort();
    int http_port = FreeLoopbackPort();
    if (port_ <= 0 || http_port <= 0) return Status::Unavailable("no free loopback port");
    std::string log_path = dir + "/server.log";
    std::string config_path = dir + "/bulkhead.toml";
    std::ofstream(config_path) << "durability = \"" << durability << "\"\n";
    fs::create_directories(dir + "/data");
    std::vector<std::string> args = {binary,       "serve",
                                     "--config",   config_path,
                                     "--listen",   "127.0.0.1:" + std::to_string(port_),
                                     "--http",     "127.0.0.1:" + std::to_string(http_port),
                                     "--store",    store,
                                     "--data-dir", dir + "/data"};
    pid_ = fork();
    if (pid_ < 0) return Status::Unavailable("fork failed");
    if (pid_ == 0) {
      int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log >= 0) {
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
      }
      unsetenv("BULKHEAD_PASSWORD");
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    auto start = SteadyClock::now();
    while (SecondsSince(start) < 30) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return Status::Unavailable("server exited during startup; its log:\n" + ReadFile(log_path));
      }
      FaktoryConnectOptions options;
      options.port = port_;
      options.timeout = std::chrono::milliseconds(1000);
      if (FaktoryClient::Connect(options).ok()) return Status::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Status::Unavailable("server not ready within 30 s; its log:\n" + ReadFile(log_path));
  }

  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  pid_t pid() const { return pid_; }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

struct RunResult {
  std::string label;
  double pushes_per_second = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0;
  std::map<std::string, ThreadUsage> per_push;  // server threads: CPU µs and switches per PUSH
};

double Percentile(std::vector<double>& v, double p) {
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(i), v.end());
  return v[i];
}

Result<RunResult> RunOne(const std::string& label, const std::string& binary,
                         const std::string& store, const std::string& durability,
                         const std::string& dir, int64_t jobs, int64_t warmup) {
  ServerProcess proc;
  Status started = proc.Start(binary, store, durability, dir);
  if (!started.ok()) return started;
  FaktoryConnectOptions options;
  options.port = proc.port();
  auto client = FaktoryClient::Connect(options);
  if (!client.ok()) return client.status();
  auto job = [&](int64_t i) {
    char jid[32];
    std::snprintf(jid, sizeof(jid), "rtt-%s-%010lld", label.c_str(), static_cast<long long>(i));
    return std::string(R"({"jid":")") + jid + R"(","jobtype":"noop","queue":"rtt","args":[]})";
  };
  for (int64_t i = 0; i < warmup; ++i) {
    Status s = (*client)->Push(job(-1 - i));
    if (!s.ok()) return s;
  }
  std::vector<double> rtt_us;
  rtt_us.reserve(static_cast<size_t>(jobs));
  auto before = ThreadsOf(proc.pid());
  auto start = SteadyClock::now();
  for (int64_t i = 0; i < jobs; ++i) {
    auto t0 = SteadyClock::now();
    Status s = (*client)->Push(job(i));
    if (!s.ok()) return Status::Unavailable("PUSH " + std::to_string(i) + ": " + s.ToString());
    rtt_us.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - t0).count());
  }
  double seconds = SecondsSince(start);
  auto after = ThreadsOf(proc.pid());
  (*client)->End();
  RunResult r;
  r.label = label;
  r.pushes_per_second = static_cast<double>(jobs) / seconds;
  r.p50_us = Percentile(rtt_us, 0.50);
  r.p90_us = Percentile(rtt_us, 0.90);
  r.p99_us = Percentile(rtt_us, 0.99);
  for (const auto& [name, a] : after) {
    ThreadUsage b = before.count(name) ? before[name] : ThreadUsage{};
    ThreadUsage d;
    d.cpu_seconds = (a.cpu_seconds - b.cpu_seconds) / static_cast<double>(jobs) * 1e6;  // µs
    d.voluntary_switches = a.voluntary_switches - b.voluntary_switches;
    if (d.cpu_seconds > 0.05 || d.voluntary_switches > jobs / 10) r.per_push[name] = d;
  }
  return r;
}

// A store to measure: its label, its URL scheme (memory or sqlite: a new database file per run)
// and durability.
struct Config {
  std::string label, scheme, durability;
};

void PrintRun(const Config& c, const RunResult& r, int64_t jobs) {
  std::printf(
      "%-6s store=%s durability=%s: %.0f pushes/s; round trip p50 %.1f us, p90 %.1f us, "
      "p99 %.1f us\n",
      c.label.c_str(), c.scheme.c_str(), c.label == "memory" ? "-" : c.durability.c_str(),
      r.pushes_per_second, r.p50_us, r.p90_us, r.p99_us);
  for (const auto& [name, u] : r.per_push) {
    std::printf("         server thread %-16s %6.1f us CPU and %.2f sleeps per PUSH\n",
                name.c_str(), u.cpu_seconds,
                static_cast<double>(u.voluntary_switches) / static_cast<double>(jobs));
  }
  std::fflush(stdout);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Each round runs every config on a fresh server, the order reversed every other round, so a
// machine whose speed drifts during the run weighs on both sides of a round's ratio alike.
// Returns the results by round, each in configs' order (a failed run leaves the round out).
std::vector<std::vector<RunResult>> RunRounds(const std::vector<Config>& configs,
                                              const std::string& server, const std::string& dir,
                                              int rounds, int64_t jobs, int64_t warmup, int& rc) {
  std::vector<std::vector<RunResult>> out;
  for (int round = 1; round <= rounds; ++round) {
    std::printf("--- round %d of %d\n", round, rounds);
    std::vector<RunResult> results(configs.size());
    bool complete = true;
    for (size_t k = 0; k < configs.size(); ++k) {
      size_t i = round % 2 == 1 ? k : configs.size() - 1 - k;
      const Config& c = configs[i];
      std::string sub = dir + "/r" + std::to_string(round) + "-" + c.label;
      fs::create_directories(sub);
      std::string store = c.scheme == "sqlite" ? "sqlite:" + sub + "/bench.db" : c.scheme + ":";
      auto r = RunOne(c.label, server, store, c.durability, sub, jobs, warmup);
      fs::remove_all(sub);
      if (!r.ok()) {
        std::cerr << "bench_push_rtt: " << c.label << ": " << r.status().ToString() << "\n";
        rc = 1;
        complete = false;
        continue;
      }
      PrintRun(c, *r, jobs);
      results[i] = *r;
    }
    if (complete) out.push_back(std::move(results));
  }
  return out;
}

// Per config: each round's ratio against memory (configs[0]), their median, and the median rate.
void PrintSummary(const std::vector<Config>& configs,
                  const std::vector<std::vector<RunResult>>& rounds) {
  if (rounds.empty()) return;
  for (size_t i = 1; i < configs.size(); ++i) {
    std::vector<double> ratios, p50_extra;
    std::string each;
    for (const auto& round : rounds) {
      ratios.push_back(round[i].pushes_per_second / round[0].pushes_per_second);
      p50_extra.push_back(round[i].p50_us - round[0].p50_us);
      char buf[16];
      std::snprintf(buf, sizeof(buf), "%s%.2f", each.empty() ? "" : " ", ratios.back());
      each += buf;
    }
    std::printf("ratio %s/memory %.2f (median of %zu rounds: %s; round trip p50 %+.1f us)\n",
                configs[i].label.c_str(), Median(ratios), rounds.size(), each.c_str(),
                Median(p50_extra));
  }
  for (size_t i = 0; i < configs.size(); ++i) {
    std::vector<double> rates;
    for (const auto& round : rounds) rates.push_back(round[i].pushes_per_second);
    std::printf("pushes_per_second %.0f store=%s\n", Median(rates), configs[i].label.c_str());
  }
}

int Run(int argc, char** argv) {
  CLI::App app{"bench_push_rtt: one PUSH per round trip on one connection, memory vs SQLite"};
  int64_t jobs = 20'000;
  int64_t warmup = 1'000;
  int rounds = 3;
  bool no_power = false;
  std::string server;
  app.add_option("--jobs", jobs, "timed PUSHes per store and round")
      ->check(CLI::Range(int64_t{100}, int64_t{10'000'000}));
  app.add_option("--warmup", warmup, "untimed PUSHes first")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000}));
  app.add_option("--rounds", rounds, "rounds, each running every store once")
      ->check(CLI::Range(1, 100));
  app.add_flag("--no-power", no_power, "skip durability = \"power\" (an fsync per PUSH)");
  app.add_option("--server", server, "path of the bulkhead binary (default: beside this one)");
  CLI11_PARSE(app, argc, argv);
  if (server.empty()) {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    server = (ec ? fs::path(argv[0]).parent_path() : self.parent_path()) / "bulkhead";
  }
  if (access(server.c_str(), X_OK) != 0) {
    std::cerr << "bench_push_rtt: server binary " << server
              << " is not executable (use --server)\n";
    return 2;
  }
  char tmpl[] = "/tmp/bench_push_rtt.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::perror("mkdtemp");
    return 2;
  }
  std::string dir = tmpl;
  std::printf(
      "bench_push_rtt: server=%s jobs=%lld warmup=%lld rounds=%d, one connection, one PUSH per "
      "round trip; data in %s\n",
      server.c_str(), static_cast<long long>(jobs), static_cast<long long>(warmup), rounds,
      dir.c_str());
  std::vector<Config> configs = {{"memory", "memory", "process"}, {"sqlite", "sqlite", "process"}};
  if (!no_power) configs.push_back({"power", "sqlite", "power"});
  int rc = 0;
  auto results = RunRounds(configs, server, dir, rounds, jobs, warmup, rc);
  fs::remove_all(dir);
  PrintSummary(configs, results);
  return rc;
}

}  // namespace
}  // namespace bulkhead

int main(int argc, char** argv) { return bulkhead::Run(argc, argv); }
