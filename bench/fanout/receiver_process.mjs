// A Receiver (receiver.mjs) in a child process, driven over the IPC channel by ReceiverPool
// (receiver_pool.mjs): each message {id, cmd, arg} is answered {id, result} or {id, error}.
import { Receiver } from './receiver.mjs';

let receiver = null;

async function run(cmd, arg) {
  switch (cmd) {
    case 'start':
      receiver = new Receiver(arg);
      await receiver.start();
      return { pid: process.pid };
    case 'configure':
      receiver.configure(arg);
      return null;
    case 'reset':
      receiver.reset(arg);
      return null;
    case 'stats':
      return receiver.stats;
    case 'arrivals':
      return receiver.arrivals;
    case 'stop':
      if (receiver) await receiver.stop();
      receiver = null;
      return null;
    default:
      throw new Error(`unknown command ${cmd}`);
  }
}

process.on('message', async ({ id, cmd, arg }) => {
  try {
    const result = await run(cmd, arg);
    process.send({ id, result });
  } catch (e) {
    process.send({ id, error: e.stack ?? String(e), code: e.code });
  }
});
process.on('disconnect', () => process.exit(0));
