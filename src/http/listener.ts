// The process's HTTP listener (docs/operating.md#starting-losing-the-database-stopping). It opens before the database is ready, so that
// `/healthz` answers 200 and `/readyz` 503 while the process waits for its database, and every other request
// waits for the app a few seconds (STARTING_WAIT_MS), then is a 502 `database.unavailable`; once the app is
// attached, requests go to it. At shutdown it drains: the listening socket closes first, once no connection has
// been accepted for a moment since the signal (a new connection is then refused, never answered 503, nor reset
// while it waited to be accepted), requests in flight finish with `Connection: close`, and idle keep-alive connections are closed
// once idle for the keep-alive timeout.
import http from 'node:http';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { DATABASE_RETRY_AFTER_S } from '../db/availability.ts';
import { ApiError } from '../errors/api-error.ts';
import { createClientErrorHandler } from './client-errors.ts';
import { problemBody } from '../errors/problems.ts';

/**
 * A request that arrives while the process is starting waits this long for the app before it is answered 502:
 * behind a proxy (deploy/nginx.conf) a process that has just been restarted gets requests as soon as it
 * listens, a second or so before it is ready, and they should be served, not refused. A database that is
 * away longer still gets its 502 within the 5 s the contract allows.
 */
export const STARTING_WAIT_MS = 3_000;
/** How long the traffic must be quiet before the listening socket closes (see closeListeningSocket). */
const QUIET_MS = 100;
const LONGEST_QUIET_WAIT_MS = 1_000;

export interface ListenerLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface Listener {
  /** `http://host:port` it listens on. */
  readonly url: string;
  /** From now on every request goes to `app`. */
  attach(app: FastifyInstance): void;
  /** Stops accepting connections, lets requests in flight finish (at most `timeoutMs`), closes every connection. */
  drain(timeoutMs: number): Promise<void>;
}

function answerWhileStarting(request: http.IncomingMessage, response: http.ServerResponse, errorsUrl: string): void {
  const requestId = `req_${randomUUID().replaceAll('-', '')}`;
  response.setHeader('Request-Id', requestId);
  const path = (request.url ?? '').split('?')[0];
  if (path === '/healthz') {
    response.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' }).end('{"status":"ok"}');
    return;
  }
  const problem =
    path === '/readyz'
      ? new ApiError('health.database_unreachable', 'The service is starting: its database is not reachable or not ready yet.')
      : new ApiError('database.unavailable', `The service is starting and its database is not ready yet; retry in ${DATABASE_RETRY_AFTER_S} seconds.`, {
          retryAfter: DATABASE_RETRY_AFTER_S,
        });
  if (problem.retryAfter !== undefined) response.setHeader('Retry-After', String(problem.retryAfter));
  response.writeHead(problem.status, { 'Content-Type': 'application/problem+json; charset=utf-8' }).end(JSON.stringify(problemBody(problem, requestId, errorsUrl)));
}

export async function openListener(options: { host: string; port: number; errorsUrl: string; log: ListenerLog }): Promise<Listener> {
  const { errorsUrl, log } = options;
  let app: FastifyInstance | undefined;
  /** serving → closing (the listening socket is about to close) → draining (it is closed). */
  let phase: 'serving' | 'closing' | 'draining' = 'serving';
  /** Responses not yet finished, per connection: a connection with none is idle. */
  const active = new Map<net.Socket, Set<http.ServerResponse>>();
  /** Since when each idle connection has been idle. */
  const idleSince = new Map<net.Socket, number>();
  /** Requests that arrived while the listening socket was closing: served once it is closed. */
  const parked: Array<() => void> = [];
  /** When a connection was last accepted (while they keep coming, one may be waiting to be accepted). */
  let lastAccepted = Date.now();
  let settled: (() => void) | undefined;

  /** Requests that arrived before the app, waiting for it (STARTING_WAIT_MS). */
  const early = new Set<() => void>();

  const serve = (request: http.IncomingMessage, response: http.ServerResponse) => {
    if (app) return app.routing(request, response);
    const path = (request.url ?? '').split('?')[0];
    // Health probes ask how the process is now: answered at once.
    if (path === '/healthz' || path === '/readyz') return answerWhileStarting(request, response, errorsUrl);
    const timer = setTimeout(() => {
      early.delete(go);
      answerWhileStarting(request, response, errorsUrl);
    }, STARTING_WAIT_MS);
    const go = () => {
      clearTimeout(timer);
      app!.routing(request, response);
    };
    early.add(go);
    response.once('close', () => {
      clearTimeout(timer);
      early.delete(go);
    });
  };
  const server = http.createServer((request, response) => {
    const socket = request.socket;
    const open = active.get(socket) ?? new Set();
    active.set(socket, open);
    open.add(response);
    idleSince.delete(socket);
    response.on('close', () => {
      open.delete(response);
      if (open.size === 0 && !socket.destroyed) idleSince.set(socket, Date.now());
      settled?.();
    });
    if (phase === 'serving') return serve(request, response);
    // Once the listening socket is closed, a connection is not used again: its client will find no other here.
    response.setHeader('Connection', 'close');
    if (phase === 'closing') parked.push(() => serve(request, response));
    else serve(request, response);
  });
  server.on('connection', (socket: net.Socket) => {
    active.set(socket, new Set());
    lastAccepted = Date.now();
    idleSince.set(socket, lastAccepted);
    socket.on('close', () => {
      active.delete(socket);
      idleSince.delete(socket);
      settled?.();
    });
  });
  server.on('clientError', createClientErrorHandler(errorsUrl));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as net.AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

  const inFlight = () => [...active.values()].reduce((n, set) => n + set.size, 0);
  /**
   * Idle connections are closed at shutdown as at any other time: once idle for the keep-alive timeout (Node's
   * 5 s), never sooner. Until then a client may send a request on one, and a request sent on a connection as it
   * closes is lost: a proxy cannot send a POST to another process, since it may have had its effect. A proxy
   * that closes its idle connections sooner (nginx's keepalive_timeout of 4 s in deploy/nginx.conf) closes them
   * itself, so that nothing races.
   */
  const idleTooLong = (now: number) => [...idleSince].filter(([socket, since]) => active.get(socket)?.size === 0 && now - since >= server.keepAliveTimeout).map(([socket]) => socket);
  /** Resolves when a response or a connection ends, or after `ms`. */
  const wakeOrAfter = (ms: number) => Promise.race([new Promise<void>((resolve) => (settled = resolve)), sleep(Math.max(0, ms))]);
  /**
   * Resolves after the event loop has polled for I/O once more: a connection or a request already in the
   * kernel is accepted or read by then. A timer fires before the loop's poll, so a decision taken in one (quiet,
   * idle) would not see what arrived while the process was busy since the last poll; taken after this, it sees
   * all but what arrives in the microseconds between the poll and the decision. Two immediates, not one: called
   * from an I/O callback (the SIGTERM that starts the drain is one), an immediate runs in the same turn of the
   * loop, right after the poll that delivered it, without polling again; one scheduled by it runs in the next
   * turn, after its poll. (With one, a drain that started with no recent connection closed the socket within
   * 2 ms of the signal, and two connections that had arrived meanwhile were reset: a 502 for a POST, CI.)
   */
  const afterPoll = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

  /**
   * Closing a listening socket resets every connection the kernel has completed but we have not accepted
   * yet: a client that connected a moment before would see a reset instead of a refusal, and a proxy that had
   * sent a POST on it could not send it elsewhere (it may have had its effect): a 502. So the socket closes
   * once no connection has been accepted for QUIET_MS, when none is likely to be waiting. Until then new
   * requests are parked (their clients wait for an answer instead of sending more), and responses in progress
   * keep their connections open (a `Connection: close` now would send their clients to connect again, here,
   * at the worst moment: a proxy with upstream keep-alive, deploy/nginx.conf, then opens no new connection).
   * Traffic that never leaves it quiet closes it after LONGEST_QUIET_WAIT_MS all the same. Only then do responses
   * say `Connection: close`: the next connection a client opens is refused, and a proxy tries another process.
   */
  async function closeListeningSocket(): Promise<{ closed: Promise<void>; waitedMs: number; quiet: boolean; parked: number }> {
    phase = 'closing';
    const started = Date.now();
    // The quiet counts from the signal too, not only from the last connection: traffic that had been quiet may
    // start again in the very moment the drain begins (a proxy that holds no idle connection here, sending its
    // next request). Closed within a millisecond or two of the signal, the socket reset two connections made in
    // that moment, after the poll that would have accepted them (a 502 for a POST behind nginx, CI); a drain now
    // accepts and parks what comes in the first QUIET_MS, and closes once nothing more has come for as long.
    lastAccepted = Math.max(lastAccepted, started);
    const waiting = () => Date.now() - lastAccepted < QUIET_MS && Date.now() - started < LONGEST_QUIET_WAIT_MS;
    do {
      while (waiting()) await wakeOrAfter(QUIET_MS - (Date.now() - lastAccepted));
      await afterPoll();
    } while (waiting());
    const shape = { waitedMs: Date.now() - started, quiet: Date.now() - lastAccepted >= QUIET_MS, parked: parked.length };
    // net.Server's close, not http.Server's: the latter also destroys idle keep-alive connections at once,
    // resetting a request that is already on its way on one of them.
    const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
    phase = 'draining';
    for (const set of active.values()) for (const response of set) if (!response.headersSent) response.setHeader('Connection', 'close');
    for (const release of parked.splice(0)) release();
    return { closed, ...shape };
  }

  return {
    url,
    attach(next) {
      app = next;
      for (const go of early) go();
      early.clear();
    },
    async drain(timeoutMs) {
      const started = Date.now();
      const { closed, ...closing } = await closeListeningSocket();
      // How it closed (after the quiet, or at the longest wait, with how many requests held): what to read first
      // should a client ever see a reset at shutdown.
      log.info({ inFlight: inFlight(), connections: active.size, ...closing }, 'listener closed; finishing requests in flight');
      const deadline = started + timeoutMs;
      while (active.size > 0 && Date.now() < deadline) {
        if (idleTooLong(Date.now()).length > 0) {
          // Idle still once a request already sent on it would have been read.
          await afterPoll();
          const idle = idleTooLong(Date.now());
          if (idle.length > 0) log.info({ closed: idle.length, connections: active.size }, 'idle keep-alive connections closed');
          for (const socket of idle) socket.destroy();
        }
        // Woken by a response or a connection ending, or at least every 50 ms to look at the clock.
        await wakeOrAfter(Math.min(50, deadline - Date.now()));
      }
      if (active.size > 0) {
        log.warn({ inFlight: inFlight(), connections: active.size }, `requests still running after ${timeoutMs} ms; closing their connections`);
        for (const socket of active.keys()) socket.destroy();
      }
      await closed;
    },
  };
}
