// transport_bench: deliveries per second to a healthy local HTTPS host, alone and while N
// connections are held open to a host that never answers. The ratio of the two is the isolation
// figure (target >= 0.95): a stuck host must cost sockets and timers, not throughput.
//
// The phases alternate (alone, stuck, alone, stuck, ...: --cycles pairs; the stuck host drops its
// connections between pairs), and the figure is the median of the pairs' ratios, so that a drift
// of the machine over the run (other processes, CPU frequency, memory) does not pass for an effect
// of the stuck connections.
//
// Threads: the event loop (this thread, running CurlTransport), the HTTPS server's thread, and a
// forked child process (one thread) that accepts the stuck connections and never reads them — a
// separate process so that both ends of 10,000 connections do not share one descriptor table.
//
// Usage: transport_bench [--stuck N] [--seconds S] [--rounds R] [--window W] [--cycles C]
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bulkhead/transport/curl_transport.h"
#include "bulkhead/transport/testing/test_certificates.h"
#include "bulkhead/transport/testing/test_server.h"

namespace {

using namespace bulkhead;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Args {
  int stuck = 10'000;
  double seconds = 2.0;
  int rounds = 3;
  int window = 32;
  int cycles = 3;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--stuck")
      a.stuck = std::atoi(argv[i + 1]);
    else if (k == "--seconds")
      a.seconds = std::atof(argv[i + 1]);
    else if (k == "--window")
      a.window = std::atoi(argv[i + 1]);
    else if (k == "--rounds")
      a.rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--cycles")
      a.cycles = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

// Raises the soft descriptor limit to the hard one; returns the soft limit in force.
rlim_t RaiseFdLimit() {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur;
}

int ThreadCount() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

volatile sig_atomic_t g_release = 0;
void OnRelease(int) { g_release = 1; }

// The stuck host: a child process that accepts and holds connections, reporting how many it
// holds through `report_fd` (one int per 100 accepts). SIGUSR1 makes it close every connection
// it holds (the next phase runs alone).
[[noreturn]] void RunStuckHost(int listen_fd, int report_fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  RaiseFdLimit();
  struct sigaction sa {};
  sa.sa_handler = OnRelease;
  sigaction(SIGUSR1, &sa, nullptr);
  std::vector<int> held;
  while (true) {
    if (g_release) {
      g_release = 0;
      for (int fd : held) close(fd);
      held.clear();
    }
    // Wakes at least every 100 ms, so a release signalled just before blocking is not missed.
    pollfd ready{listen_fd, POLLIN, 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    int fd = accept(listen_fd, nullptr, nullptr);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        std::fprintf(stderr, "stuck host: out of descriptors at %zu\n", held.size());
        pause();
      }
      continue;
    }
    held.push_back(fd);
    if (held.size() % 100 == 0) {
      int n = int(held.size());
      (void)!write(report_fd, &n, sizeof(n));
    }
  }
}

class Bench {
 public:
  Bench(boost::asio::io_context& io, CurlTransport& transport, std::string url, int window)
      : io_(io), transport_(transport), url_(std::move(url)), window_(window) {}

  struct Figures {
    double rate = 0;         // deliveries per wall-clock second
    double loop_cpu_us = 0;  // loop-thread CPU per delivery (insensitive to other processes)
  };

  // Runs healthy deliveries with `window` in flight for `seconds`.
  Figures Measure(double seconds) {
    ok_ = 0;
    failed_ = 0;
    running_ = true;
    for (int i = 0; i < window_; ++i) StartOne();
    // Warm-up (connections established), then the measured interval.
    RunFor(milliseconds(500));
    uint64_t ok_before = ok_;
    Clock::time_point start = Clock::now();
    double cpu_start = ThreadCpuSeconds();
    RunFor(milliseconds(int64_t(seconds * 1000)));
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    double cpu = ThreadCpuSeconds() - cpu_start;
    uint64_t done = ok_ - ok_before;
    running_ = false;
    Clock::time_point drain_end = Clock::now() + std::chrono::seconds(10);
    while (outstanding_ > 0 && Clock::now() < drain_end) {
      io_.run_one_for(milliseconds(20));
    }
    if (failed_ > 0)
      std::printf("  healthy failures during measurement: %llu\n",
                  static_cast<unsigned long long>(failed_));
    Figures f;
    f.rate = done / elapsed;
    f.loop_cpu_us = done > 0 ? cpu * 1e6 / double(done) : 0;
    return f;
  }

  static double ThreadCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }

  void RunFor(milliseconds d) {
    Clock::time_point end = Clock::now() + d;
    while (Clock::now() < end) io_.run_one_for(milliseconds(10));
  }

 private:
  void StartOne() {
    HttpRequest r;
    r.method = "POST";
    r.url = url_;
    r.body = std::string(512, 'x');  // about an encrypted push message
    r.headers = {{"Content-Type", "application/octet-stream"}, {"TTL", "60"}};
    r.deadlines.first_byte = milliseconds(5000);
    ++outstanding_;
    transport_.Send(std::move(r), [this](HttpResponse resp) {
      --outstanding_;
      if (resp.ok() && resp.status == 200) {
        ++ok_;
      } else {
        ++failed_;
        if (failed_ <= 5) {
          std::printf("  healthy request failed: %s %s (status %d)\n",
                      TransportErrorName(resp.error), resp.error_message.c_str(), resp.status);
        }
      }
      if (running_) StartOne();
    });
  }

  boost::asio::io_context& io_;
  CurlTransport& transport_;
  const std::string url_;
  const int window_;
  bool running_ = false;
  int outstanding_ = 0;
  uint64_t ok_ = 0;
  uint64_t failed_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Args args = ParseArgs(argc, argv);
  rlim_t limit = RaiseFdLimit();
  // Client side: one socket per stuck connection plus the healthy window and a margin.
  rlim_t needed = rlim_t(args.stuck) + rlim_t(args.window) * 2 + 200;
  if (limit < needed) {
    int fit = int(limit) - args.window * 2 - 200;
    std::printf("descriptor limit %llu too low for %d stuck connections; using %d\n",
                static_cast<unsigned long long>(limit), args.stuck, fit);
    args.stuck = fit;
  }

  // The stuck host is forked before any thread exists.
  int listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listen_fd < 0 || bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd, 4096) != 0 ||
      getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("stuck host listen");
    return 1;
  }
  int stuck_port = ntohs(addr.sin_port);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    std::perror("pipe");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) {
    std::perror("fork");
    return 1;
  }
  if (child == 0) {
    close(report[0]);
    RunStuckHost(listen_fd, report[1]);
  }
  close(listen_fd);
  close(report[1]);
  fcntl(report[0], F_SETFL, O_NONBLOCK);

  int status = 0;
  {
    testing::TestCertificates certs = testing::MakeTestCertificates("transport bench CA");
    testing::TempFile ca(certs.ca_pem);
    testing::TestServer healthy(
        {.tls = true, .cert_pem = certs.cert_pem, .key_pem = certs.key_pem});

    boost::asio::io_context io;
    TransportOptions options;
    options.ssrf.allow_private_targets = true;  // both hosts are on 127.0.0.1
    options.ca_file = ca.path();
    options.max_connections_per_host = 0;  // let the stuck host take every connection it is sent
    options.resolver.threads = 1;          // started only if a name is resolved; URLs are literal
    Result<std::unique_ptr<CurlTransport>> made = CurlTransport::Create(io, options);
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
      kill(child, SIGKILL);
      return 1;
    }
    CurlTransport& transport = **made;
    Bench bench(io, transport, healthy.Url("/echo"), args.window);

    std::printf(
        "transport_bench: healthy HTTPS host, %d in flight, %.1f s per phase; fd limit %llu\n",
        args.window, args.seconds, static_cast<unsigned long long>(limit));
    // Several rounds per phase: other processes on the machine make single rounds noisy. The
    // best round is the least disturbed one; loop CPU per delivery ignores the disturbance.
    auto run_phase = [&](const char* label) {
      std::vector<Bench::Figures> rounds;
      for (int i = 0; i < args.rounds; ++i) {
        rounds.push_back(bench.Measure(args.seconds));
        std::printf("  %-12s round %d: %8.0f deliveries/s, loop CPU %6.1f us/delivery\n", label,
                    i + 1, rounds.back().rate, rounds.back().loop_cpu_us);
      }
      Bench::Figures best;
      for (const Bench::Figures& f : rounds) best.rate = std::max(best.rate, f.rate);
      return best;
    };
    // Holds `stuck` connections open to the host that never answers; false when it could not.
    int stuck_done = 0;
    int stuck_sent = 0;
    auto hold_stuck = [&]() {
      for (int i = 0; i < args.stuck; ++i) {
        HttpRequest r;
        r.url = "http://127.0.0.1:" + std::to_string(stuck_port) + "/inbox";
        r.method = "POST";
        r.body = std::string(512, 'x');
        r.deadlines.connect = milliseconds(60'000);
        r.deadlines.first_byte = milliseconds(0);
        r.deadlines.total = milliseconds(600'000);
        transport.Send(std::move(r), [&](HttpResponse) { ++stuck_done; });
        ++stuck_sent;
      }
      int held = 0;
      Clock::time_point wait_end = Clock::now() + std::chrono::seconds(120);
      Clock::time_point start_hold = Clock::now();
      double cpu_hold = Bench::ThreadCpuSeconds();
      while (held < args.stuck - args.stuck % 100 && Clock::now() < wait_end) {
        io.run_one_for(milliseconds(10));
        int n;
        while (read(report[0], &n, sizeof(n)) == sizeof(n)) held = n;
      }
      std::printf(
          "stuck host holds %d connections (opened in %.1f s, %.1f s of loop CPU); in "
          "flight %zu, sockets %zu\n",
          held, std::chrono::duration<double>(Clock::now() - start_hold).count(),
          Bench::ThreadCpuSeconds() - cpu_hold, transport.InFlight(), transport.OpenSockets());
      return held >= args.stuck - args.stuck % 100;
    };
    // The stuck host drops its connections; waits (bounded) until every stuck request ended.
    auto release_stuck = [&]() {
      kill(child, SIGUSR1);
      Clock::time_point wait_end = Clock::now() + std::chrono::seconds(60);
      while (stuck_done < stuck_sent && Clock::now() < wait_end) io.run_one_for(milliseconds(10));
      int n;
      while (read(report[0], &n, sizeof(n)) == sizeof(n)) {
      }
      return stuck_done == stuck_sent;
    };

    std::vector<double> ratios;
    Bench::Figures best_alone, best_stuck;
    for (int cycle = 1; cycle <= args.cycles && status == 0; ++cycle) {
      Bench::Figures alone = run_phase("alone");
      if (!hold_stuck()) {
        std::printf("FAILED: the stuck host did not get all connections\n");
        status = 1;
        break;
      }
      int done_before = stuck_done;
      Bench::Figures loaded = run_phase("stuck");
      if (stuck_done != done_before) {
        std::printf("FAILED: %d stuck requests ended early\n", stuck_done - done_before);
        status = 1;
      }
      if (cycle < args.cycles && !release_stuck()) {
        std::printf("FAILED: the released stuck requests did not all end\n");
        status = 1;
      }
      double r = alone.rate > 0 ? loaded.rate / alone.rate : 0;
      ratios.push_back(r);
      best_alone.rate = std::max(best_alone.rate, alone.rate);
      best_stuck.rate = std::max(best_stuck.rate, loaded.rate);
      std::printf("cycle %d: alone %.0f/s, with %d stuck %.0f/s: ratio %.3f\n", cycle, alone.rate,
                  args.stuck, loaded.rate, r);
    }
    std::sort(ratios.begin(), ratios.end());
    size_t n = ratios.size();
    double ratio = n == 0 ? 0 : n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    std::printf("alone:                 %10.0f deliveries/s (best round of all cycles)\n",
                best_alone.rate);
    std::printf("with %5d stuck:      %10.0f deliveries/s (best round of all cycles)\n", args.stuck,
                best_stuck.rate);
    std::printf("threads in this process: %d (+1 in the stuck-host process); load average %.1f\n",
                ThreadCount(), load[0]);
    std::printf("ratio per cycle (sorted):");
    for (double r : ratios) std::printf(" %.3f", r);
    std::printf(
        "\nratio (deliveries/s, stuck / alone, median of %zu cycles): %.3f (target >= 0.95)\n",
        ratios.size(), ratio);
    std::printf("transport_ratio %.3f\n", ratio);

    Clock::time_point shutdown_start = Clock::now();
    int pending = stuck_sent - stuck_done;
    transport.Shutdown();
    std::printf("shutdown cancelled %d stuck requests in %.2f s\n",
                pending - (stuck_sent - stuck_done),
                std::chrono::duration<double>(Clock::now() - shutdown_start).count());
    if (stuck_done != stuck_sent) {
      std::printf("FAILED: shutdown left %d of %d stuck requests\n", stuck_sent - stuck_done,
                  pending);
      status = 1;
    }
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return status;
}
