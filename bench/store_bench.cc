// Cost per job operation against the backlog: push + fetch + ack of one job while `backlog` other
// jobs wait in the same queue. The claim under test: 1,000,000 queued jobs behave like 1,000.
// Measured on MemoryState, what every FETCH/ACK touches on the event loop; the SQLite log behind it
// writes on its own thread (its cost is in bench/run.d/10-noop.sh). BM_JidIndexChurn: the index of
// the cold jobs alone.
#include <benchmark/benchmark.h>

#include <deque>
#include <string>

#include "bulkhead/store/jid_index.h"
#include "bulkhead/store/memory_state.h"

namespace bulkhead {
namespace {

JobRecord Job(int64_t i) {
  JobRecord j;
  j.jid = "bench-" + std::to_string(i);
  j.queue = "default";
  j.jobtype = "noop";
  j.payload = R"({"jid":")" + j.jid + R"(","jobtype":"noop","args":[],"queue":"default"})";
  j.reserve_for_s = 1800;
  return j;
}

void BM_PushFetchAck(benchmark::State& state) {
  MemoryState s;
  std::vector<Change> changes;
  int64_t backlog = state.range(0);
  for (int64_t i = 0; i < backlog; ++i) {
    s.Add(Job(i), changes);
    changes.clear();
  }
  int64_t next = backlog;
  for (auto _ : state) {
    // The job fetched is the oldest one (FIFO); the new one joins the back: the backlog stays.
    s.Add(Job(next++), changes);
    auto job = s.Fetch({"default"}, 1'700'000'000'000'000, changes);
    s.Ack(job->jid, changes);
    changes.clear();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PushFetchAck)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);

void BM_DueScheduledScan(benchmark::State& state) {
  // Scheduled set of `backlog` future jobs; each iteration adds one due job and moves it.
  MemoryState s;
  std::vector<Change> changes;
  int64_t backlog = state.range(0);
  for (int64_t i = 0; i < backlog; ++i) {
    JobRecord j = Job(i);
    j.state = JobState::kScheduled;
    j.score = 2'000'000'000'000'000 + i;
    s.Add(j, changes);
    changes.clear();
  }
  int64_t next = backlog;
  for (auto _ : state) {
    JobRecord j = Job(next++);
    j.state = JobState::kScheduled;
    j.score = 1;
    s.Add(j, changes);
    s.EnqueueDue(JobState::kScheduled, 10, 100, changes);
    s.Fetch({"default"}, 10, changes);
    changes.clear();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DueScheduledScan)->Arg(1'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);

// The sqlite: store's cold queued jobs by jid (jid_index.h) in a steady state: `backlog` cold jobs,
// one new jid indexed and the oldest erased per iteration (a PUSH turning cold, a FETCH), the way
// a queue with a backlog churns. At 1,000,000 the table and the slots are far outside the caches.
void BM_JidIndexChurn(benchmark::State& state) {
  const int64_t backlog = state.range(0);
  std::deque<QueueSlot> slots;
  JidIndex index;
  int64_t next = 0;
  auto push = [&] {
    slots.push_back(QueueSlot{.id = next + 1, .jid = CompactJid("bench-" + std::to_string(next))});
    ++next;
    index.Insert(&slots.back());
  };
  for (int64_t i = 0; i < backlog; ++i) push();
  for (auto _ : state) {
    push();
    index.Erase(slots.front().jid.view());
    slots.pop_front();
  }
  benchmark::DoNotOptimize(index.size());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_JidIndexChurn)->Arg(1'000)->Arg(1'000'000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bulkhead
