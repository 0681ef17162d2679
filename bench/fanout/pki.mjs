// A throwaway PKI for the fan-out receivers, made with the openssl CLI: one local CA and one
// server certificate for every receiving host. Both keys are ECDSA P-256, so that a full TLS
// handshake costs the receivers one cheap ECDSA signature (an RSA-2048 server key would cost them
// an RSA signature per handshake, CPU the shared cores then lack for the sender being measured);
// the sender verifies the chain (two ECDSA verifications) as it would for any Let's Encrypt ECDSA
// certificate.
//
//   makePki(dir, { dnsNames: ['*.fanout.test'], ips: ['127.0.0.11'] })
//     -> { caFile, certFile, keyFile, ca, cert, key }   (PEM strings and their files)
//
// bulkhead trusts the CA through `delivery_ca_file`; Ruby (the Sidekiq side) through
// SSL_CERT_FILE, which OpenSSL's default verify paths read.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function openssl(dir, args) {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString() ?? e.message}`);
  }
}

// Writes ca.key, ca.crt, server.key, server.crt into `dir` (created if missing). The server
// certificate names every DNS name and IP address given (a wildcard such as *.fanout.test covers
// h0001.fanout.test ... h1000.fanout.test in one small certificate). Valid for two days.
export function makePki(dir, { dnsNames = [], ips = [] } = {}) {
  if (dnsNames.length === 0 && ips.length === 0) throw new Error('makePki: no names to certify');
  fs.mkdirSync(dir, { recursive: true });
  const san = [...dnsNames.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
  fs.writeFileSync(path.join(dir, 'server.ext'), [
    'basicConstraints = critical, CA:FALSE',
    'keyUsage = critical, digitalSignature',
    'extendedKeyUsage = serverAuth',
    `subjectAltName = ${san}`,
    '',
  ].join('\n'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2',
    '-subj', '/CN=bulkhead fan-out bench CA', '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign']);
  openssl(dir, ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr',
    '-subj', '/CN=fan-out receiver']);
  openssl(dir, ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key',
    '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-sha256', '-extfile', 'server.ext']);
  const file = (n) => path.join(dir, n);
  const read = (n) => fs.readFileSync(file(n), 'utf8');
  return {
    caFile: file('ca.crt'), certFile: file('server.crt'), keyFile: file('server.key'),
    ca: read('ca.crt'), cert: read('server.crt'), key: read('server.key'),
  };
}
