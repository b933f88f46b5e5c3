// The HTTPS sender against real TLS servers: the connection goes to the address the endpoint guard checked,
// the certificate is verified against the URL's host name (not that address), and connections are reused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeCertificate, startReceiver, type Receiver } from '../../../testkit/webhook-receiver.ts';
import { createHttpSender, type HttpSender } from './http-sender.ts';

/** An endpoint as the guard hands it over: the URL as registered, pinned to 127.0.0.1. */
const pinned = (url: string) => ({ url: new URL(url), address: '127.0.0.1', family: 4 as const });

describe('webhook HTTPS sender', () => {
  // Named for localhost only: no IP address in the certificate.
  const byName = makeCertificate('DNS:localhost');
  let server: Receiver;
  let port: string;
  let send: HttpSender;

  before(async () => {
    server = await startReceiver(byName);
    port = new URL(server.url).port;
    send = createHttpSender({ ca: [byName.cert] });
  });
  after(() => server.close());

  test("a URL with a host name: connects to the checked address and verifies the certificate against the name", async () => {
    const result = await send(pinned(`https://localhost:${port}/hook`), {}, '{}', 5000);
    assert.equal(result.error, null);
    assert.equal(result.statusCode, 200);
    assert.equal(result.responseBody, 'ok');
  });

  test('a certificate that does not name the URL\'s host is refused, although the address is the same', async () => {
    const result = await send(pinned(`https://other.example:${port}/hook`), {}, '{}', 5000);
    assert.equal(result.statusCode, null);
    assert.match(result.error ?? '', /other\.example/);
  });

  test('an IP-literal URL is verified against that address, which this certificate does not name', async () => {
    const result = await send(pinned(`https://127.0.0.1:${port}/hook`), {}, '{}', 5000);
    assert.equal(result.statusCode, null);
    assert.match(result.error ?? '', /127\.0\.0\.1/);
  });

  test('an IP-literal URL whose certificate names the address is accepted', async () => {
    const byAddress = makeCertificate('IP:127.0.0.1');
    const other = await startReceiver(byAddress);
    try {
      const result = await createHttpSender({ ca: [byAddress.cert] })(pinned(`${other.url}/hook`), {}, '{}', 5000);
      assert.equal(result.statusCode, 200);
    } finally {
      await other.close();
    }
  });

  test('deliveries to one endpoint reuse a kept-alive connection instead of a handshake each', async () => {
    const before = server.handshakes();
    for (let i = 0; i < 20; i++) assert.equal((await send(pinned(`https://localhost:${port}/hook`), {}, `{"n":${i}}`, 5000)).statusCode, 200);
    assert.ok(server.handshakes() - before <= 1, `${server.handshakes() - before} handshakes for 20 sequential deliveries`);
  });
});
