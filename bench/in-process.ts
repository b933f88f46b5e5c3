// Floors under the request goals: the database work of a request, run by the server process itself on the
// server's database handle with no request around it, as many at a time as the load has connections (on
// PostgreSQL concurrent work shares the pipelined round trips; one at a time each would wait idle for its own,
// which costs more CPU than the request does). A request costs at least its bare route plus this, so this
// divided by the bare route is the part of the request's budget the database takes by itself.
//   read:  the request's two reads, the organisation by its address (tenancy) and the section, through the services
//   patch: the spread PATCH's transaction, the section's UPDATE and its `section.updated` event, through the
//          sections service and `inTransaction` (its body answering at once where its statements do, as the
//          request's), over the same 1,000 sections; every title is new, so each writes
//   patch-audited: the same transaction with the audit entry the pipeline adds to it (src/audit/audit-log.ts), so
//          that beside `patch`, in the same run, it shows what the entry costs a write with no HTTP noise around it
// On PostgreSQL the read starts from the cached organisation and sends its check as a rider of the section's read
// (http/tenancy-cache.ts), one statement, as the request does; it read the organisation by itself first before,
// a round trip the request does not make.
// On PostgreSQL both PATCHes offer their transaction a final statement, as the request does there
// (http/operation-runner.ts, `finalStatements`): the UPDATE, its event and (patch-audited) the entry then go as one
// statement, group-committed on a shared writer, the request's own path; and, as the request and the read here,
// they start from the cached organisation, whose check is folded into that statement (until 2026-11-30 they left
// it out, a part of the statement and its check that the request's own share was charged with). Without the offer they took the full path
// instead (BEGIN and the statements in one write, the COMMIT in a second, on a pooled connection) and measured a
// write no PATCH makes.
import type { Services } from '../src/services.ts';
import type { Database, Db, DialectName } from '../src/db/database.ts';
import { createTenancyCache } from '../src/http/tenancy-cache.ts';
import { sendRider, withRider } from '../src/db/riders.ts';
import { auditEntryStatement, recordAudit, type AuditEntry } from '../src/audit/audit-log.ts';
import { offerFinalStatement, type FinalStatementOffer } from '../src/db/final-statement.ts';
import type { Fixture } from './seed.ts';
import { andThen, type MaybeAsync } from '../src/maybe-async.ts';
import { inTransaction } from '../src/db/in-transaction.ts';

export type InProcessWork = 'read' | 'patch' | 'patch-audited';

export interface InProcessResult {
  /** Units of work done (reads or PATCH transactions). */
  done: number;
  /** This process's CPU time (user + system) over all of them, µs. */
  cpuMicros: number;
  /** Of it, user time (JavaScript and native code; the rest is the kernel's on the process's behalf), µs. */
  userMicros: number;
  /** Its voluntary context switches over all of them (measurement.ts Sample). */
  sleeps: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);

let written = 0;

/**
 * SQLite's read (app.ts keeps no tenancy cache there): the organisation by its address, then the section, each
 * answered at once as on the request's path (src/maybe-async.ts), not through `await`s the request does not make.
 */
function readWithTenancy(services: Services, db: Db, fixture: Fixture): () => MaybeAsync<unknown> {
  return () => andThen(services.organisations.findByAddress(fixture.host), (org) => services.sections.get(db, org!.id, fixture.sectionId));
}

/**
 * PostgreSQL's read, as the request makes it (http/registry.ts runChecked): from the cached organisation, whose
 * check rides with the section's read, folded into its one statement.
 */
function readWithCachedTenancy(services: Services, db: Db, fixture: Fixture): () => Promise<unknown> {
  const withCachedTenancy = cachedTenancyCheck(services, db, fixture);
  return () => withCachedTenancy((organisationId) => services.sections.get(db, organisationId, fixture.sectionId));
}

/**
 * Runs work from the cached organisation with its check riding along (http/tenancy-cache.ts), answered once the
 * check holds, as a PostgreSQL request runs (http/registry.ts runCheckedWith).
 */
function cachedTenancyCheck(services: Services, db: Db, fixture: Fixture): <T>(work: (organisationId: string) => MaybeAsync<T>) => Promise<T> {
  const cache = createTenancyCache(services.organisations);
  return async (work) => {
    let cached = cache.get(fixture.host);
    if (cached === undefined) cache.set(fixture.host, (cached = (await services.organisations.findByAddress(fixture.host))!));
    const rider = cache.riderFor(fixture.host, cached);
    const done = await withRider(rider, () => work(cached.id));
    await sendRider(db, rider);
    return done;
  };
}

function workOf(kind: InProcessWork, services: Services, db: Db, dialect: DialectName, fixture: Fixture): () => MaybeAsync<unknown> {
  if (kind === 'read') return dialect === 'postgres' ? readWithCachedTenancy(services, db, fixture) : readWithTenancy(services, db, fixture);
  if (kind !== 'patch' && kind !== 'patch-audited') throw new Error(`in-process: no work called ${JSON.stringify(kind)} (read, patch, patch-audited)`);
  // The entry the pipeline writes for the spread PATCH (http/write-audit.ts): an API key's, by REST, naming the title.
  const entryFor = (id: string): AuditEntry => ({
    organisationId: fixture.organisationId,
    actor: { type: 'user', id: fixture.personId, name: null },
    credential: { kind: 'api_key', id: fixture.personId },
    via: 'rest',
    action: 'updateSection',
    target: { type: 'section', id },
    outcome: 'success',
    status: 200,
    requestId: `req-${written}`,
    ip: '127.0.0.1',
    userAgent: null,
    changedFields: ['title'],
  });
  const withCachedTenancy = cachedTenancyCheck(services, db, fixture);
  return () => {
    written += 1;
    const id = fixture.spreadSectionIds[written % fixture.spreadSectionIds.length];
    const title = `In process #${process.pid}-${written}`;
    const entry = entryFor(id);
    // The entry goes with the final statement where one went (PostgreSQL), as the pipeline's does; else in the transaction.
    const tail = () => (kind === 'patch-audited' ? [auditEntryStatement(db, entry)] : []);
    // A body that answers at once where its statements do (SQLite), as the request's (http/operation-runner.ts).
    const transaction = (offer?: FinalStatementOffer) =>
      inTransaction(db, (tx) =>
        andThen(services.sections.update(tx, fixture.organisationId, id, { title }), (section) => (kind === 'patch-audited' && !offer?.used ? andThen(recordAudit(tx, entry), () => section) : section)),
      );
    if (dialect !== 'postgres') return transaction();
    // On PostgreSQL the cached organisation's check rides with it, folded into its one statement, and the answer
    // waits for the check, as the request's does (http/registry.ts runCheckedWith).
    return withCachedTenancy(() => offerFinalStatement(tail, transaction));
  };
}

/** Does `kind` of work for `seconds` from `concurrency` loops. */
export async function runInProcess(kind: InProcessWork, services: Services, database: Database, fixture: Fixture, seconds: number, concurrency: number): Promise<InProcessResult> {
  const work = workOf(kind, services, database.db, database.dialect, fixture);
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const switchesBefore = process.resourceUsage();
  const started = performance.now();
  const until = started + seconds * 1000;
  async function loop(): Promise<void> {
    while (performance.now() < until) {
      const t0 = performance.now();
      await work();
      latencies.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  const cpu = process.cpuUsage(cpuBefore);
  const switches = process.resourceUsage();
  latencies.sort((a, b) => a - b);
  return {
    done: latencies.length,
    cpuMicros: cpu.user + cpu.system,
    userMicros: cpu.user,
    sleeps: switches.voluntaryContextSwitches - switchesBefore.voluntaryContextSwitches,
    seconds: (performance.now() - started) / 1000,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}
