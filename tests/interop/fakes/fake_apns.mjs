// A fake APNs for the relay's tests: an HTTP/2 server over TLS (Node's core `http2`) as strict as
// Apple's documentation says the real one is. Each rule names its source:
//   [SEND]   Apple, "Sending notification requests to APNs" (the request: path, headers, payload)
//   [TOKEN]  Apple, "Establishing a token-based connection to APNs" (the provider JWT)
//   [ANSWER] Apple, "Handling notification responses from APNs" (status codes and reasons)
// It records every request it accepted ({token, headers, payload, environment}) and can be made
// slow (every answer held), down (connections refused), or answer a fixed status.
import crypto from 'node:crypto';
import http2 from 'node:http2';

const b64url = (b) => Buffer.from(b).toString('base64url');

// Verifies an ES256 JWT against `publicKey` (a KeyObject); returns {header, claims} or null.
function verifyJwt(jwt, publicKey) {
  const parts = jwt.split('.');
  if (parts.length !== 3) return null;
  let header;
  let claims;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url'));
    claims = JSON.parse(Buffer.from(parts[1], 'base64url'));
  } catch {
    return null;
  }
  if (header.alg !== 'ES256') return null;  // [TOKEN] "alg: ES256"
  const ok = crypto.verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`),
    { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(parts[2], 'base64url'));
  return ok ? { header, claims, iat: claims.iat } : null;
}

// options: cert, key (PEM, the server's TLS identity); topic (the app's bundle id); keyId,
// teamId, publicKey (the .p8 key's public half) for token authentication; tokens (a Set of hex
// device tokens APNs knows, per environment: {production: Set, development: Set});
// now (() => unix seconds; the token-age clock, injectable so a test need not wait an hour).
export async function startFakeApns(options) {
  const state = {
    received: [],         // accepted notifications
    answers: [],          // every answer: {status, reason}
    delayMs: 0,           // hold every answer this long
    gate: null,           // a promise: every answer waits for it (benchmarks)
    fixed: null,          // {status, reason, retryAfter}: answer this to everything
    streamsSeen: 0,
    sessions: new Set(),
    maxConcurrent: 0,
    inFlight: 0,
  };
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const server = http2.createSecureServer({
    cert: options.cert, key: options.key, allowHTTP1: false,
    // Certificate authentication: the provider's client certificate, issued by `clientCa` (Apple
    // issues it; here the test's CA). Checked per request below.
    ...(options.clientCa ? { requestCert: true, rejectUnauthorized: false, ca: options.clientCa } : {}),
    // Node's default (10 MB per session) refuses streams under a load the real APNs takes.
    maxSessionMemory: 256,
    // [SEND] APNs grants up to 1000 concurrent streams per connection (SETTINGS frame).
    settings: { maxConcurrentStreams: options.maxConcurrentStreams ?? 1000 },
  });
  // Small frames go out at once (no Nagle delay behind the client's delayed ACK).
  server.on('secureConnection', (socket) => socket.setNoDelay(true));
  server.on('session', (s) => {
    state.sessions.add(s);
    state.maxSessions = Math.max(state.maxSessions ?? 0, state.sessions.size);
    s.on('close', () => state.sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    state.streamsSeen += 1;
    // Node's HTTP/2 server sends a GOAWAY of its own after about a thousand streams on one
    // session, naming as unprocessed streams it did process (nodejs/node#56306), so the client
    // would send them again. The fake ends each session gracefully after 500 streams instead
    // (a GOAWAY naming the last stream it took, as APNs does when it recycles a connection).
    stream.session.streams = (stream.session.streams ?? 0) + 1;
    if (stream.session.streams === 500) stream.session.close();
    state.inFlight += 1;
    state.maxConcurrent = Math.max(state.maxConcurrent, state.inFlight);
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => {
      const answer = judge(headers, Buffer.concat(chunks), stream.session);
      const send = () => {
        state.inFlight -= 1;
        state.answers.push({ status: answer.status, reason: answer.reason });
        if (answer.status === 200 && answer.record) state.received.push(answer.record);
        const out = { ':status': answer.status, 'apns-id': crypto.randomUUID() };
        if (answer.retryAfter) out['retry-after'] = String(answer.retryAfter);
        if (stream.destroyed) return;
        try {
          stream.respond(out);
          // [ANSWER] errors carry {"reason": ...} (and "timestamp" for 410).
          if (answer.status === 200) stream.end();
          else stream.end(JSON.stringify(answer.status === 410
            ? { reason: answer.reason, timestamp: Date.now() } : { reason: answer.reason }));
        } catch { /* the client went away */ }
      };
      if (state.gate) state.gate.then(send);
      else if (state.delayMs > 0) setTimeout(send, state.delayMs);
      else send();
    });
    stream.on('error', () => {});
  });

  function judge(h, body, session) {
    const fail = (status, reason) => ({ status, reason });
    if (state.fixed) return { ...state.fixed };
    // [SEND] POST /3/device/<device token>
    if (h[':method'] !== 'POST') return fail(405, 'MethodNotAllowed');
    const m = /^\/3\/device\/([^/?]*)$/.exec(h[':path']);
    if (!m) return fail(404, 'BadPath');
    const token = m[1];
    if (!token) return fail(400, 'MissingDeviceToken');
    // Apple, "Establishing a certificate-based connection to APNs": the connection's client
    // certificate is the provider's identity; without a valid one, 403 BadCertificate.
    if (options.clientCa) {
      if (!session.socket.authorized) return fail(403, 'BadCertificate');
      return checkRequest(h, body, token, session);
    }
    // [TOKEN] authorization: bearer <JWT>, verified with the key's public half; kid and iss must
    // be the key id and team; a token older than an hour is ExpiredProviderToken; a new token
    // on a connection less than 20 minutes after its last one is TooManyProviderTokenUpdates.
    const auth = h.authorization;
    if (!auth) return fail(403, 'MissingProviderToken');
    const jwt = /^bearer (.+)$/.exec(auth);
    const verified = jwt && verifyJwt(jwt[1], options.publicKey);
    if (!verified || verified.header.kid !== options.keyId) return fail(403, 'InvalidProviderToken');
    if (verified.claims.iss !== options.teamId) return fail(403, 'InvalidProviderToken');
    if (typeof verified.iat !== 'number' || now() - verified.iat > 3600) {
      return fail(403, 'ExpiredProviderToken');
    }
    // Per connection: each of a provider's servers keeps its own connections and token.
    if (session.lastTokenIat !== undefined && verified.iat !== session.lastTokenIat) {
      if (now() - session.lastTokenAt < 20 * 60) return fail(429, 'TooManyProviderTokenUpdates');
    }
    if (session.lastTokenIat !== verified.iat) {
      session.lastTokenIat = verified.iat;
      session.lastTokenAt = now();
    }
    return checkRequest(h, body, token, session);
  }

  function checkRequest(h, body, token, session) {
    const fail = (status, reason) => ({ status, reason });
    // [SEND] apns-topic is required with token authentication; it must be the app's.
    if (!h['apns-topic']) return fail(400, 'MissingTopic');
    if (h['apns-topic'] !== options.topic) return fail(400, 'TopicDisallowed');
    // [SEND] apns-push-type: alert, background, ...; apns-priority 10, 5 or 1.
    const pushTypes = ['alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm', 'liveactivity', 'pushtotalk'];
    if (h['apns-push-type'] && !pushTypes.includes(h['apns-push-type'])) return fail(400, 'InvalidPushType');
    if (h['apns-priority'] && !['10', '5', '1'].includes(h['apns-priority'])) return fail(400, 'BadPriority');
    if (h['apns-expiration'] && !/^\d+$/.test(h['apns-expiration'])) return fail(400, 'BadExpirationDate');
    if (h['apns-collapse-id'] && Buffer.byteLength(h['apns-collapse-id']) > 64) return fail(400, 'BadCollapseId');
    // [SEND] the payload: at most 4096 bytes, a JSON dictionary with an aps dictionary.
    if (body.length === 0) return fail(400, 'PayloadEmpty');
    if (body.length > 4096) return fail(413, 'PayloadTooLarge');
    let payload;
    try {
      payload = JSON.parse(body);
    } catch {
      return fail(400, 'BadPayload');
    }
    if (typeof payload !== 'object' || typeof payload.aps !== 'object') return fail(400, 'BadPayload');
    // [ANSWER] a token of the other environment is BadDeviceToken; one APNs no longer knows, 410.
    if (!/^[0-9a-fA-F]{64}$/.test(token)) return fail(400, 'BadDeviceToken');
    const env = options.environment;
    const other = env === 'production' ? 'development' : 'production';
    if (options.tokens[other]?.has(token) && !options.tokens[env]?.has(token)) return fail(400, 'BadDeviceToken');
    if (!options.tokens[env]?.has(token)) return fail(410, 'Unregistered');
    const headers = {};
    for (const [k, v] of Object.entries(h)) if (!k.startsWith(':')) headers[k] = v;
    return { status: 200, reason: '', record: { token, headers, payload, session } };
  }

  await new Promise((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    state,
    port: server.address().port,
    url: `https://127.0.0.1:${server.address().port}`,
    async close() {
      for (const s of state.sessions) s.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

// A P-256 key as Apple's .p8 files hold it (PKCS#8 PEM), and its public half.
export function makeP8Key() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { pem: privateKey.export({ type: 'pkcs8', format: 'pem' }), publicKey };
}

export { b64url };
