#!/usr/bin/env bash
# The dashboard's Dead page on a sqlite: store of 1,000 and 1,000,000 dead jobs (first, middle and
# last page, and a filtered page; the jid search), with the ratio 1M / 1k and the 200 ms budget per
# page (docs/benchmarks.md, "Dashboard").
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/dashboard_bench"
if [ ! -x "$bench" ]; then
  echo "50-dashboard: $bench missing (run make build)" >&2
  exit 1
fi
out="$("$bench" --benchmark_format=json --benchmark_min_time=0.5)"
echo "$out" | python3 -c '
import json, sys
runs = {b["name"]: b for b in json.load(sys.stdin)["benchmarks"]}
for where, arg in (("first", 0), ("middle", 1), ("last", 2)):
    small = runs["BM_DeadPage/1000/%d" % arg]["real_time"]
    big = runs["BM_DeadPage/1000000/%d" % arg]["real_time"]
    verdict = "under" if big < 200 else "OVER"
    print("dead page (%s): %.2f ms at 1k dead jobs, %.2f ms at 1M; ratio 1M/1k = %.1f; %s the 200 ms budget"
          % (where, small, big, big / small, verdict))
for size in (1000, 1000000):
    first = runs["BM_DeadPage/%d/0" % size]["real_time"]
    print("dead set of %d: middle page / first = %.2f, last page / first = %.2f"
          % (size, runs["BM_DeadPage/%d/1" % size]["real_time"] / first,
             runs["BM_DeadPage/%d/2" % size]["real_time"] / first))
small = runs["BM_Search/1000"]["real_time"]
big = runs["BM_Search/1000000"]["real_time"]
print("jid search (a dead job in the middle): %.3f ms at 1k, %.3f ms at 1M; ratio %.1f" % (small, big, big / small))
small = runs["BM_DeadPageFiltered/1000"]["real_time"]
big = runs["BM_DeadPageFiltered/1000000"]["real_time"]
print("filtered dead page from the middle, no match (5,000 jobs scanned): %.2f ms at 1k, %.2f ms at 1M; ratio %.1f" % (small, big, big / small))
'
# With BENCH_DASHBOARD_QUEUED_STORE=PATH (a store of queued jobs, e.g. the one
# `store_memory --jobs 10000000 --dir DIR` leaves at DIR/store_memory.db): the Queues page and the jid search / job page of a job in the middle of its queue, on that file (opened as
# it is; bulkhead then owns it: keep a copy if it matters).
queued="${BENCH_DASHBOARD_QUEUED_STORE:-}"
if [ -n "$queued" ]; then
  jid="$(python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n, = db.execute("SELECT count(*) FROM jobs WHERE state = 0").fetchone()
print(db.execute("SELECT jid FROM jobs WHERE state = 0 ORDER BY id LIMIT 1 OFFSET ?", (n // 2,)).fetchone()[0])
' "$queued")"
  BULKHEAD_DASHBOARD_QUEUED_STORE="$queued" BULKHEAD_DASHBOARD_QUEUED_JID="$jid" \
    "$bench" --benchmark_filter=BM_QueuedStore --benchmark_format=json \
    --benchmark_min_time=0.5 | python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    ms = b["real_time"]
    print("queued store, %s: %.2f ms; %s the 200 ms budget"
          % (b["name"].split("/")[1], ms, "under" if ms < 200 else "OVER"))
'
fi
