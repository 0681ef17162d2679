// A throwaway PKI made by the openssl CLI for TLS tests: a CA, another CA, and server
// certificates for 127.0.0.1/localhost signed by the first (interop/tls.test.mjs,
// cluster/deliveries.test.mjs).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function openssl(dir, ...args) {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

// A CA and server certificates for 127.0.0.1/localhost in a fresh folder. `expired`: valid in
// January 2020 only. `cn` names the certificate (to tell two apart).
export function makePki() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-tls-'));
  fs.writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  fs.writeFileSync(path.join(dir, 'ca.cnf'), [
    '[ ca ]', 'default_ca = CA_default', '[ CA_default ]', 'dir = .', 'database = index.txt',
    'new_certs_dir = .', 'certificate = ca.crt', 'private_key = ca.key', 'serial = serial',
    'default_md = sha256', 'policy = policy_any', 'unique_subject = no', '[ policy_any ]',
    'commonName = supplied', '',
  ].join('\n'));
  fs.writeFileSync(path.join(dir, 'index.txt'), '');
  fs.writeFileSync(path.join(dir, 'serial'), '01\n');
  openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt',
    '-days', '2', '-subj', '/CN=bulkhead test CA');
  openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other-ca.key', '-out',
    'other-ca.crt', '-days', '2', '-subj', '/CN=someone else');
  const issue = (name, { cn, start, end }) => {
    openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`,
      '-subj', `/CN=${cn}`);
    const dates = start ? ['-startdate', start, '-enddate', end] : ['-days', '2'];
    openssl(dir, 'ca', '-batch', '-config', 'ca.cnf', '-in', `${name}.csr`, '-out', `${name}.crt`,
      '-extfile', 'ext.cnf', '-notext', ...dates);
  };
  issue('server', { cn: 'first' });
  issue('second', { cn: 'second' });
  issue('expired', { cn: 'expired', start: '20200101000000Z', end: '20200102000000Z' });
  const file = (n) => path.join(dir, n);
  return { dir, file, ca: fs.readFileSync(file('ca.crt')) };
}
