// The scale suite's data, grown in the server process straight through SQL (a million rows through the API
// would take the better part of an hour): one organisation whose one course holds `size` sections and whose
// one wiki page has `size` versions. Rows are numbered 1…size; row i has an id that sorts as i does, an
// `updated_at` of 2020-01-01 plus i seconds, so that the last rows are the most recently changed, as in life.
// Growing from 1,000 to 100,000 adds rows 1,001…100,000: the rows measured at each size are the same kind.
import { sql } from 'kysely';
import type { Db, DialectName } from '../src/db/database.ts';
import { cursorAt } from '../src/operations/listing.ts';
import type { CursorCodec } from '../src/operations/pagination.ts';

export interface ScaleFixture {
  host: string;
  apiKey: string;
  organisationId: string;
  personId: string;
  courseId: string;
  wikiPageId: string;
}

/** What the scale scenarios request at one size. */
export interface ScalePaths {
  size: number;
  sectionsList: string;
  sectionsDeepPage: string;
  sectionsUpdatedSince: string;
  sectionRead: string;
  versionsList: string;
  versionsDeepPage: string;
  versionRead: string;
}

const BASE_EPOCH_S = Date.parse('2020-01-01T00:00:00Z') / 1000;
const CHUNK = 100_000;
/** Deep pages and `updated_since` start this many rows before the end. */
const FROM_END = 100;

const sectionId = (i: number) => `01900000-0000-7000-8000-${i.toString(16).padStart(12, '0')}`;
const timeOf = (i: number) => new Date((BASE_EPOCH_S + i) * 1000).toISOString();

async function insertSections(db: Db, dialect: DialectName, f: ScaleFixture, from: number, to: number): Promise<void> {
  if (dialect === 'sqlite') {
    await sql`
      with recursive n(i) as (select ${from} union all select i + 1 from n where i < ${to})
      insert into sections (id, organisation_id, external_id, course_id, parent_section_id, sort_key, title, summary, visible, created_at, updated_at, deleted_at)
      select printf('01900000-0000-7000-8000-%012x', i), ${f.organisationId}, null, ${f.courseId}, null, printf('a%09d', i), 'Section ' || i, null, 1,
             strftime('%Y-%m-%dT%H:%M:%fZ', ${BASE_EPOCH_S} + i, 'unixepoch'), strftime('%Y-%m-%dT%H:%M:%fZ', ${BASE_EPOCH_S} + i, 'unixepoch'), null
      from n`.execute(db);
    return;
  }
  await sql`
    insert into sections (id, organisation_id, external_id, course_id, parent_section_id, sort_key, title, summary, visible, created_at, updated_at, deleted_at)
    select ('01900000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, ${f.organisationId}, null, ${f.courseId}, null, 'a' || lpad(i::text, 9, '0'), 'Section ' || i, null, true,
           to_timestamp(${BASE_EPOCH_S} + i), to_timestamp(${BASE_EPOCH_S} + i), null
    from generate_series(${from}::int, ${to}::int) as i`.execute(db);
}

// Version 1 is the page's own, made through the service when the fixture was seeded.
async function insertVersions(db: Db, dialect: DialectName, f: ScaleFixture, from: number, to: number): Promise<void> {
  if (dialect === 'sqlite') {
    await sql`
      with recursive n(i) as (select ${from} union all select i + 1 from n where i < ${to})
      insert into wiki_page_versions (id, organisation_id, wiki_page_id, version, title, body, restored_from, created_by, created_at)
      select printf('01910000-0000-7000-8000-%012x', i), ${f.organisationId}, ${f.wikiPageId}, i, 'Scale page', '{"text":"Edit ' || i || '"}', null, ${f.personId},
             strftime('%Y-%m-%dT%H:%M:%fZ', ${BASE_EPOCH_S} + i, 'unixepoch')
      from n`.execute(db);
    return;
  }
  await sql`
    insert into wiki_page_versions (id, organisation_id, wiki_page_id, version, title, body, restored_from, created_by, created_at)
    select ('01910000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, ${f.organisationId}, ${f.wikiPageId}, i, 'Scale page', '{"text":"Edit ' || i || '"}', null, ${f.personId},
           to_timestamp(${BASE_EPOCH_S} + i)
    from generate_series(${from}::int, ${to}::int) as i`.execute(db);
}

/** Grows the scale organisation to `size` sections and versions; returns what to request at that size. */
export async function growScaleData(db: Db, dialect: DialectName, cursors: CursorCodec, f: ScaleFixture, size: number): Promise<ScalePaths> {
  const have = Number((await db.selectFrom('sections').select((eb) => eb.fn.countAll<number>().as('n')).where('organisation_id', '=', f.organisationId).executeTakeFirstOrThrow()).n);
  for (let from = have + 1; from <= size; from += CHUNK) {
    const to = Math.min(size, from + CHUNK - 1);
    await insertSections(db, dialect, f, from, to);
    await insertVersions(db, dialect, f, Math.max(2, from), to);
  }
  await db.updateTable('wiki_pages').set({ version: size }).where('organisation_id', '=', f.organisationId).where('id', '=', f.wikiPageId).execute();
  // PostgreSQL plans by its statistics, which autovacuum would refresh after a load like this one.
  if (dialect === 'postgres') await sql`analyze sections, wiki_page_versions, wiki_pages`.execute(db);

  const deep = size - FROM_END;
  const sectionsCursor = cursorAt(cursors, { list: 'sections', organisationId: f.organisationId, params: {}, filters: {} }, [sectionId(deep)]);
  const versionsCursor = cursorAt(cursors, { list: 'wiki_page_versions', organisationId: f.organisationId, params: {}, filters: { wiki_page_id: f.wikiPageId } }, [String(deep)]);
  const versions = `/api/v1/wiki_pages/${f.wikiPageId}/versions`;
  return {
    size,
    sectionsList: '/api/v1/sections',
    sectionsDeepPage: `/api/v1/sections?cursor=${encodeURIComponent(sectionsCursor)}`,
    sectionsUpdatedSince: `/api/v1/sections?updated_since=${encodeURIComponent(timeOf(deep))}`,
    sectionRead: `/api/v1/sections/${sectionId(Math.ceil(size / 2))}`,
    versionsList: versions,
    versionsDeepPage: `${versions}?cursor=${encodeURIComponent(versionsCursor)}`,
    versionRead: `${versions}/${Math.ceil(size / 2)}`,
  };
}

