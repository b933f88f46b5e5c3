// What a write leaves besides its answer, read back by the tests that hold the one-statement path (PostgreSQL)
// and the full path to the same outcomes (test/one-statement-*.test.ts): the events naming a resource, its
// tombstones, its success entries in the audit log.
import type { TestContext } from './harness.ts';
import type { Caller } from './factories.ts';

type AuditColumn = 'action' | 'status' | 'target_type' | 'changed_fields';

export function writeTraces(context: () => { t: TestContext; caller: Caller }) {
  const db = () => context().t.database.db;
  return {
    /** The organisation's events whose data names `id`, in order: type and data (the JSON text as stored). */
    async eventsOf(id: string) {
      const rows = await db().selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', context().caller.org.id).where('data', 'like', `%"id":"${id}"%`).orderBy('id').execute();
      return rows.map((e) => ({ ...e }));
    },
    async tombstonesOf(id: string) {
      return (await db().selectFrom('deletions').select(['resource_type', 'external_id']).where('resource_id', '=', id).execute()).map((r) => ({ ...r }));
    },
    /** The success entries naming `id`, in order, with the columns asked for. */
    async successEntries<C extends AuditColumn>(id: string, columns: readonly C[]) {
      const rows = await db().selectFrom('audit_events').select(columns).where('target_id', '=', id).where('outcome', '=', 'success').orderBy('id').execute();
      return rows.map((e) => ({ ...e }));
    },
  };
}
