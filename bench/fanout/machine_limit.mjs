// The machine's limit for the same cryptography, measured in the same run: `openssl speed -multi
// CORES -mr` (machine-readable totals over all cores) for RSA-2048 signatures (one per activitypub
// delivery), and P-256 ECDH and ECDSA signatures (RFC 8291's key agreement, RFC 8292's VAPID
// token). Output lines parsed (openssl 3.0 apps/speed.c, -mr): "+F2:k:2048:sign/s:verify/s" (RSA),
// "+F4:k:256:sign/s:verify/s" (ECDSA), "+F5:k:256:ops/s:seconds/op" (ECDH); with -multi the lines
// without the "Got:" prefix are the sums over the child processes.
import { run } from './procs.mjs';

function total(out, tag, bits) {
  const re = new RegExp(`^\\+${tag}:\\d+:${bits}:([0-9.]+):([0-9.]+)$`, 'm');
  const m = re.exec(out);
  if (!m) throw new Error(`openssl speed: no +${tag} line for ${bits} bits in:\n${out}`);
  return [Number(m[1]), Number(m[2])];
}

export async function measureMachineLimits({ cores, seconds }) {
  const common = ['speed', '-multi', String(cores), '-seconds', String(seconds), '-mr'];
  const rsa = await run('openssl', [...common, 'rsa2048']);
  const ec = await run('openssl', [...common, 'ecdhp256', 'ecdsap256']);
  const rsaOut = rsa.stdout + rsa.stderr;
  const ecOut = ec.stdout + ec.stderr;
  const [rsaSign] = total(rsaOut, 'F2', 2048);
  const [ecdsaSign] = total(ecOut, 'F4', 256);
  const [ecdh] = total(ecOut, 'F5', 256);
  return {
    cores, rsaSign, ecdsaSign, ecdh,
    // One ECDH and one ECDSA signature per push, each op at its own rate.
    pushTwoOps: 1 / (1 / ecdh + 1 / ecdsaSign),
  };
}
