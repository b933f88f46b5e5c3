// The writes of a bulk request run in batch (bulk-engine.ts): its operations are decided one by one in memory,
// against what the resource read up front, and what they write is kept here until all have run; then it goes
// to the database in a few multi-row statements per table, whatever the number of operations. An operation
// that fails is undone by forgetting what it had queued (`mark` / `undo`), so its writes are a journal
// replayed at `flush`: later changes to a row queued for insertion fold into the inserted row, changes to an
// existing row fold into one UPDATE of it, and events keep their order.
import type { Db } from '../../db/database.ts';
import { insertMany, updateLiveMany, type RowChange } from '../../db/many-rows.ts';
import type { Tables } from '../../db/tables.ts';
import type { EventType } from '../../events/catalog.ts';
import type { EventData, EventRecorder } from '../../events/outbox.ts';

type TableName = keyof Tables & string;
type Row = Record<string, unknown> & { id: string };

type Write =
  | { kind: 'insert'; table: TableName; row: Row }
  | { kind: 'update'; table: TableName; organisationId: string; id: string; set: Record<string, unknown> }
  | { kind: 'event'; organisationId: string; type: EventType; data: EventData };

/**
 * A row the batch meant to change was no longer there or no longer live when the batch was written (another
 * request got there first): the engine then runs the request's operations one by one instead.
 */
export class BatchConflict extends Error {
  constructor(table: string) {
    super(`bulk batch: a row of ${table} changed under the batch`);
  }
}

export class BatchWrites {
  readonly #events: EventRecorder;
  #journal: Write[] = [];

  constructor(events: EventRecorder) {
    this.#events = events;
  }

  insert(table: TableName, row: Row): void {
    this.#journal.push({ kind: 'insert', table, row: { ...row } });
  }

  /** Sets columns of a live row (`deleted_at` null), one queued for insertion by this batch or one that exists. */
  update(table: TableName, organisationId: string, id: string, set: Record<string, unknown>): void {
    this.#journal.push({ kind: 'update', table, organisationId, id, set: { ...set } });
  }

  event(organisationId: string, type: EventType, data: EventData): void {
    this.#journal.push({ kind: 'event', organisationId, type, data });
  }

  /** Where the journal is now; `undo(mark)` forgets everything queued since. */
  mark(): number {
    return this.#journal.length;
  }

  undo(mark: number): void {
    this.#journal.length = mark;
  }

  /**
   * Writes the journal in `db` (the caller's savepoint): every table's inserts, in the order each table was
   * first written, then its updates, then the events. Throws the database's error when a statement fails (a
   * constraint), or a `BatchConflict` when a row to update was not live any more.
   */
  get empty(): boolean {
    return this.#journal.length === 0;
  }

  async flush(db: Db): Promise<void> {
    const inserts = new Map<TableName, Map<string, Row>>();
    const updates = new Map<string, { table: TableName; organisationId: string; changes: Map<string, RowChange> }>();
    const events = new Map<string, Array<{ type: EventType; data: EventData }>>();
    for (const write of this.#journal) {
      if (write.kind === 'insert') {
        let rows = inserts.get(write.table);
        if (!rows) inserts.set(write.table, (rows = new Map()));
        rows.set(write.row.id, write.row);
      } else if (write.kind === 'update') {
        const queued = inserts.get(write.table)?.get(write.id);
        if (queued) {
          Object.assign(queued, write.set);
          continue;
        }
        const key = `${write.table} ${write.organisationId}`;
        let group = updates.get(key);
        if (!group) updates.set(key, (group = { table: write.table, organisationId: write.organisationId, changes: new Map() }));
        const change = group.changes.get(write.id);
        if (change) Object.assign(change.set, write.set);
        else group.changes.set(write.id, { id: write.id, set: write.set });
      } else {
        let list = events.get(write.organisationId);
        if (!list) events.set(write.organisationId, (list = []));
        list.push({ type: write.type, data: write.data });
      }
    }
    for (const [table, rows] of inserts) await insertMany(db, table, [...rows.values()]);
    for (const { table, organisationId, changes } of updates.values()) {
      if ((await updateLiveMany(db, table, organisationId, [...changes.values()])) !== changes.size) throw new BatchConflict(table);
    }
    for (const [organisationId, list] of events) await this.#events.recordMany(db, organisationId, list);
  }
}
