// An MCP tool call that reads, on SQLite, makes no promise of its own: everything /mcp does before the SDK (the
// organisation, its MCP settings, the credential) and the call's way through the operation pipeline answer at
// once when nothing has to wait (src/maybe-async.ts), as the REST read does (synchronous-read.test.ts). So the
// call may make no more promises than the same tools/call answered by the SDK alone behind a Fastify route with a
// constant result (bench/bare-mcp.ts, the floor the bench compares it with). Counted with an async_hooks init
// hook while the server answers calls sent one after another over a real socket by a client of callbacks. Before,
// the call made 23 more than the SDK alone (80 against 57, `REQUEST=mcp node bench/promises-per-request.ts`).
// A refusal still comes through by the same path (a 404 as a tool error).
// SQLite only: on PostgreSQL every read waits on a socket.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { appOnOneSocket } from './support/one-socket-app.ts';
import { createPromiseCounter, sqliteOnly } from './support/promise-counter.ts';
import { BARE_MCP_PATH, registerBareMcp } from '../bench/bare-mcp.ts';
import { GET_SECTION_HEADERS, getSectionMessage } from '../bench/mcp-call.ts';

describe('an MCP tool call that reads, on SQLite, makes no promise beyond the SDK’s own', { skip: sqliteOnly }, () => {
  const app = appOnOneSocket({ extraRoutes: registerBareMcp });
  const counter = createPromiseCounter();

  /** One tools/call over the socket; calls back with the HTTP status and the tool result. */
  function call(path: string, body: string, done: (status: number, result: { isError?: boolean; structuredContent?: Record<string, unknown> }) => void): void {
    const headers = { host: app.caller.org.address, authorization: `Bearer ${app.caller.key}`, ...GET_SECTION_HEADERS };
    const req = http.request({ port: app.port, path, method: 'POST', agent: app.agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => done(res.statusCode!, (JSON.parse(text) as { result: never }).result));
    });
    req.end(body);
  }

  /** The promises the process made per call while `path` answered `times` calls of `body`, one after another. */
  function promisesPerCall(path: string, body: string, times = 40): Promise<{ perCall: number; status: number; result: { isError?: boolean; structuredContent?: Record<string, unknown> } }> {
    return new Promise((resolve) => {
      let left = times;
      counter.start();
      const next = () =>
        call(path, body, (status, result) => {
          if (--left > 0) return next();
          resolve({ perCall: counter.stop() / times, status, result });
        });
      next();
    });
  }

  /** Warmed first: the SDK is loaded, the credential and the settings cached, by the first call. */
  async function measured(path: string, body: string) {
    await promisesPerCall(path, body, 5);
    return promisesPerCall(path, body);
  }

  test('get_section: no more promises than the SDK alone answering a constant', async () => {
    const course = await app.t.api.request({ host: app.caller.org.address, key: app.caller.key, method: 'POST', path: '/courses', body: { fullname: 'Calls', shortname: 'CALLS-1' } });
    const section = await app.t.api.request({ host: app.caller.org.address, key: app.caller.key, method: 'POST', path: '/sections', body: { course_id: (course.body as { id: string }).id, title: 'Week 1' } });
    const id = (section.body as { id: string }).id;
    const body = JSON.stringify(getSectionMessage(id));

    const floor = await measured(BARE_MCP_PATH, body);
    const read = await measured('/mcp', body);
    assert.equal(read.status, 200);
    assert.equal(read.result.structuredContent?.id, id, 'the call answered the section');
    assert.ok(read.perCall <= floor.perCall, `the call made ${read.perCall} promises, the SDK alone ${floor.perCall}`);
  });

  test('a refusal (no such section) still answers, as a tool error', async () => {
    const missing = await measured('/mcp', JSON.stringify(getSectionMessage('0195f0a0-0000-7000-8000-00000000dead')));
    assert.equal(missing.status, 200);
    assert.equal(missing.result.isError, true);
    assert.equal(missing.result.structuredContent?.status, 404);
  });
});
