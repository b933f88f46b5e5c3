// A TCP relay that holds every chunk for a fixed delay in each direction: a database 0.5 ms away, as across a
// data-centre network, in front of the PostgreSQL on this machine (bench/latency-scenarios.ts). One round trip
// through it costs about twice the delay.
//
//   node bench/relay.ts <target host> <target port>   → prints {"port": …} once listening
//   stdin `delay <ms>`                                  → the delay from now on (0 at first, so that the server
//                                                         behind it migrates and seeds at local speed)
//
// Node's timers count whole milliseconds, so while it holds chunks the relay looks at the clock on every turn of
// its event loop (setImmediate), which also reads every chunk the moment it arrives: each is held exactly the
// delay from its arrival. (A blocking wait, as this relay first had, read nothing while it waited: a chunk that
// arrived meanwhile was stamped when the wait ended and held up to one delay more. PostgreSQL answers a pipeline
// of statements in several writes, a PATCH's in about four, so every such answer came late.) It uses a core
// while it holds chunks; it runs in a process of its own, measured by latency, not CPU.
import net from 'node:net';

import readline from 'node:readline';

const [host, port] = [process.argv[2], Number(process.argv[3])];
let delay = 0;
/** Chunks held, in the order they arrived, which is the order they are due (one delay for all). */
const queue: Array<{ due: number; to: net.Socket; chunk: Buffer }> = [];
let pumping = false;

/** Sends what is due, and comes back on the next turn while anything is held. */
function pump(): void {
  const now = performance.now();
  while (queue.length > 0 && queue[0].due <= now) {
    const { to, chunk } = queue.shift()!;
    if (!to.destroyed) to.write(chunk);
  }
  if (queue.length > 0) setImmediate(pump);
  else pumping = false;
}

function forward(from: net.Socket, to: net.Socket): void {
  from.on('data', (chunk: Buffer) => {
    if (delay === 0 && queue.length === 0) return void to.write(chunk);
    queue.push({ due: performance.now() + delay, to, chunk });
    if (!pumping) {
      pumping = true;
      setImmediate(pump);
    }
  });
  from.on('close', () => to.destroy());
  from.on('error', () => to.destroy());
}

const server = net.createServer((client) => {
  client.setNoDelay(true);
  const upstream = net.connect({ host, port });
  upstream.setNoDelay(true);
  forward(client, upstream);
  forward(upstream, client);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as net.AddressInfo).port })}\n`));
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, value] = line.trim().split(' ');
  if (command === 'delay') delay = Number(value);
  process.stdout.write(`${JSON.stringify({ delay })}\n`);
});
// Ends with its parent.
process.stdin.on('end', () => process.exit(0));
