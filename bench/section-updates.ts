// What the PATCH scenarios committed, read in the server process after a round: how many `section.updated`
// events were written since the round began (one per committed change, in the change's own transaction), and
// whether the section's title now is the one its latest change gave it. Events are stamped after the change's
// UPDATE took the row, so a later commit never has an earlier `occurred_at`; within one millisecond the order
// is unknown, so any change of the latest millisecond may be the last. Requests the load generator dropped at
// the end of its window may still be committing: both reads see one snapshot (SQLite's transaction holds the
// only connection; PostgreSQL's is repeatable read).
import type { Db } from '../src/db/database.ts';

const titleOf = (data: string) => {
  // The event's summary quotes the new title: `Section titled "Week A #12".`
  const quoted = /titled (".*")\.$/.exec((JSON.parse(data) as { summary: string }).summary)?.[1];
  return quoted === undefined ? null : (JSON.parse(quoted) as string);
};

export function sectionUpdates(db: Db, organisationId: string, since: string, sectionId?: string) {
  return db.transaction().setIsolationLevel('repeatable read').execute((tx) => read(tx, organisationId, since, sectionId));
}

async function read(db: Db, organisationId: string, since: string, sectionId?: string) {
  let query = db
    .selectFrom('outbox_events')
    .select(['occurred_at', 'data'])
    .where('organisation_id', '=', organisationId)
    .where('type', '=', 'section.updated')
    .where('occurred_at', '>=', since);
  if (sectionId) query = query.where('data', 'like', `%"id":"${sectionId}"%`);
  const events = await query.execute();
  if (!sectionId) return { events: events.length };
  const latest = events.reduce((max, e) => (e.occurred_at > max ? e.occurred_at : max), '');
  const latestTitles = events.filter((e) => e.occurred_at === latest).map((e) => titleOf(e.data));
  const row = await db.selectFrom('sections').select('title').where('organisation_id', '=', organisationId).where('id', '=', sectionId).executeTakeFirst();
  return { events: events.length, title: row?.title ?? null, latestTitles };
}
