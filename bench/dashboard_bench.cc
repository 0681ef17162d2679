// The dashboard's Dead page against the size of the dead set (the target: "a dead set of 1,000,000
// jobs pages in under 200 ms per page"): GET /dead?offset=N answered by the real Dashboard (engine
// snapshot, the store's List of one page, HTML rendering) on a sqlite: store holding 1,000 or
// 1,000,000 dead jobs, at the first, middle and last page; and a filtered page, whose scan is
// bounded (kMaxScanPerRequest jobs); and the jid search (one Store::FindJob), for a dead job in
// the middle of the set. bench/run.d/50-dashboard.sh prints the ratio 1M / 1k (the in-run
// baseline) and, per size, the middle and last page against the first.
//
// With BULKHEAD_DASHBOARD_QUEUED_STORE=PATH (a sqlite: store file, e.g. the one store_memory
// leaves: millions of queued jobs) and BULKHEAD_DASHBOARD_QUEUED_JID=JID (one of its queued jobs),
// the BM_QueuedStore benchmarks time the Queues page (the overview needs the server's INFO
// source, not built here), and the jid search and job page of that job (its payload read back from
// the file: queue_slot.h) on a copy of it opened once; the time the open took is printed to stderr.
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "bulkhead/dashboard/dashboard.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/rng.h"

namespace bulkhead {
namespace {

// One sqlite: store with `size` dead jobs, an engine and a dashboard on it; built once per size.
struct Fixture {
  explicit Fixture(int64_t size) {
    spdlog::set_level(spdlog::level::off);  // the store's logs would mix into the JSON output
    path = std::filesystem::temp_directory_path() /
           ("bulkhead-dashboard-bench-" + std::to_string(size) + ".db");
    std::filesystem::remove(path);
    std::filesystem::remove(path.string() + "-wal");
    Open();
    int64_t pending = 0;
    for (int64_t i = 0; i < size; ++i) {
      JobRecord j;
      j.jid = "dead-" + std::to_string(i);
      j.queue = i % 10 == 0 ? "rare" : "default";
      j.jobtype = "Mailer";
      j.payload = R"({"jid":")" + j.jid +
                  R"(","jobtype":"Mailer","queue":"default","args":[42,"user@example.com"],)"
                  R"("failure":{"errtype":"SMTPError","message":"connection refused",)"
                  R"("retry_count":25}})";
      j.state = JobState::kScheduled;
      j.score = 2'000'000'000'000'000 + i;
      pending += 2;
      store->Push(j, [&pending](Status) { --pending; });
      j.state = JobState::kDead;
      store->Move(j, TimePoint{}, [&pending](Status) { --pending; });
      if (i % 10'000 == 0) io.poll();
    }
    while (pending > 0) {
      io.restart();
      io.run_one();
    }
    StartDashboard();
  }
  // The store at `existing` as it is (no jobs added); `path` is where it is.
  explicit Fixture(const std::filesystem::path& existing) : path(existing), owned(false) {
    spdlog::set_level(spdlog::level::off);
    auto start = std::chrono::steady_clock::now();
    Open();
    std::fprintf(stderr, "opened %s in %.3f s\n", path.c_str(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    StartDashboard();
  }
  void Open() {
    auto opened = OpenStoreFromUrl("sqlite:" + path.string(), [this](std::function<void()> f) {
      boost::asio::post(io, std::move(f));
    });
    if (!opened.ok()) {
      std::fprintf(stderr, "%s\n", opened.status().ToString().c_str());
      std::abort();
    }
    store = std::move(*opened);
  }
  void StartDashboard() {
    engine = std::make_unique<Engine>(io, *store, config, SystemClock::Instance(), rng);
    dashboard = std::make_unique<dashboard::Dashboard>(io, *engine, dashboard::DashboardOptions{},
                                                       dashboard::DashboardSources{});
  }
  ~Fixture() {
    dashboard.reset();
    engine.reset();
    store->Close();
    if (!owned) return;
    for (const char* suffix : {"", "-wal", "-shm", "-commits"}) {
      std::filesystem::remove(path.string() + suffix);
    }
  }
  // One GET; the page's size in bytes.
  size_t Get(const std::string& query, const std::string& path = "/dead") {
    HttpRequestIn req{.method = "GET", .path = path, .query = query};
    size_t bytes = 0;
    bool answered = false;
    dashboard->Handle(req, [&](HttpResponseOut r) {
      if (r.status != 200) std::abort();
      bytes = r.body.size();
      answered = true;
    });
    io.restart();
    io.poll();
    // A cold job's row is read on the store's thread: its answer is posted back.
    while (!answered) {
      io.restart();
      io.run_one();
    }
    return bytes;
  }

  boost::asio::io_context io;
  std::filesystem::path path;
  bool owned = true;  // made here: removed at the end
  Config config;
  DefaultRng rng;
  std::unique_ptr<Store> store;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<dashboard::Dashboard> dashboard;
};

Fixture& FixtureOf(int64_t size) {
  static std::map<int64_t, std::unique_ptr<Fixture>> fixtures;
  auto& f = fixtures[size];
  if (!f) f = std::make_unique<Fixture>(size);
  return *f;
}

// range(0): dead jobs; range(1): 0 first page, 1 middle, 2 last.
void BM_DeadPage(benchmark::State& state) {
  int64_t size = state.range(0);
  Fixture& f = FixtureOf(size);
  int64_t offset = state.range(1) == 0 ? 0 : state.range(1) == 1 ? size / 2 : size - 25;
  std::string query = "offset=" + std::to_string(offset);
  size_t bytes = 0;
  for (auto _ : state) bytes = f.Get(query);
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_DeadPage)->ArgsProduct({{1'000, 1'000'000}, {0, 1, 2}})->Unit(benchmark::kMillisecond);

// A filter from the middle of the set that matches nothing: the worst case, kMaxScanPerRequest
// jobs read and tested.
void BM_DeadPageFiltered(benchmark::State& state) {
  int64_t size = state.range(0);
  Fixture& f = FixtureOf(size);
  std::string query = "q=no-such-text&offset=" + std::to_string(size / 2);
  for (auto _ : state) f.Get(query);
}
BENCHMARK(BM_DeadPageFiltered)->Arg(1'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// The jid search: one store lookup by jid, whatever the set's size.
void BM_Search(benchmark::State& state) {
  int64_t size = state.range(0);
  Fixture& f = FixtureOf(size);
  std::string query = "jid=dead-" + std::to_string(size / 2);
  size_t bytes = 0;
  for (auto _ : state) bytes = f.Get(query, "/search");
  if (bytes == 0) std::abort();
}
BENCHMARK(BM_Search)->Arg(1'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// The pages of a store of queued jobs (BULKHEAD_DASHBOARD_QUEUED_STORE, see the top): registered
// only when it is set.
const bool kQueuedStoreBenchmarks = [] {
  const char* store = std::getenv("BULKHEAD_DASHBOARD_QUEUED_STORE");
  const char* jid = std::getenv("BULKHEAD_DASHBOARD_QUEUED_JID");
  if (store == nullptr || jid == nullptr) return false;
  static std::unique_ptr<Fixture> fixture;
  static const std::filesystem::path path(store);
  static const std::string job = jid;
  auto page = [](const char* target, std::string query) {
    return [target, query](benchmark::State& state) {
      if (!fixture) fixture = std::make_unique<Fixture>(path);
      size_t bytes = 0;
      for (auto _ : state) bytes = fixture->Get(query, target);
      state.counters["page_bytes"] = static_cast<double>(bytes);
    };
  };
  for (auto [name, target, query] :
       {std::tuple<const char*, const char*, std::string>{"queues", "/queues", ""},
        {"search", "/search", "jid=" + job},
        {"job", "/job", "jid=" + job}}) {
    benchmark::RegisterBenchmark((std::string("BM_QueuedStore/") + name).c_str(),
                                 page(target, query))
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace bulkhead
