// Where a PUSH's commit time goes (bench/run.d/12-push-rtt.sh measures the whole round trip):
// - BM_SqliteOneJobTransaction/d/0: what the store does for a batch of one PUSH, on the calling
//   thread: BEGIN, INSERT into jobs, UPDATE of meta.commit_seq, COMMIT (all prepared once, as
//   SqliteChangeLog's), then the pwrite of the commit side file. /d/1: the INSERT alone (the
//   least a one-job commit can be); /d/2: without the side file; /d/3: without commit_seq. The
//   file was made by the store itself, so the schema and pragmas (WAL, exclusive locking,
//   synchronous NORMAL for "process", FULL for "power") are the server's.
// - BM_StorePushDurable: EmbeddedStore::Push of one job and the wait for its `durable` callback
//   on an asio event loop: under "process" the loop commits it itself at the end of the turn (one
//   post to itself); under "power" the writer thread commits it, plus the hand-off there (mutex,
//   condition variable) and back (asio::post: eventfd, epoll).
// - BM_HandOffOnly: that hand-off there and back with no SQLite work.
// - BM_MemoryStorePushDurable: the same on the memory: store (no commit): the state work alone.
// Arg d: 0 = durability "process", 1 = "power". Real time: the waits are the point.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bulkhead/store/store.h"

namespace bulkhead {
namespace {

namespace fs = std::filesystem;

JobRecord Job(int64_t i) {
  JobRecord j;
  j.jid = "commit-" + std::to_string(i);
  j.queue = "default";
  j.jobtype = "noop";
  j.payload = R"({"args":[],"created_at":"2026-12-01T10:00:00.000000Z","enqueued_at":)"
              R"("2026-12-01T10:00:00.000000Z","jid":")" +
              j.jid + R"(","jobtype":"noop","queue":"default","retry":25})";
  j.reserve_for_s = 1800;
  j.state = JobState::kQueued;
  j.enqueued_us = 1'800'000'000'000'000 + i;
  return j;
}

const char* Durability(const benchmark::State& state) {
  return state.range(0) == 0 ? "process" : "power";
}

fs::path FreshDir(const char* name) {
  fs::path dir = fs::temp_directory_path() /
                 (std::string("commit_bench_") + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void BM_StorePushDurable(benchmark::State& state) {
  fs::path dir = FreshDir("store");
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  StoreOptions options;
  options.durability = Durability(state);
  auto store = OpenStoreFromUrl(
      "sqlite:" + (dir / "bench.db").string(),
      [&io](std::function<void()> fn) { boost::asio::post(io, std::move(fn)); }, options);
  if (!store.ok()) {
    state.SkipWithError("cannot open the store");
    return;
  }
  int64_t i = 0;
  for (auto _ : state) {
    bool done = false;
    (*store)->Push(Job(i++), [&done](Status s) { done = s.ok(); });
    while (!done) io.run_one();
  }
  (*store)->Close();
  store->reset();
  fs::remove_all(dir);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StorePushDurable)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_MemoryStorePushDurable(benchmark::State& state) {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  auto store = OpenStoreFromUrl(
      "memory:", [&io](std::function<void()> fn) { boost::asio::post(io, std::move(fn)); }, {});
  if (!store.ok()) {
    state.SkipWithError("cannot open the store");
    return;
  }
  int64_t i = 0;
  for (auto _ : state) {
    bool done = false;
    (*store)->Push(Job(i++), [&done](Status s) { done = s.ok(); });
    while (!done) io.run_one();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemoryStorePushDurable)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The hand-off alone, as SqliteChangeLog does it, with no SQLite work: the event loop appends
// under a mutex and notifies a condition variable; the writer thread wakes, takes the list and
// asio::posts the completion back; the loop wakes in epoll and runs it.
void BM_HandOffOnly(benchmark::State& state) {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::function<void()>> pending;
  bool stopping = false;
  std::thread writer([&] {
    std::vector<std::function<void()>> batch;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stopping || !pending.empty(); });
        if (pending.empty() && stopping) return;
        batch.swap(pending);
      }
      auto callbacks = std::make_shared<std::vector<std::function<void()>>>(std::move(batch));
      batch.clear();
      boost::asio::post(io, [callbacks] {
        for (auto& cb : *callbacks) cb();
      });
    }
  });
  for (auto _ : state) {
    bool done = false;
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mu);
      wake = pending.empty();
      pending.push_back([&done] { done = true; });
    }
    if (wake) cv.notify_one();
    while (!done) io.run_one();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stopping = true;
  }
  cv.notify_one();
  writer.join();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HandOffOnly)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_SqliteOneJobTransaction(benchmark::State& state) {
  fs::path dir = FreshDir("sqlite");
  fs::path db_path = dir / "bench.db";
  {
    // Let the store create the file (schema, meta rows), then close it.
    StoreOptions options;
    options.durability = Durability(state);
    auto store = OpenStoreFromUrl(
        "sqlite:" + db_path.string(), [](std::function<void()> fn) { fn(); }, options);
    if (!store.ok()) {
      state.SkipWithError("cannot create the store");
      return;
    }
    (*store)->Close();
  }
  sqlite3* db = nullptr;
  sqlite3_open(db_path.c_str(), &db);
  sqlite3_exec(db, "PRAGMA locking_mode=EXCLUSIVE", nullptr, nullptr, nullptr);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
  sqlite3_exec(db, state.range(0) == 0 ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* insert = nullptr;
  sqlite3_stmt* seq = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO jobs(id, jid, state, queue, jobtype, score, enqueued, "
                     "reserve_for, payload) VALUES(?,?,?,?,?,?,?,?,?)",
                     -1, &insert, nullptr);
  sqlite3_prepare_v2(db, "UPDATE meta SET value=? WHERE key='commit_seq'", -1, &seq, nullptr);
  int side = ::open((dir / "commits").c_str(), O_WRONLY | O_CREAT, 0644);
  // Second arg: 0 as the store commits, 1 the INSERT alone, 2 no side file, 3 no commit_seq.
  bool minimal = state.range(1) == 1;
  sqlite3_stmt* begin = nullptr;
  sqlite3_stmt* commit = nullptr;
  sqlite3_prepare_v2(db, "BEGIN", -1, &begin, nullptr);
  sqlite3_prepare_v2(db, "COMMIT", -1, &commit, nullptr);
  int64_t i = 1;
  for (auto _ : state) {
    JobRecord j = Job(i);
    sqlite3_step(begin);
    sqlite3_reset(begin);
    sqlite3_bind_int64(insert, 1, i);
    sqlite3_bind_text(insert, 2, j.jid.data(), (int)j.jid.size(), SQLITE_STATIC);
    sqlite3_bind_int(insert, 3, static_cast<int>(j.state));
    sqlite3_bind_text(insert, 4, j.queue.data(), (int)j.queue.size(), SQLITE_STATIC);
    sqlite3_bind_text(insert, 5, j.jobtype.data(), (int)j.jobtype.size(), SQLITE_STATIC);
    sqlite3_bind_int64(insert, 6, 0);
    sqlite3_bind_int64(insert, 7, j.enqueued_us);
    sqlite3_bind_int(insert, 8, j.reserve_for_s);
    sqlite3_bind_text(insert, 9, j.payload.data(), (int)j.payload.size(), SQLITE_STATIC);
    if (sqlite3_step(insert) != SQLITE_DONE) {
      state.SkipWithError(sqlite3_errmsg(db));
      break;
    }
    sqlite3_reset(insert);
    if (minimal) {
      sqlite3_step(commit);
      sqlite3_reset(commit);
      ++i;
      continue;
    }
    if (state.range(1) != 3) {
      sqlite3_bind_int64(seq, 1, i);
      sqlite3_step(seq);
      sqlite3_reset(seq);
    }
    sqlite3_step(commit);
    sqlite3_reset(commit);
    char buf[24];
    int n = std::snprintf(buf, sizeof(buf), "%020lld\n", static_cast<long long>(i));
    if (state.range(1) != 2 && ::pwrite(side, buf, n, 0) != n) state.SkipWithError("pwrite");
    ++i;
  }
  sqlite3_finalize(begin);
  sqlite3_finalize(commit);
  ::close(side);
  sqlite3_finalize(insert);
  sqlite3_finalize(seq);
  sqlite3_close(db);
  fs::remove_all(dir);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SqliteOneJobTransaction)
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({0, 2})
    ->Args({0, 3})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace bulkhead
