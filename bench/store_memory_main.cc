// store_memory: what a queued job costs the embedded SQLite store — RAM (RSS growth per job), disk
// bytes per job, and the time to reopen the store with them all queued (restart to serving).
//
//   store_memory [--jobs N] [--dir DIR] [--arg-bytes B] [--open-only]
//
// Pushes N Mastodon-like push jobs (a Web::PushNotificationWorker job of 134 bytes of JSON
// with the default --arg-bytes), one store call each, waits until every one is durable, and prints
// one line of JSON: jobs, json_bytes (mean payload), rss_bytes_per_job (RSS after minus before,
// per job), disk_bytes_per_job (database + WAL), open_s (Close, then a new store's Open until it
// serves), rss_after_open_per_job (RSS of a fresh process after opening: see --open-only) and the
// FETCH of the first job after the reopen. bench/run.d/19-store-memory.sh runs it beside a
// redis-server holding the same JSON in Sidekiq's layout.
#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>

#include "bulkhead/store/store.h"

namespace bulkhead {
namespace {

using SteadyClock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// The event loop of this tool: closures posted by the store's writer thread, run by main.
class Loop {
 public:
  Store::Poster poster() {
    return [this](std::function<void()> fn) {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(fn));
      cv_.notify_one();
    };
  }
  // Runs posted closures until `done` holds.
  void RunUntil(const std::function<bool()>& done) {
    while (!done()) {
      std::function<void()> fn;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty(); });
        fn = std::move(queue_.front());
        queue_.pop_front();
      }
      fn();
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
};

// Bytes malloc has handed out and not got back (RSS less the allocator's free pages).
int64_t HeapInUse() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

int64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

std::string Hex24(int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%024llx", static_cast<unsigned long long>(i * 2654435761ULL));
  return buf;
}

JobRecord PushJob(int64_t i, int arg_bytes) {
  JobRecord j;
  j.jid = Hex24(i);
  j.queue = "push";
  j.jobtype = "Web::PushNotificationWorker";
  std::string args = "[" + std::to_string(100000 + i % 900000) + ",\"";
  args += std::string(std::max(0, arg_bytes - 44), 'x');
  args += "\"]";
  j.payload = R"({"jid":")" + j.jid + R"(","jobtype":"Web::PushNotificationWorker","args":)" +
              args + R"(,"queue":"push"})";
  return j;
}

int64_t DiskBytes(const std::string& path) {
  int64_t n = 0;
  for (const char* suffix : {"", "-wal"}) {
    std::error_code ec;
    auto size = fs::file_size(path + suffix, ec);
    if (!ec) n += static_cast<int64_t>(size);
  }
  return n;
}

// Times the opening of the store a run left in `dir` (for profiling the restart).
int OpenOnly(const std::string& dir) {
  Loop loop;
  auto start = SteadyClock::now();
  auto store = OpenStoreFromUrl("sqlite:" + dir + "/store_memory.db", loop.poster());
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  std::printf("{\"open_s\":%.3f}\n",
              std::chrono::duration<double>(SteadyClock::now() - start).count());
  (*store)->Close();
  return 0;
}

int Run(int64_t jobs, const std::string& dir, int arg_bytes) {
  fs::create_directories(dir);
  std::string path = dir + "/store_memory.db";
  for (const char* suffix : {"", "-wal", "-shm", "-commits"}) fs::remove(path + suffix);
  Loop loop;
  auto store = OpenStoreFromUrl("sqlite:" + path, loop.poster());
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  malloc_trim(0);
  int64_t rss_before = RssBytes();
  int64_t heap_before = HeapInUse();
  int64_t json_bytes = 0, durable = 0, failed = 0;
  const int64_t window = 10000;  // pushes in flight, as many connections' worth
  for (int64_t i = 0; i < jobs; ++i) {
    JobRecord job = PushJob(i, arg_bytes);
    json_bytes += static_cast<int64_t>(job.payload.size());
    (*store)->Push(std::move(job), [&](Status s) { ++(s.ok() ? durable : failed); });
    if (i - durable - failed >= window) {
      loop.RunUntil([&] { return i - durable - failed < window / 2; });
    }
  }
  loop.RunUntil([&] { return durable + failed == jobs; });
  if (failed > 0) {
    std::fprintf(stderr, "%lld pushes failed\n", static_cast<long long>(failed));
    return 1;
  }
  malloc_trim(0);
  int64_t rss_after = RssBytes();
  int64_t heap_after = HeapInUse();
  (*store)->Close();
  store->reset();
  int64_t disk = DiskBytes(path);
  malloc_trim(0);
  int64_t rss_closed = RssBytes();
  int64_t heap_closed = HeapInUse();
  auto start = SteadyClock::now();
  auto reopened = OpenStoreFromUrl("sqlite:" + path, loop.poster());
  if (!reopened.ok()) {
    std::fprintf(stderr, "reopen: %s\n", reopened.status().ToString().c_str());
    return 1;
  }
  double open_s = std::chrono::duration<double>(SteadyClock::now() - start).count();
  bool fetched = false;
  std::string first;
  (*reopened)->Fetch({"push"}, std::chrono::system_clock::now(),
                     [&](Result<std::optional<JobRecord>> r) {
                       if (r.ok() && *r) first = (*r)->payload;
                       fetched = true;
                     });
  loop.RunUntil([&] { return fetched; });
  double serving_s = std::chrono::duration<double>(SteadyClock::now() - start).count();
  malloc_trim(0);
  int64_t rss_reopened = RssBytes();
  int64_t heap_reopened = HeapInUse();
  std::printf(
      "{\"jobs\":%lld,\"json_bytes\":%.1f,\"rss_bytes_per_job\":%.1f,"
      "\"heap_bytes_per_job\":%.1f,\"rss_after_open_per_job\":%.1f,"
      "\"heap_after_open_per_job\":%.1f,\"disk_bytes_per_job\":%.1f,\"open_s\":%.3f,"
      "\"first_fetch_s\":%.3f,\"first_fetch_ok\":%s}\n",
      static_cast<long long>(jobs), double(json_bytes) / jobs,
      double(rss_after - rss_before) / jobs, double(heap_after - heap_before) / jobs,
      double(rss_reopened - rss_closed) / jobs, double(heap_reopened - heap_closed) / jobs,
      double(disk) / jobs, open_s, serving_s, first.empty() ? "false" : "true");
  (*reopened)->Close();
  return 0;
}

}  // namespace
}  // namespace bulkhead

int main(int argc, char** argv) {
  CLI::App app{"RAM, disk and restart time per queued job of the sqlite: store"};
  int64_t jobs = 300000;
  std::string dir = "/tmp/bulkhead-store-memory";
  int arg_bytes = 70;
  app.add_option("--jobs", jobs, "jobs to push and leave queued");
  app.add_option("--dir", dir, "directory for the database (emptied of it first)");
  app.add_option("--arg-bytes", arg_bytes, "bytes of the job's args (70 gives 134-byte JSON)");
  bool open_only = false;
  app.add_flag("--open-only", open_only, "only time opening the store a run left in --dir");
  CLI11_PARSE(app, argc, argv);
  if (open_only) return bulkhead::OpenOnly(dir);
  return bulkhead::Run(jobs, dir, arg_bytes);
}
