// Baseline for bench/run.d/20-webpush.sh: npm web-push generateRequestDetails() (encrypt +
// VAPID-sign, a new JWT per call) per CPU-second in node, with the same subscription and payload
// as bench/webpush_bench.cc.
// Usage: node bench/webpush_baseline.mjs [seconds]   Last line: "npm_ops_per_cpu_second <n>".
import { createRequire } from 'node:module';

const require = createRequire(new URL('../tests/package.json', import.meta.url));
const webpush = require('web-push');

const seconds = Number(process.argv[2] || 3);
const subscription = {
  endpoint: 'https://fcm.googleapis.com/fcm/send/dGVzdC1zdWJzY3JpcHRpb24',
  keys: {
    p256dh: 'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4',
    auth: 'BTBZMqHH6r4Tts7J_aSIgg',
  },
};
const payload =
  '{"access_token":"Zb7n4xkPMpSMQHv3yW9pu2cY1WbjTzYkC5sJqGZAVi8","preferred_locale":"en",' +
  '"notification_id":"113582937413904221","notification_type":"mention",' +
  '"icon":"https://files.example/accounts/avatars/000/000/001/original/abc.png",' +
  '"title":"Alice mentioned you","body":"@bob have you seen the new release? It ' +
  'fixes the delivery backlog we talked about last week and adds per-host limits."}';
const keys = webpush.generateVAPIDKeys();
const options = {
  vapidDetails: { subject: 'mailto:ops@example.com', publicKey: keys.publicKey,
                  privateKey: keys.privateKey },
  TTL: 172800,
  urgency: 'normal',
  contentEncoding: 'aes128gcm',
};

function run(limitSeconds) {
  const start = process.cpuUsage();
  const wallStart = process.hrtime.bigint();
  let ops = 0;
  for (;;) {
    for (let i = 0; i < 100; ++i) webpush.generateRequestDetails(subscription, payload, options);
    ops += 100;
    if (Number(process.hrtime.bigint() - wallStart) / 1e9 >= limitSeconds) break;
  }
  const cpu = process.cpuUsage(start);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const wallSeconds = Number(process.hrtime.bigint() - wallStart) / 1e9;
  return { ops, cpuSeconds, wallSeconds };
}

run(0.5);  // warm-up (JIT)
const r = run(seconds);
console.log(`npm web-push generateRequestDetails: ${r.ops} ops, ${r.cpuSeconds.toFixed(2)} s CPU, ` +
            `${r.wallSeconds.toFixed(2)} s wall, ${(r.ops / r.wallSeconds).toFixed(0)} ops/s wall`);
console.log(`npm_ops_per_cpu_second ${(r.ops / r.cpuSeconds).toFixed(0)}`);
