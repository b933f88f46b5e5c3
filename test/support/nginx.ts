// nginx in front of the API processes, as deploy/nginx.conf configures it, for the deployment test. The file
// is used as it is, but for the substitutions its header lists (ports, certificate, log directory), each of
// which must still match; a main file of our own stands for Debian's /etc/nginx/nginx.conf (pid, error log,
// temporary paths), so that nginx runs unprivileged with everything under a temporary directory.
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { until } from './wait.ts';

export const NGINX = '/usr/sbin/nginx';
export const deployConfig = path.join(import.meta.dirname, '..', '..', 'deploy', 'nginx.conf');

export interface Nginx {
  /** HTTPS, where clients go. */
  httpsPort: number;
  /** Plain HTTP, which only redirects. */
  httpPort: number;
  /** The complete lines of the access log so far. */
  accessLog(): string[];
  /** The error log so far (why nginx answered a request itself: an upstream refused, reset, timed out). */
  errorLog(): string;
  stop(): Promise<void>;
}

/** A port nothing listens on now (for a process that must be told its port before it starts). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function substitute(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`deploy/nginx.conf no longer contains ${JSON.stringify(from)}: update test/support/nginx.ts with it`);
  return text.replaceAll(from, to);
}

/** deploy/nginx.conf with the test's ports, certificate and directory. */
export function renderDeployConfig(options: { upstreams: number[]; httpPort: number; httpsPort: number; dir: string }): string {
  let text = fs.readFileSync(deployConfig, 'utf8');
  text = substitute(text, 'listen 80;\n    listen [::]:80;', `listen 127.0.0.1:${options.httpPort};`);
  text = substitute(text, 'listen 443 ssl http2;\n    listen [::]:443 ssl http2;', `listen 127.0.0.1:${options.httpsPort} ssl http2;`);
  const servers = [...text.matchAll(/^ {4}server 127\.0\.0\.1:(\d+) /gm)];
  if (servers.length !== options.upstreams.length) throw new Error(`deploy/nginx.conf lists ${servers.length} API processes; the test runs ${options.upstreams.length}`);
  servers.forEach((m, i) => (text = substitute(text, `server 127.0.0.1:${m[1]} `, `server 127.0.0.1:${options.upstreams[i]} `)));
  text = substitute(text, '/etc/ssl/atrium/fullchain.pem', `${options.dir}/cert.pem`);
  text = substitute(text, '/etc/ssl/atrium/privkey.pem', `${options.dir}/key.pem`);
  return substitute(text, '/var/log/nginx/', `${options.dir}/`);
}

/** nginx with deploy/nginx.conf in front of the API processes at `upstreams`, serving `certificate` (PEM texts). */
export async function startNginx(options: { upstreams: number[]; httpPort: number; httpsPort: number; certificate: { cert: string; key: string } }): Promise<Nginx> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-nginx-'));
  // Run as root (a CI container), nginx's workers run as `nobody`: they must reach the temporary files.
  fs.chmodSync(dir, 0o755);
  const { httpPort, httpsPort } = options;
  fs.writeFileSync(path.join(dir, 'cert.pem'), options.certificate.cert);
  fs.writeFileSync(path.join(dir, 'key.pem'), options.certificate.key, { mode: 0o600 });
  fs.writeFileSync(path.join(dir, 'atrium.conf'), renderDeployConfig({ ...options, dir }));
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `    ${kind}_temp_path ${dir}/${kind}_temp;`).join('\n');
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    `daemon off;\nworker_processes 2;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;\nevents {\n    worker_connections 1024;\n}\nhttp {\n${temp}\n    default_type application/octet-stream;\n    include ${dir}/atrium.conf;\n}\n`,
  );
  const args = ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')];
  // The configuration is checked first, so that a mistake in it fails with nginx's own message.
  await promisify(execFile)(NGINX, ['-t', ...args]).catch((err: { stderr?: string }) => {
    throw new Error(`nginx -t refused the configuration:\n${err.stderr}`);
  });
  const child = spawn(NGINX, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const errorLog = () => fs.readFileSync(path.join(dir, 'error.log'), 'utf8');
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(httpsPort, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
  try {
    await until(async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${stderr}${errorLog()}`);
      return accepts();
    }, 'nginx to listen', 10_000);
  } catch (err) {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    httpsPort,
    httpPort,
    accessLog: () => completeLines(fs.readFileSync(path.join(dir, 'atrium-access.log'), 'utf8')),
    errorLog,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The lines nginx has finished writing: a long one (a 20 KB request line) may be read while it is being written,
 * and its first part is not the line.
 */
function completeLines(text: string): string[] {
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter(Boolean);
}
