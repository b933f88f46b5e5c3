// One schema for every environment variable: parsed once at start-up, fails fast with the variable's name.
// Each variable is documented in the table of docs/operating.md#configuration; keep the two in step.
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { publicOrigin } from './public-origin.ts';

const Bool = Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')]);
const Int = (min: number, max: number) => Type.String({ pattern: '^[0-9]+$', minValue: min, maxValue: max });
const Url = (schemes: string) => Type.String({ pattern: `^(${schemes})://` });

export const ConfigSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Int(0, 65535),
  DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  STORAGE_DIR: Type.Optional(Type.String({ minLength: 1 })),
  STORAGE_TARGETS_ROOT: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_URL: Type.Optional(Url('postgres|postgresql')),
  REDIS_URL: Type.Optional(Url('redis|rediss')),
  SMTP_URL: Type.Optional(Url('smtp|smtps')),
  // One line holding an address: `Name <address>` or a bare address (no line breaks: it becomes a header).
  MAIL_FROM: Type.String({ pattern: '^[^\\r\\n]*@[^\\r\\n]*$', maxLength: 320 }),
  MAIL_POLL_INTERVAL_MS: Int(100, 3_600_000),
  ATRIUM_ROLES: Type.String({ pattern: '^(api|worker)(,(api|worker))*$' }),
  PUBLIC_SCHEME: Type.Union([Type.Literal('http'), Type.Literal('https')], { default: 'http' }),
  PUBLIC_PORT: Type.Optional(Int(1, 65535)),
  TRUST_PROXY: Type.String({ minLength: 1 }),
  ERRORS_URL: Type.Optional(Url('https?')),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info' }),
  // Up to a hundred million: the benchmarks' fast machines answer more than a million a minute on one key.
  RATE_LIMIT_PER_MINUTE: Int(1, 100_000_000),
  CONCURRENCY_LIMIT: Int(1, 100_000),
  BODY_LIMIT_BYTES: Int(1024, 100 * 1024 * 1024),
  DEV_BOOTSTRAP: Bool,
  WEBHOOK_ALLOW_HOSTS: Type.Optional(Type.String()),
  WEBHOOK_CA_FILE: Type.Optional(Type.String({ minLength: 1 })),
  WEBHOOK_POLL_INTERVAL_MS: Int(10, 60_000),
  WEBHOOK_LEASE_MS: Int(1000, 3_600_000),
  AUDIT_RETENTION_DAYS: Int(1, 36_500),
  METRICS_PORT: Type.Optional(Int(0, 65535)),
  METRICS_HOST: Type.Optional(Type.String({ minLength: 1 })),
});

const defaults: Record<string, string> = {
  PORT: '8080',
  TRUST_PROXY: 'false',
  RATE_LIMIT_PER_MINUTE: '1200',
  CONCURRENCY_LIMIT: '25',
  BODY_LIMIT_BYTES: String(1024 * 1024),
  DEV_BOOTSTRAP: 'true',
  MAIL_FROM: 'Atrium <no-reply@localhost>',
  MAIL_POLL_INTERVAL_MS: '5000',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_LEASE_MS: '60000',
  AUDIT_RETENTION_DAYS: '400',
  ATRIUM_ROLES: 'api,worker',
};

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** The deployment's own file storage. */
  storageDir: string;
  /** Organisation storage targets are directories below this root, and nowhere else. */
  storageTargetsRoot: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  smtpUrl: string | undefined;
  /** The From of every mail the service sends (`Name <address>`). */
  mailFrom: string;
  /** How often a worker looks for scheduled email messages whose time has come. */
  mailPollIntervalMs: number;
  /** What this process runs: the HTTP API, the background jobs (worker), or both. */
  roles: ReadonlySet<Role>;
  publicScheme: 'http' | 'https';
  /**
   * Port of organisation addresses in absolute URLs (docs/conventions.md#addresses-and-requests): PUBLIC_PORT, else PORT with
   * `http` (development: the printed URL works as it is) and none with `https` (a TLS proxy on 443).
   */
  publicPort: number | undefined;
  /**
   * Which peers are proxies whose X-Forwarded-For/-Host/-Proto are believed: none (false), every one (true), or
   * those at these addresses or CIDR ranges (Fastify's `trustProxy`, through proxy-addr).
   */
  trustProxy: boolean | string[];
  /** Base of problem `type` URIs; defaults to this service's own error pages. */
  errorsUrl: string;
  logLevel: string;
  rateLimitPerMinute: number;
  concurrencyLimit: number;
  bodyLimitBytes: number;
  devBootstrap: boolean;
  /** Host names or CIDR ranges webhooks may reach although they are not public (development, tests). */
  webhookAllowHosts: string[];
  /** A PEM file of extra certificate authorities trusted for webhook endpoints. */
  webhookCaFile: string | undefined;
  /** How often an idle worker looks for new events and due deliveries. */
  webhookPollIntervalMs: number;
  /** How long a worker owns the deliveries it claimed; a worker that dies loses them to another after this. */
  webhookLeaseMs: number;
  /** Audit log entries older than this many days are removed by the worker. */
  auditRetentionDays: number;
  /** Port of the Prometheus listener (`GET /metrics`); undefined: no metrics are served or collected. */
  metricsPort: number | undefined;
  /** Address the metrics listener binds to; HOST by default. */
  metricsHost: string;
}

export type Role = 'api' | 'worker';

const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUST_PROXY: `true`/`false` (`1`/`0`), or the proxies' addresses. Naming them is the safer setting: the
 * client's address is then the nearest one in X-Forwarded-For that is not a trusted proxy's, so neither a
 * client reaching a process directly nor a value a client put in the header itself can choose the address
 * that the sign-in lockout counts.
 */
function parseTrustProxy(value: string | undefined): boolean | string[] | undefined {
  if (value === undefined || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  const entries = value.split(',').map((e) => e.trim());
  // Written out in full (ipaddr.js alone would also take `127.1` or `1`, which nobody means).
  const address = (a: string) => ipaddr.IPv4.isValidFourPartDecimal(a) || (a.includes(':') && ipaddr.IPv6.isValid(a));
  const valid = (e: string) => PROXY_RANGE_NAMES.has(e) || (e.includes('/') ? address(e.slice(0, e.indexOf('/'))) && ipaddr.isValidCIDR(e) : address(e));
  return entries.every(valid) ? entries : undefined;
}

export class ConfigError extends Error {
  /** One `VARIABLE: what is wrong` per bad variable, for whoever reports them one by one (the CLI's --json). */
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

/** Parses the environment (or a test's overrides); throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key] ?? defaults[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const withDefaults = Value.Default(ConfigSchema, raw) as Record<string, string>;
  const problems = [...Value.Errors(ConfigSchema, withDefaults)].map(
    (e) => `${e.instancePath.slice(1) || (e.params as { requiredProperties?: string[] }).requiredProperties?.join(', ')}: ${e.message}`,
  );
  for (const [key, schema] of Object.entries(ConfigSchema.properties)) {
    const s = schema as { minValue?: number; maxValue?: number };
    const v = withDefaults[key];
    if (s.minValue !== undefined && v !== undefined && /^[0-9]+$/.test(v) && (Number(v) < s.minValue || Number(v) > (s.maxValue ?? Infinity))) {
      problems.push(`${key}: must be between ${s.minValue} and ${s.maxValue}`);
    }
  }
  const trustProxy = parseTrustProxy(withDefaults.TRUST_PROXY);
  if (trustProxy === undefined) problems.push('TRUST_PROXY: must be true, false, or a comma-separated list of addresses or CIDR ranges (loopback, linklocal, uniquelocal name theirs)');
  if (problems.length > 0) throw new ConfigError(problems);
  const c = withDefaults as Static<typeof ConfigSchema>;
  const flag = (v: string) => v === 'true' || v === '1';
  const port = Number(c.PORT);
  const publicPort = c.PUBLIC_PORT !== undefined ? Number(c.PUBLIC_PORT) : c.PUBLIC_SCHEME === 'http' ? port : undefined;
  return {
    host: c.HOST,
    port,
    dataDir: path.resolve(c.DATA_DIR),
    storageDir: path.resolve(c.STORAGE_DIR ?? path.join(c.DATA_DIR, 'storage')),
    storageTargetsRoot: path.resolve(c.STORAGE_TARGETS_ROOT ?? path.join(c.DATA_DIR, 'targets')),
    databaseUrl: c.DATABASE_URL,
    redisUrl: c.REDIS_URL,
    smtpUrl: c.SMTP_URL,
    mailFrom: c.MAIL_FROM,
    mailPollIntervalMs: Number(c.MAIL_POLL_INTERVAL_MS),
    roles: new Set(c.ATRIUM_ROLES.split(',') as Role[]),
    publicScheme: c.PUBLIC_SCHEME,
    publicPort,
    trustProxy: trustProxy!,
    errorsUrl: (c.ERRORS_URL ?? `${publicOrigin({ publicScheme: c.PUBLIC_SCHEME, publicPort }, 'localhost')}/docs/errors`).replace(/\/$/, ''),
    logLevel: c.LOG_LEVEL,
    rateLimitPerMinute: Number(c.RATE_LIMIT_PER_MINUTE),
    concurrencyLimit: Number(c.CONCURRENCY_LIMIT),
    bodyLimitBytes: Number(c.BODY_LIMIT_BYTES),
    devBootstrap: flag(c.DEV_BOOTSTRAP),
    webhookAllowHosts: (c.WEBHOOK_ALLOW_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
    webhookCaFile: c.WEBHOOK_CA_FILE,
    webhookPollIntervalMs: Number(c.WEBHOOK_POLL_INTERVAL_MS),
    webhookLeaseMs: Number(c.WEBHOOK_LEASE_MS),
    auditRetentionDays: Number(c.AUDIT_RETENTION_DAYS),
    metricsPort: c.METRICS_PORT !== undefined ? Number(c.METRICS_PORT) : undefined,
    metricsHost: c.METRICS_HOST ?? c.HOST,
  };
}
