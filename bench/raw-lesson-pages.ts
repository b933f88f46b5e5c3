// The bulk suite's baseline, run inside the server process on the server's own database handle: the same
// lesson-page rows a bulk create writes (same columns and contents, sort keys appended at the end of the
// lesson), inserted by plain Kysely statements, one per row, in one transaction. What it leaves out is what
// the bulk endpoint adds: HTTP and JSON, authentication, validation, the lesson check, savepoints, events and
// the idempotency record.
import { generateKeyBetween } from 'fractional-indexing';
import type { Db } from '../src/db/database.ts';
import { newId } from '../src/ids.ts';
import type { Fixture } from './seed.ts';

/** The `data` of one benchmark page, shared by the bulk requests and the raw rows. */
export const benchPageContents = { format: 'plain' as const, content: 'A page written by the benchmark.' };

/** Inserts `count` pages into the raw lesson in one transaction; returns the milliseconds it took. */
export async function insertRawLessonPages(db: Db, fixture: Fixture, count: number, round: string): Promise<number> {
  const started = performance.now();
  await db.transaction().execute(async (tx) => {
    const last = await tx
      .selectFrom('lesson_pages')
      .select('sort_key')
      .where('organisation_id', '=', fixture.organisationId)
      .where('lesson_id', '=', fixture.rawLessonId)
      .orderBy('sort_key', 'desc')
      .limit(1)
      .executeTakeFirst();
    let key = last?.sort_key ?? null;
    const contents = JSON.stringify(benchPageContents);
    for (let i = 0; i < count; i++) {
      key = generateKeyBetween(key, null);
      const at = new Date().toISOString();
      await tx
        .insertInto('lesson_pages')
        .values({
          id: newId(),
          organisation_id: fixture.organisationId,
          external_id: null,
          lesson_id: fixture.rawLessonId,
          course_id: fixture.courseId,
          title: `Raw ${round} #${i}`,
          page_type: 'content',
          contents,
          answers: '[]',
          sort_key: key,
          created_at: at,
          updated_at: at,
          deleted_at: null,
        })
        .execute();
    }
  });
  return performance.now() - started;
}
