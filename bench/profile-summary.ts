// Where a request's microseconds go: a window's CPU profile (bench/profiler.ts) folded into areas by the
// script or native function that spent the time itself (self time), divided by the requests answered in
// the window. Native work is charged to the JS function that called it: a socket write's kernel time
// (loopback TCP, waking the load generator) shows as `writeUtf8String`, a node:sqlite statement's as the
// adapter method that ran it.
//
//   node bench/profile-summary.ts <file.cpuprofile> <requests> [top functions, default 25]
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

// First match wins; tested against `url function`.
const areas: Array<[string, RegExp]> = [
  ['socket write (kernel: loopback TCP, waking the client)', /^ (writeUtf8String|writeBuffer|writev|writeLatin1String)$/],
  ['socket read, epoll (libuv)', /^ (readStart|onStreamRead|read)$/],
  ['SQLite statements (node:sqlite)', /src\/db\/sqlite-adapter\.ts |^ (all|run|get|iterate|exec|prepare|columns)$/],
  ['the profiler itself', /node:inspector /],
  ['PostgreSQL client (pg, pg-protocol, pg-pool)', /node_modules\/(pg|pg-protocol|pg-pool|pg-types|pgpass|postgres-[a-z]+)\//],
  ['Kysely', /node_modules\/kysely\//],
  ['Fastify core and router', /node_modules\/(fastify|find-my-way|avvio|light-my-request|fast-querystring|@fastify\/(error|ajv-compiler|fast-json-stringify-compiler|forwarded|proxy-addr))\//],
  ['rate limit (@fastify/rate-limit, toad-cache)', /node_modules\/(@fastify\/rate-limit|toad-cache)\/|src\/http\/rate-limits\.ts /],
  ['validation (ajv)', /node_modules\/ajv|^ validate\d*$|src\/http\/validation\.ts /],
  ['serialisation (fast-json-stringify)', /node_modules\/(fast-json-stringify|fast-uri|json-schema-ref-resolver)\/|^ anonymous$/],
  ['logging (pino)', /node_modules\/(pino|pino-std-serializers|sonic-boom)/],
  ['crypto (hashes, random ids)', /node:internal\/crypto|^ (Hash|digest|update|randomUUID|randomFillSync|crc32)$|node:zlib/],
  ['Node HTTP (parser, headers, response)', /node:_http_|node:internal\/http|^ (llhttp|execute|parserOnHeadersComplete)/],
  ['Node streams, events, timers, promises', /node:(events|internal\/(streams|stream_base_commons|timers|process\/task_queues|async_hooks|event_target))|node:net|node:stream|^ (runMicrotasks|processTicksAndRejections)$/],
  ['garbage collector', /^ \(garbage collector\)$/],
  ['V8 and native, unattributed', /^ \((program|native)\)$/],
];

function areaOf(url: string, functionName: string): string {
  const key = `${url} ${functionName}`;
  for (const [name, pattern] of areas) if (pattern.test(key)) return name;
  if (url.includes('/src/')) return `our code: src/${url.split('/src/')[1]}`;
  if (url.includes('/bench/')) return 'benchmark harness';
  if (url.includes('node_modules/')) return `other package: ${url.split('node_modules/')[1].split('/').slice(0, url.includes('node_modules/@') ? 2 : 1).join('/')}`;
  return url.startsWith('node:') ? 'other Node internals' : 'other';
}

export function summariseProfile(profile: CpuProfile, requests: number, topFunctions = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMicros = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) selfMicros.set(profile.samples[i], (selfMicros.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of selfMicros) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    busy += micros;
    const area = areaOf(url, functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
    const fn = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  }
  const perRequest = (micros: number) => (micros / requests).toFixed(1).padStart(7);
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return [
    `${perRequest(busy)} µs/request busy in the profile (${requests} requests; profiling itself adds some)`,
    '--- by area, µs per request',
    ...sorted(byArea).map(([area, micros]) => `${perRequest(micros)}  ${area}`),
    `--- top ${topFunctions} functions by self time, µs per request`,
    ...sorted(byFunction)
      .slice(0, topFunctions)
      .map(([fn, micros]) => `${perRequest(micros)}  ${fn}`),
  ].join('\n');
}

if (import.meta.main) {
  const [file, requests, top] = process.argv.slice(2);
  if (!file || !requests) {
    process.stderr.write('usage: node bench/profile-summary.ts <file.cpuprofile> <requests> [top functions]\n');
    process.exit(2);
  }
  process.stdout.write(summariseProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, Number(requests), top ? Number(top) : undefined) + '\n');
}
