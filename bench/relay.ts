// A TCP relay that holds every chunk for a fixed delay in each direction: a database 0.5 ms away, as across a
// data-centre network, in front of the PostgreSQL on this machine (bench/latency-scenarios.ts). One round trip
// through it costs about twice the delay.
//
//   node bench/relay.ts <target host> <target port>   → prints {"port": …} once listening
//   stdin `delay <ms>`                                  → the delay from now on (0 at first, so that the server
//                                                         behind it migrates and seeds at local speed)
//
// Node's timers count whole milliseconds, so a chunk is held by a blocking wait (Atomics.wait, which takes
// fractions of a millisecond and sleeps without spinning) until it is due. The relay runs in a process of its
// own so that only it blocks. While it waits it reads nothing else, so chunks that arrive together are held a
// little longer than the delay: the figures are for one request at a time, where that does not happen.
import net from 'node:net';

import readline from 'node:readline';

const [host, port] = [process.argv[2], Number(process.argv[3])];
let delay = 0;
const gate = new Int32Array(new SharedArrayBuffer(4));
const queue: Array<{ due: number; to: net.Socket; chunk: Buffer }> = [];
let flushing = false;

function flush(): void {
  while (queue.length > 0) {
    const { due, to, chunk } = queue[0];
    for (let left = due - performance.now(); left > 0; left = due - performance.now()) Atomics.wait(gate, 0, 0, left);
    queue.shift();
    if (!to.destroyed) to.write(chunk);
  }
  flushing = false;
}

function forward(from: net.Socket, to: net.Socket): void {
  from.on('data', (chunk: Buffer) => {
    if (delay === 0 && queue.length === 0) return void to.write(chunk);
    queue.push({ due: performance.now() + delay, to, chunk });
    if (!flushing) {
      flushing = true;
      setImmediate(flush);
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
