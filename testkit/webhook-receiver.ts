// A real HTTPS webhook receiver for tests: a self-signed certificate made once per test process (with
// openssl), a server on 127.0.0.1, every request recorded with its raw body, and an answer the test chooses.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
  /** The sender's port: which of several worker processes sent it (see test/deployment.test.ts). */
  remotePort: number;
}

interface Certificate {
  dir: string;
  key: string;
  cert: string;
  certFile: string;
}

let certificate: Certificate | undefined;

/** A key and self-signed certificate naming `subjectAltName` (openssl's syntax), removed when the process exits. */
export function makeCertificate(subjectAltName: string): Certificate {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=atrium-test', '-addext', `subjectAltName=${subjectAltName}`,
    '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8'), certFile };
}

/** A key and self-signed certificate for localhost / 127.0.0.1, made once per process. */
export function testCertificate(): Certificate {
  certificate ??= makeCertificate('DNS:localhost,IP:127.0.0.1');
  return certificate;
}

export type Responder = (request: ReceivedRequest) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  /** Decide the answer (default: 200). */
  respond(responder: Responder): void;
  /** Resolves once `count` requests have arrived (all paths, or under `pathPrefix`). */
  waitFor(count: number, pathPrefix?: string, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** TLS handshakes completed so far: deliveries over kept-alive connections add none. */
  handshakes(): number;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1 serving `certificate` (by default the one for localhost / 127.0.0.1). */
export async function startReceiver(certificate: { key: string; cert: string } = testCertificate()): Promise<Receiver> {
  const { key, cert } = certificate;
  let handshakes = 0;
  const received: ReceivedRequest[] = [];
  let responder: Responder = () => ({ status: 200, body: 'ok' });
  const waiters = new Set<() => void>();
  const server = https.createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ReceivedRequest = { path: req.url ?? '/', headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), receivedAt: performance.now(), remotePort: req.socket.remotePort ?? 0 };
      received.push(request);
      for (const wake of waiters) wake();
      const answer = responder(request);
      setTimeout(() => res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? ''), answer.delayMs ?? 0);
    });
  });
  server.on('secureConnection', () => handshakes++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    received,
    respond(r) {
      responder = r;
    },
    waitFor(count, pathPrefix = '', timeoutMs = 10_000) {
      const matching = () => received.filter((r) => r.path.startsWith(pathPrefix));
      return new Promise((resolve, reject) => {
        const check = () => {
          if (matching().length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(matching());
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`only ${matching().length} of ${count} webhook requests arrived under ${pathPrefix || '/'}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    handshakes: () => handshakes,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
