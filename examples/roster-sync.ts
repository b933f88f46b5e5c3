// Nightly roster sync: send a student information system's export of people and enrolments to Atrium as bulk
// upserts, people first, then their enrolments.
//
//   ATRIUM_BASE_URL=https://school.example/api/v1 ATRIUM_API_KEY=atr_live_… node examples/roster-sync.ts roster.csv
//
// The CSV (UTF-8, a header row, comma-separated, RFC 4180 quoting) has one row per enrolment, with its person:
//   enrolment_id  required  the SIS's id of the enrolment: its `external_id` in Atrium, the key of its upsert
//   person_id     required  the SIS's id of the person: the user's `external_id` in Atrium
//   email         required  the person's e-mail address
//   name          required  the person's name
//   course_code   required  the course's `external_id` in Atrium
//   role          optional  student | non_editing_teacher | teacher (empty: the enrolment method's role)
//   status        optional  active | suspended (empty: active when created, unchanged after)
//   starts_at     optional  RFC 3339 (empty: from the start)
//   ends_at       optional  RFC 3339 (empty: open-ended)
// A person's e-mail and name are taken from their first row. Each course's first enabled `manual` enrolment
// method is used.
//
// People go first, as `upsert`s by `person_id` to `POST /users/bulk`: new ones are created (with no role: their
// enrolments say what they do in each course), known ones get their e-mail and name. Their Atrium ids, read
// from the results, go into the enrolments, sent as `upsert`s to `POST /enrolments/bulk`. Both in requests of
// 500. A person or an enrolment already as the row says is reported `unchanged`: Atrium writes nothing and
// sends no event for it, so resending the whole roster every night is cheap. A row whose person could not be upserted
// fails with that person's code.
// Each request carries an Idempotency-Key derived from the file's content hash, the run and the batch. If the
// run fails half-way (network, server restart), run the same command again: it finds the run's state file
// (`<csv>.sync-state.json`), sends every batch again with the same keys, and Atrium replays the batches it
// already applied instead of applying them twice. The state file is removed when a run completes, so the next
// night's run, even of an identical file, is a new run that checks the roster afresh.
// Each request also says `Prefer: return=minimal`: this sync only counts outcomes and needs each person's id, so
// every result's `data` comes back as `{ "id": … }` instead of the whole record (about a fifth of the bytes to
// send, record for the key, and parse). A retry says it too: the preference is part of what the key stands for.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createAtriumClient, type AtriumClient } from '../clients/typescript/index.ts';

const BATCH_SIZE = Number(process.env.ROSTER_BATCH_SIZE ?? 500); // the API's limit per bulk request
const ATTEMPTS = 3;

type Row = Record<string, string>;

/** RFC 4180: quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsv(text: string): Row[] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') record.push(field), (field = '');
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      record.push(field), records.push(record), (field = ''), (record = []);
    } else field += ch;
  }
  if (field !== '' || record.length > 0) record.push(field), records.push(record);
  const [header, ...rows] = records.filter((r) => r.some((f) => f.trim() !== ''));
  return rows.map((r) => Object.fromEntries(header.map((name, i) => [name.trim(), (r[i] ?? '').trim()])));
}

interface Summary {
  people: { created: number; updated: number; unchanged: number; failed: number };
  created: number;
  updated: number;
  unchanged: number;
  failed: Map<string, number[]>;
}

type BulkPath = '/users/bulk' | '/enrolments/bulk';
interface BulkResults {
  results: Array<{ status: number; unchanged?: boolean; data?: { id: string }; error?: { code: string } }>;
}

/** The enrolment method each course's rows use: its first enabled manual method. */
async function methodsByCourse(atrium: AtriumClient, codes: string[]): Promise<Map<string, { course_id: string; method_id: string } | string>> {
  const found = new Map<string, { course_id: string; method_id: string } | string>();
  for (const code of codes) {
    const course = await atrium.GET('/courses/ext:{external_id}', { params: { path: { external_id: code } } });
    if (course.error) {
      found.set(code, course.error.code);
      continue;
    }
    const methods = await atrium.GET('/enrolment_methods', { params: { query: { course_id: course.data.id, limit: 200 } } });
    if (methods.error) throw new Error(`listing the enrolment methods of ${code}: ${methods.error.code}`);
    const manual = methods.data.data.find((m) => m.type === 'manual' && m.status === 'enabled');
    found.set(code, manual ? { course_id: course.data.id, method_id: manual.id } : 'enrolment_method.not_found');
  }
  return found;
}

/** One bulk request, retried with its key on a network failure or a 5xx/409 in_progress/429; throws when it gives up. */
async function send(atrium: AtriumClient, path: BulkPath, key: string, operations: unknown[]): Promise<BulkResults> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await atrium.POST(path, { params: { header: { 'Idempotency-Key': key, Prefer: 'return=minimal' } }, body: { operations } as never });
      if (res.data) return res.data as BulkResults;
      const retryable = res.response.status >= 500 || res.response.status === 429 || res.error?.code === 'idempotency.in_progress';
      if (!retryable || attempt === ATTEMPTS) throw new Error(`bulk request refused: ${res.response.status} ${res.error?.code}: ${res.error?.detail}`);
    } catch (err) {
      if (attempt === ATTEMPTS || (err as Error).message.startsWith('bulk request refused')) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
  }
}

/** Sends `operations` in requests of BATCH_SIZE, each with its key; calls `each` with every operation's result. */
async function sendAll<T extends { op: unknown }>(atrium: AtriumClient, path: BulkPath, keyOf: (batch: number) => string, operations: T[], each: (result: BulkResults['results'][number], item: T) => void, log: (line: string) => void) {
  const batches = Math.ceil(operations.length / BATCH_SIZE);
  for (let b = 0; b < batches; b++) {
    const batch = operations.slice(b * BATCH_SIZE, (b + 1) * BATCH_SIZE);
    const response = await send(atrium, path, keyOf(b), batch.map((o) => o.op));
    response.results.forEach((result, i) => each(result, batch[i]));
    log(`${path} ${b + 1}/${batches}: ${batch.length} rows`);
  }
}

export async function syncRoster(file: string, atrium: AtriumClient, log: (line: string) => void = console.log): Promise<Summary> {
  const text = fs.readFileSync(file, 'utf8');
  const contentHash = createHash('sha256').update(text).digest('hex');
  // A run's identity survives a failure in the state file, so a resumed run sends the same keys.
  const stateFile = `${file}.sync-state.json`;
  const previous = fs.existsSync(stateFile) ? (JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { content_sha256: string; run: string }) : undefined;
  const run = previous?.content_sha256 === contentHash ? previous.run : new Date().toISOString();
  if (previous?.run === run) log(`resuming the run of ${run}`);
  fs.writeFileSync(stateFile, JSON.stringify({ content_sha256: contentHash, run }));

  const rows = parseCsv(text);
  const summary: Summary = { people: { created: 0, updated: 0, unchanged: 0, failed: 0 }, created: 0, updated: 0, unchanged: 0, failed: new Map() };
  const fail = (code: string, line: number) => summary.failed.set(code, [...(summary.failed.get(code) ?? []), line]);
  const keyOf = (part: string) => (b: number) => `roster-${createHash('sha256').update(`${contentHash}:${run}:${part}:${b}`).digest('hex').slice(0, 40)}`;

  // People first: each person's Atrium id, or the code their upsert failed with.
  const people = new Map<string, { email: string; name: string }>();
  for (const row of rows) if (!people.has(row.person_id)) people.set(row.person_id, { email: row.email, name: row.name });
  const userIds = new Map<string, { id: string } | { code: string }>();
  const personOps = [...people].map(([personId, person], i) => ({ personId, op: { ref: `person-${i}`, op: 'upsert', external_id: personId, data: person } }));
  await sendAll(atrium, '/users/bulk', keyOf('people'), personOps, (result, { personId }) => {
    if (result.status === 201 || result.status === 200) {
      summary.people[result.status === 201 ? 'created' : result.unchanged ? 'unchanged' : 'updated']++;
      userIds.set(personId, { id: result.data!.id });
    } else {
      summary.people.failed++;
      userIds.set(personId, { code: result.error?.code ?? String(result.status) });
    }
  }, log);

  const courses = await methodsByCourse(atrium, [...new Set(rows.map((r) => r.course_code))]);
  const operations: Array<{ line: number; op: unknown }> = [];
  rows.forEach((row, i) => {
    const line = i + 2; // the header is line 1
    const course = courses.get(row.course_code);
    if (typeof course !== 'object') return fail(course ?? 'course.not_found', line);
    const user = userIds.get(row.person_id)!;
    if ('code' in user) return fail(user.code, line);
    const data: Record<string, string> = { course_id: course.course_id, user_id: user.id, enrolment_method_id: course.method_id };
    for (const field of ['role', 'status', 'starts_at', 'ends_at']) if (row[field]) data[field] = row[field];
    operations.push({ line, op: { ref: `line-${line}`, op: 'upsert', external_id: row.enrolment_id, data } });
  });
  await sendAll(atrium, '/enrolments/bulk', keyOf('enrolments'), operations, (result, { line }) => {
    if (result.status === 201) summary.created++;
    else if (result.status === 200) summary[result.unchanged ? 'unchanged' : 'updated']++;
    else fail(result.error?.code ?? String(result.status), line);
  }, log);
  fs.rmSync(stateFile);
  return summary;
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node examples/roster-sync.ts roster.csv');
  const atrium = createAtriumClient({ baseUrl: process.env.ATRIUM_BASE_URL!, apiKey: process.env.ATRIUM_API_KEY!, serviceVersion: '2026-11-01' });
  const summary = await syncRoster(file, atrium);
  console.log(`people: created ${summary.people.created}, updated ${summary.people.updated}, unchanged ${summary.people.unchanged}, failed ${summary.people.failed}`);
  console.log(`enrolments: created ${summary.created}, updated ${summary.updated}, unchanged ${summary.unchanged}, failed ${[...summary.failed.values()].flat().length}`);
  for (const [code, lines] of summary.failed) console.log(`  ${code}: ${lines.length} (lines ${lines.join(', ')})`);
}
