#!/usr/bin/env python3
"""Drives one redis-server through the Redis store's scripts as one node under bench_noop does.

Pushes N jobs in calls of 256 (push.lua), then fetches them in calls of 32 with four calls (128
jobs) in flight and acknowledges each call's jobs in one ack.lua call, as RedisStore coalesces a
pipelined worker's FETCHes and ACKs. The scripts are composed as store/redis_scripts.cc composes
them (the prelude, the libraries a script's first line names, `-- uses: batch_lib track_lib`, then
the script) from SCRIPTS_DIR, which may hold an earlier commit's scripts (from before that line:
their libraries were fixed in C++, and are here too):
ack.lua's arguments (with or without the reservation an ACK names) and fetch.lua's answer (a table
per fetch, or one flat array) are read as that version writes them.

usage: redis_script_cost.py PORT SCRIPTS_DIR JOBS [--push-only]
Exits non-zero, naming the problem, when a script answers an error or a job is not acknowledged.
"""
import collections
import socket
import sys


def main():
    port, scripts_dir, jobs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    push_only = "--push-only" in sys.argv[4:]

    def text(name):
        with open(f"{scripts_dir}/{name}.lua") as f:
            return f.read()

    before_uses = {"fetch": ["track_lib"], "ack": ["batch_lib", "track_lib"]}

    def compose(name):
        body = text(name)
        first = body.split("\n", 1)[0]
        if first.startswith("-- uses:"):
            libraries = first[len("-- uses:"):].split()
        else:
            libraries = before_uses.get(name, [])
        return "\n".join([text("prelude")] + [text(lib) for lib in libraries] + [body])

    scripts = {name: compose(name) for name in ("push", "fetch", "ack")}
    names_reservation = "acker" in text("ack")  # ARGV: P, day, node; jid, now, expiry, queue

    sock = socket.create_connection(("127.0.0.1", port))
    reader = sock.makefile("rb")

    def encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = str(a).encode() if not isinstance(a, bytes) else a
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        return b"".join(out)

    def read():
        line = reader.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"-":
            sys.exit("redis_script_cost: error reply: " + rest.decode(errors="replace"))
        if kind in (b"+", b":"):
            return rest
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else reader.read(n + 2)[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [read() for _ in range(n)]
        sys.exit("redis_script_cost: unexpected reply line %r" % line)

    def call(*args):
        sock.sendall(encode(args))
        return read()

    sha = {name: call("SCRIPT", "LOAD", body).decode() for name, body in scripts.items()}
    prefix, node, now = "{cost}:", "node-cost-1", 1_733_100_000_000_000
    jobs_key = prefix + "jobs"

    def jid(i):
        return "bench-%012d" % i

    def value(i):  # a queued no-op job as the store writes it (header, compact payload)
        return '0|1800|%d||bench|noop\n~CETQ~lq8x9c7k2a~{"args":[],"retry":25}' % (now + i)

    for first in range(0, jobs, 256):
        args = [prefix, node]
        for i in range(first, min(jobs, first + 256)):
            args += [jid(i), value(i), 0]
        call("EVALSHA", sha["push"], 1, jobs_key, *args)
    if push_only:
        return

    def send_fetch():
        args = [prefix, node]
        for _ in range(32):
            args += [now, "worker-1", 1, "bench"]
        sock.sendall(encode(["EVALSHA", sha["fetch"], 1, jobs_key] + args))

    def taken(reply):  # [(jid, expiry)] of the jobs a fetch.lua call reserved
        if reply and not isinstance(reply[0], list):  # flat: jid, value, score per fetch
            return [(reply[i], reply[i + 2]) for i in range(0, len(reply), 3) if reply[i]]
        return [(e[0], e[2]) for e in reply if e]

    def send_ack(held):
        args = [prefix, "2026-12-02"] + ([node] if names_reservation else [])
        for j, expiry in held:
            args += [j, now] + ([expiry, "bench"] if names_reservation else [])
        sock.sendall(encode(["EVALSHA", sha["ack"], 1, jobs_key] + args))

    expected = collections.deque()
    for _ in range(4):
        send_fetch()
        expected.append("fetch")
    while expected:
        reply = read()
        if expected.popleft() == "ack":
            continue
        held = taken(reply)
        if held:
            send_ack(held)
            expected.append("ack")
            send_fetch()
            expected.append("fetch")
    processed = call("HGET", prefix + "stats", "processed")
    left = call("HLEN", jobs_key)
    if processed is None or int(processed) != jobs or int(left) != 0:
        sys.exit("redis_script_cost: %s of %d jobs acknowledged, %s left" % (processed, jobs, left))


if __name__ == "__main__":
    main()
