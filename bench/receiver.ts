// The webhook benchmark's HTTPS receiver, in a process of its own: answers 200 at once and counts arrivals.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import path from 'node:path';

// The parent made the certificate (and trusts it); this process only serves with it.
const dir = process.env.BENCH_TLS_DIR ?? '';
const key = fs.readFileSync(path.join(dir, 'key.pem'));
const cert = fs.readFileSync(path.join(dir, 'cert.pem'));
let count = 0;
const server = https.createServer({ key, cert }, (req, res) => {
  req.resume();
  req.on('end', () => {
    count++;
    res.writeHead(200).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` }));
process.on('message', (m) => {
  if (m === 'count') process.send?.(count);
});
