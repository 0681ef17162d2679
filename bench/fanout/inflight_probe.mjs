// What the in-flight benchmark (inflight.mjs) reads about a running `bulkhead serve`, to confirm
// from bulkhead's side that the deliveries it claims are in flight are: the in-flight total from
// its own /metrics (bulkhead_host_inflight summed over every host label, "other" included: the
// top-N folding keeps the sum), its descriptors by kind (/proc/PID/fd), the TCP connections among
// them that are established to a given remote port (their socket inodes looked up in
// /proc/net/tcp, proc(5)), and its resident memory (VmRSS, /proc/PID/status).
import fs from 'node:fs';

// Sums every sample of each family named in `names` in a Prometheus text exposition.
export function sumSamples(text, names) {
  const sums = Object.fromEntries(names.map((n) => [n, 0]));
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-z_]+)(?:\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] in sums) sums[m[1]] += Number(m[2]);
  }
  return sums;
}

// {inFlight, maxInFlight, parked} from bulkhead's GET /metrics on `httpPort`.
export async function deliveryGauges(httpPort) {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`GET /metrics: ${res.status}`);
  const s = sumSamples(await res.text(),
    ['bulkhead_host_inflight', 'bulkhead_delivery_max_inflight', 'bulkhead_parked_jobs']);
  return {
    inFlight: s.bulkhead_host_inflight, maxInFlight: s.bulkhead_delivery_max_inflight,
    parked: s.bulkhead_parked_jobs,
  };
}

// Socket inodes of the TCP connections in state ESTABLISHED (01) whose remote port is `port`
// (/proc/net/tcp and tcp6: "sl local_address rem_address st ... inode", ports in hex).
function establishedTo(port) {
  const inodes = new Set();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '01') continue;
      if (parseInt(f[2].split(':')[1], 16) === port) inodes.add(f[9]);
    }
  }
  return inodes;
}

// {fds, sockets, other, toPort}: open descriptors of `pid`, how many are sockets, and how many of
// those are TCP connections established to `port` (0 when port is not given).
export function fdCensus(pid, port) {
  const names = fs.readdirSync(`/proc/${pid}/fd`);
  const socketInodes = [];
  for (const n of names) {
    let target = '';
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${n}`);
    } catch {
      continue;  // closed meanwhile
    }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) socketInodes.push(m[1]);
  }
  const to = port ? establishedTo(port) : new Set();
  return {
    fds: names.length, sockets: socketInodes.length, other: names.length - socketInodes.length,
    toPort: socketInodes.filter((i) => to.has(i)).length,
  };
}

export function rssKb(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}
