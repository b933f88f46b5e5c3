// The app listening on loopback with a caller and one keep-alive socket to it: for tests that count what the
// server does per request (promise-counter.ts), where a client of callbacks over one socket adds nothing of its
// own to the count. Registers its own before/after hooks in the describe block that calls it.
import http from 'node:http';
import { after, before } from 'node:test';
import { startTestApp, type TestAppOptions, type TestContext } from './harness.ts';
import type { Caller } from './factories.ts';

export interface OneSocketApp {
  readonly t: TestContext;
  readonly caller: Caller;
  readonly port: number;
  /** One socket, kept alive between requests. */
  readonly agent: http.Agent;
}

export function appOnOneSocket(options: TestAppOptions = {}): OneSocketApp {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let t: TestContext | undefined;
  let caller: Caller | undefined;
  let port: number | undefined;
  before(async () => {
    t = await startTestApp(options);
    caller = await t.make.caller();
    port = await t.listen();
  });
  after(async () => {
    agent.destroy();
    await t?.close();
  });
  return {
    get t() {
      return t!;
    },
    get caller() {
      return caller!;
    },
    get port() {
      return port!;
    },
    agent,
  };
}
