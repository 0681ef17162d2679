// A fake FCM HTTP v1 and its OAuth 2.0 token endpoint for the relay's tests, over TLS on Node's
// core `http2` module, as strict as Google's documentation. Each rule names its source:
//   [AUTH] Google, "Authorize send requests" and "Using OAuth 2.0 for Server to Server
//          Applications" (the JWT bearer grant, RFC 7523: an RS256 assertion with iss, scope,
//          aud, iat, exp of at most an hour, exchanged for an access token)
//   [SEND] Google, "FCM HTTP v1 API reference": projects.messages.send and Message/AndroidConfig
//   [ERR]  Google, "FCM HTTP v1 API reference", ErrorCode (the error body and its details)
// It records every message it accepted, and counts token exchanges.
import crypto from 'node:crypto';
import http2 from 'node:http2';

const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

// A service account key file as the Firebase console writes it, and the public half of its key.
export function makeServiceAccount({ projectId, tokenUri }) {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const json = {
    type: 'service_account',
    project_id: projectId,
    private_key_id: crypto.randomBytes(20).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    client_email: `relay@${projectId}.iam.gserviceaccount.com`,
    client_id: '1234567890',
    token_uri: tokenUri,
  };
  return { json, publicKey };
}

function readBody(stream) {
  return new Promise((resolve) => {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

function reply(stream, status, body) {
  if (stream.destroyed) return;
  stream.respond({ ':status': status, 'content-type': 'application/json; charset=UTF-8' });
  stream.end(JSON.stringify(body));
}

// [ERR] {"error": {"code", "message", "status", "details": [{"@type": ...FcmError, "errorCode"}]}}
function fcmError(stream, code, status, errorCode, message) {
  const details = errorCode
    ? [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode }] : [];
  reply(stream, code, { error: { code, message, status, details } });
}

// options: cert, key (TLS), projectId, account ({json, publicKey}; may be set after the start,
// when the account's token_uri needs the fake's port), tokens (Set of known registration tokens).
// state.refuseGrants: the token endpoint answers 400 invalid_grant.
export async function startFakeFcm(options) {
  const state = { received: [], exchanges: 0, issued: new Map(), refuseGrants: false, answers: [] };
  const server = http2.createSecureServer({ cert: options.cert, key: options.key, allowHTTP1: true });
  let streams = 0;
  const sessions = new Set();
  server.on('session', (s) => { sessions.add(s); s.on('close', () => sessions.delete(s)); });
  server.on('stream', async (stream, h) => {
    // See fake_apns.mjs: Node's server GOAWAYs after ~1000 streams; end sessions gracefully first.
    streams += 1;
    if (streams % 500 === 0) stream.session.close();
    stream.on('error', () => {});
    const body = await readBody(stream);
    if (h[':path'] === '/token') return token(stream, h, body);
    return send(stream, h, body);
  });

  function token(stream, h, body) {
    state.exchanges += 1;
    // [AUTH] POST, form-encoded grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=
    const form = new URLSearchParams(body.toString());
    if (h[':method'] !== 'POST' || form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return reply(stream, 400, { error: 'unsupported_grant_type' });
    }
    if (state.refuseGrants) return reply(stream, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return reply(stream, 400, { error: 'invalid_grant' });
    const header = JSON.parse(Buffer.from(parts[0], 'base64url'));
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url'));
    // [AUTH] RS256, signed by the account's key; iss the client_email; scope; aud the token URI;
    // exp at most an hour after iat.
    const signed = crypto.verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), options.account.publicKey,
      Buffer.from(parts[2], 'base64url'));
    const now = Math.floor(Date.now() / 1000);
    if (header.alg !== 'RS256' || !signed) return reply(stream, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    if (claims.iss !== options.account.json.client_email) return reply(stream, 400, { error: 'invalid_grant' });
    if (!String(claims.scope).split(' ').includes(SCOPE)) return reply(stream, 400, { error: 'invalid_scope' });
    if (claims.aud !== options.account.json.token_uri) return reply(stream, 400, { error: 'invalid_grant', error_description: 'Invalid audience' });
    if (!(claims.exp > claims.iat) || claims.exp - claims.iat > 3600 || claims.iat > now + 300 || claims.exp < now) {
      return reply(stream, 400, { error: 'invalid_grant', error_description: 'Invalid JWT: Token must be a short-lived token' });
    }
    const access = `ya29.${crypto.randomBytes(24).toString('base64url')}`;
    state.issued.set(access, now + 3599);
    return reply(stream, 200, { access_token: access, expires_in: 3599, token_type: 'Bearer' });
  }

  function send(stream, h, body) {
    const fail = (...a) => { state.answers.push(a[2] || a[1]); return fcmError(stream, ...a); };
    // [SEND] POST https://fcm.googleapis.com/v1/{parent=projects/*}/messages:send
    const m = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(h[':path']);
    if (h[':method'] !== 'POST' || !m) return fail(404, 'NOT_FOUND', '', 'not found');
    // [AUTH] Authorization: Bearer <access token from the token endpoint>
    const bearer = /^Bearer (.+)$/.exec(h.authorization ?? '');
    const expires = bearer && state.issued.get(bearer[1]);
    if (!expires || expires < Date.now() / 1000) {
      return fail(401, 'UNAUTHENTICATED', '', 'Request had invalid authentication credentials.');
    }
    if (m[1] !== options.projectId) return fail(403, 'PERMISSION_DENIED', 'SENDER_ID_MISMATCH', 'SenderId mismatch');
    let doc;
    try {
      doc = JSON.parse(body);
    } catch {
      return fail(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    const msg = doc.message;
    // [SEND] Message: exactly one of token, topic, condition.
    if (!msg || typeof msg.token !== 'string' || msg.topic || msg.condition) {
      return fail(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'message must name one token');
    }
    const android = msg.android ?? {};
    // [SEND] AndroidConfig: ttl a Duration in seconds ("3.5s"), priority NORMAL or HIGH, data a
    // map of strings; the data payload at most 4096 bytes.
    if (android.ttl !== undefined && !/^\d+(\.\d{1,9})?s$/.test(android.ttl)) return fail(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'bad ttl');
    if (android.priority !== undefined && !['NORMAL', 'HIGH'].includes(android.priority)) return fail(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'bad priority');
    const data = android.data ?? {};
    let size = 0;
    for (const [k, v] of Object.entries(data)) {
      if (typeof v !== 'string') return fail(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'data values must be strings');
      size += Buffer.byteLength(k) + Buffer.byteLength(v);
    }
    if (size > 4096) return fail(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'Android message is too big');
    // [ERR] a token FCM no longer knows: 404 UNREGISTERED.
    if (!options.tokens.has(msg.token)) return fail(404, 'NOT_FOUND', 'UNREGISTERED', 'Requested entity was not found.');
    state.received.push(msg);
    state.answers.push('ok');
    return reply(stream, 200, { name: `projects/${m[1]}/messages/0:${Date.now()}%${crypto.randomBytes(4).toString('hex')}` });
  }

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `https://127.0.0.1:${server.address().port}`;
  return {
    state,
    url: base,
    tokenUri: `${base}/token`,
    close: () => new Promise((resolve) => { server.close(() => resolve()); for (const s of sessions) s.destroy(); }),
  };
}
