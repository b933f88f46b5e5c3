// The per-request server's close (tool-server.ts, ToolServer): what it ends still learns why, without the stack
// trace the SDK's close would capture on every exchange, and the process's stack traces are left as they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InMemoryTransport, SdkError, SdkErrorCode } from '@modelcontextprotocol/server';
import { ToolServer } from './tool-server.ts';

test('closing a server ends a call in flight with "Connection closed", no stack captured, stack traces as before', async () => {
  const server = new ToolServer({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
  let reason: unknown;
  const started = Promise.withResolvers<void>();
  server.setRequestHandler('tools/call', (_request, ctx) => {
    started.resolve();
    return new Promise((resolve) => {
      ctx.mcpReq.signal.addEventListener('abort', () => {
        reason = ctx.mcpReq.signal.reason;
        resolve({ content: [] });
      });
    });
  });
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.start();
  await client.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'anything', arguments: {} } });
  await started.promise;
  const limit = Error.stackTraceLimit;
  await server.close();
  assert.ok(reason instanceof SdkError, `aborted with ${String(reason)}`);
  assert.equal(reason.code, SdkErrorCode.ConnectionClosed);
  assert.equal(reason.stack?.split('\n').length, 1, 'no frame captured');
  assert.equal(Error.stackTraceLimit, limit);
  assert.ok((new Error('after').stack?.split('\n').length ?? 0) > 1, 'errors made after the close have their stacks');
});
