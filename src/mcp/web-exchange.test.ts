// What ends an MCP exchange when its client goes away (web-exchange.ts, endWhenClientGoes): the request's abort
// and the close of each SDK server made for it, which ends a call still in flight; nothing once the answer was
// handed to Node. A real HTTP server and socket, and the SDK's own server and in-memory transport.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http, { type ServerResponse } from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/server';
import { serverWithCallInFlight } from '../../test/support/sdk-call-in-flight.ts';
import { endWhenClientGoes } from './web-exchange.ts';

/** An HTTP server that hands each response to `handle`, and a raw request to it. */
async function serving(handle: (res: ServerResponse) => void) {
  const httpServer = http.createServer((_req, res) => handle(res));
  httpServer.listen(0, '127.0.0.1');
  await once(httpServer, 'listening');
  const { port } = httpServer.address() as net.AddressInfo;
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write('POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-length: 0\r\n\r\n');
  return { socket, close: () => httpServer.close() };
}

test('a client that goes away before its answer aborts the request and ends the call in flight on each of its servers', { timeout: 5000 }, async () => {
  const { server, ended } = await serverWithCallInFlight();
  const abort = new AbortController();
  const handed = Promise.withResolvers<void>();
  const conn = await serving((res) => {
    endWhenClientGoes(res, abort, [server]);
    handed.resolve();
  });
  await handed.promise;
  conn.socket.destroy();
  const reason = await ended;
  assert.ok(reason instanceof SdkError && reason.code === SdkErrorCode.ConnectionClosed, `ended with ${String(reason)}`);
  assert.ok(abort.signal.aborted);
  conn.close();
});

test('once the answer was handed to Node, a close ends nothing', async () => {
  const { server, ended } = await serverWithCallInFlight();
  const abort = new AbortController();
  const closed = Promise.withResolvers<void>();
  const conn = await serving((res) => {
    endWhenClientGoes(res, abort, [server]);
    res.once('close', () => closed.resolve());
    res.end('answered');
  });
  await once(conn.socket, 'data');
  conn.socket.destroy();
  await closed.promise;
  assert.equal(abort.signal.aborted, false);
  const still = await Promise.race([ended, new Promise((resolve) => setTimeout(() => resolve('still running'), 50))]);
  assert.equal(still, 'still running', 'the call in flight was left alone');
  await server.close();
  conn.close();
});
