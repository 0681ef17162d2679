// The machine's limit for the same cryptography, measured in the same run: `openssl speed -multi
// CORES -mr` (machine-readable totals over all cores) for RSA-2048 signatures (one per activitypub
// delivery), and P-256 ECDH and ECDSA signatures (RFC 8291's key agreement, RFC 8292's VAPID
// token). Output lines parsed (openssl 3.0 apps/speed.c, -mr): "+F2:k:2048:sign/s:verify/s" (RSA),
// "+F4:k:256:sign/s:verify/s" (ECDSA), "+F5:k:256:ops/s:seconds/op" (ECDH); with -multi the lines
// without the "Got:" prefix are the sums over the child processes. openssl divides by CPU user
// time, not wall-clock time (its -elapsed is off).
import { run } from './procs.mjs';

function total(out, tag, bits) {
  const re = new RegExp(`^\\+${tag}:\\d+:${bits}:([0-9.]+):([0-9.]+)$`, 'm');
  const m = re.exec(out);
  if (!m) throw new Error(`openssl speed: no +${tag} line for ${bits} bits in:\n${out}`);
  return [Number(m[1]), Number(m[2])];
}

async function speed(cores, seconds, algorithms) {
  const r = await run('openssl', ['speed', '-multi', String(cores), '-seconds', String(seconds), '-mr', ...algorithms]);
  return r.stdout + r.stderr;
}

// RSA-2048 signatures per second over `cores` processes.
export async function measureRsa({ cores, seconds }) {
  return { rsaSign: total(await speed(cores, seconds, ['rsa2048']), 'F2', 2048)[0] };
}

// P-256: ECDH and ECDSA signatures per second, and pushes per second at one of each.
export async function measureP256({ cores, seconds }) {
  const out = await speed(cores, seconds, ['ecdhp256', 'ecdsap256']);
  const [ecdsaSign] = total(out, 'F4', 256);
  const [ecdh] = total(out, 'F5', 256);
  return { ecdh, ecdsaSign, pushTwoOps: 1 / (1 / ecdh + 1 / ecdsaSign) };
}

export async function measureMachineLimits({ cores, seconds }) {
  return { cores, ...(await measureRsa({ cores, seconds })), ...(await measureP256({ cores, seconds })) };
}
