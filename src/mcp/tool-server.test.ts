// The per-request server's close (tool-server.ts, ToolServer): what it ends still learns why, without the stack
// trace the SDK's close would capture on every exchange, and the process's stack traces are left as they were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/server';
import { serverWithCallInFlight } from '../../test/support/sdk-call-in-flight.ts';

test('closing a server ends a call in flight with "Connection closed", no stack captured, stack traces as before', async () => {
  const { server, ended } = await serverWithCallInFlight();
  const limit = Error.stackTraceLimit;
  await server.close();
  const reason = await ended;
  assert.ok(reason instanceof SdkError, `aborted with ${String(reason)}`);
  assert.equal(reason.code, SdkErrorCode.ConnectionClosed);
  assert.equal(reason.stack?.split('\n').length, 1, 'no frame captured');
  assert.equal(Error.stackTraceLimit, limit);
  assert.ok((new Error('after').stack?.split('\n').length ?? 0) > 1, 'errors made after the close have their stacks');
});
