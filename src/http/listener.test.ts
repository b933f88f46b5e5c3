// The listener's drain (listener.ts) against a connection the kernel completed while the process was busy: it
// must be accepted and answered, never reset by the listening socket's close. A drain that starts in an I/O
// callback (a SIGTERM's handler is one) once closed the socket in the same turn of the event loop, before
// polling again: a request already sent on such a connection was reset (a 502 for a POST behind nginx, CI).
// And against a connection made just after the drain began, when everything had been quiet: a drain that closed
// at once left a moment in which such a connection was reset rather than refused (CI again); it is now served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import Fastify from 'fastify';
import { openListener } from './listener.ts';

/** A client in a process of its own, so that it connects and sends while this one is busy: it answers the status, or the error. */
const CLIENT = `
process.stdin.once('data', async (line) => {
  const [url, delayMs] = String(line).trim().split(' ');
  await new Promise((resolve) => setTimeout(resolve, Number(delayMs ?? 0)));
  fetch(url).then((res) => process.stdout.write('status ' + res.status + '\\n'), (err) => process.stdout.write('error ' + (err.cause?.code ?? err.message) + '\\n')).finally(() => process.exit(0));
});
// fetch loads its HTTP client on first use: loaded before 'ready' (a refused connection to a closed port), so that
// the connection is made when asked, not tens of milliseconds later.
fetch('http://127.0.0.1:9/').catch(() => {}).finally(() => process.stdout.write('ready\\n'));
`;

/**
 * A listener serving GET /late, quiet for a while (nothing accepted lately), and a client in another process;
 * once the client is ready, `onReady` sends it the URL and the drain starts, both in that I/O callback. Answers
 * the client's lines.
 */
async function drainAgainstClient(onReady: (url: string, send: (line: string) => void) => void): Promise<string[]> {
  const listener = await openListener({ host: '127.0.0.1', port: 0, errorsUrl: 'http://localhost/docs/errors', log: { info() {}, warn() {} } });
  const app = Fastify();
  app.get('/late', async () => ({ ok: true }));
  await app.ready();
  listener.attach(app);
  // Nothing accepted for a while: the drain finds the traffic quiet when it begins.
  await new Promise((resolve) => setTimeout(resolve, 300));

  const client = spawn(process.execPath, ['-e', CLIENT], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let drained: Promise<void> | undefined;
  client.stdout.setEncoding('utf8');
  client.stdout.on('data', (chunk: string) => {
    lines.push(...chunk.split('\n').filter(Boolean));
    if (drained === undefined && lines.includes('ready')) {
      onReady(listener.url, (line) => client.stdin.write(`${line}\n`));
      drained = listener.drain(5_000);
    }
  });
  await once(client, 'exit');
  await drained;
  await app.close();
  return lines;
}

test('a drain started in an I/O callback answers the connection that arrived while the process was busy, then closes', { timeout: 20_000 }, async () => {
  const lines = await drainAgainstClient((url, send) => {
    // In this I/O callback: tell the client to go, stay busy while it connects and sends, then start the drain.
    send(`${url}/late`);
    const until = Date.now() + 500;
    while (Date.now() < until);
  });
  assert.deepEqual(lines, ['ready', 'status 200']);
});

test('a connection made just after a drain began, when all had been quiet, is served before the socket closes', { timeout: 20_000 }, async () => {
  // The client connects 20 ms after the drain begins: refused if the socket closed at once.
  const lines = await drainAgainstClient((url, send) => send(`${url}/late 20`));
  assert.deepEqual(lines, ['ready', 'status 200']);
});
