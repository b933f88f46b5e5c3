// A TCP proxy a test puts between the server and PostgreSQL, to take the database away without touching the
// machine's PostgreSQL: `forward` passes bytes both ways; `refuse` drops every connection and resets new
// ones (the database is down); `blackhole` keeps connections open but lets nothing through (the network
// lost its packets), so only timeouts notice.
import net from 'node:net';

export type ProxyMode = 'forward' | 'refuse' | 'blackhole';

export interface TcpProxy {
  readonly port: number;
  /** The same URL, with host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string;
  set(mode: ProxyMode): void;
  /** Connections accepted since the proxy started. */
  readonly accepted: number;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
}

export async function startTcpProxy(target: { host: string; port: number }, initial: ProxyMode = 'forward'): Promise<TcpProxy> {
  let mode = initial;
  let accepted = 0;
  const pairs = new Set<Pair>();

  const link = (pair: Pair) => {
    pair.client.pipe(pair.upstream);
    pair.upstream.pipe(pair.client);
  };
  const unlink = (pair: Pair) => {
    pair.client.unpipe(pair.upstream);
    pair.upstream.unpipe(pair.client);
    pair.client.pause();
    pair.upstream.pause();
  };
  const drop = (pair: Pair) => {
    pair.client.resetAndDestroy();
    pair.upstream.destroy();
    pairs.delete(pair);
  };

  const server = net.createServer((client) => {
    accepted++;
    if (mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => drop(pair);
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    if (mode === 'forward') link(pair);
    else unlink(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    get accepted() {
      return accepted;
    },
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    set(next) {
      mode = next;
      for (const pair of [...pairs]) {
        if (next === 'refuse') drop(pair);
        else if (next === 'blackhole') unlink(pair);
        else {
          link(pair);
          pair.client.resume();
          pair.upstream.resume();
        }
      }
    },
    async close() {
      for (const pair of [...pairs]) drop(pair);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
