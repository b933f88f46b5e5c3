// What an enrolment operation writes, two ways with the same rules: at once (a single request, or a bulk
// request's operations run one by one), or queued in a bulk batch (domain/bulk/batch-writes.ts) and written
// with the batch's other operations in a few statements. The service decides; these only write.
import { externalIdTaken } from '../external-ids.ts';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { EventType } from '../../events/catalog.ts';
import type { EventData, EventRecorder } from '../../events/outbox.ts';
import { ApiError } from '../../errors/api-error.ts';
import type { BatchWrites } from '../bulk/batch-writes.ts';
import { deletionsRepository, tombstoneRow } from '../deletions/deletions.repository.ts';
import type { EnrolmentLookups } from './enrolments.lookups.ts';
import { enrolmentsRepository, type EnrolmentRow } from './enrolments.repository.ts';
import type { MaybeAsync } from '../../maybe-async.ts';

export interface EnrolmentWrites {
  /** A new enrolment; an `external_id` already used in the organisation is a 409 `resource.external_id_taken`. */
  insert(row: EnrolmentRow): Promise<void>;
  /** Sets columns of a live enrolment: the row as it is now, or undefined when it is not live any more. */
  update(row: EnrolmentRow, set: Partial<EnrolmentRow>): Promise<EnrolmentRow | undefined>;
  tombstone(row: EnrolmentRow, at: string): Promise<void>;
  event(type: EventType, data: EventData): MaybeAsync<unknown>;
}

/** The reads and writes an enrolment operation makes. */
export type EnrolmentStore = EnrolmentLookups & EnrolmentWrites;

const enrolmentExternalIdTaken = (externalId: string | null) => externalIdTaken('enrolment', externalId);

/** On a unique violation: which of the two keys a caller controls clashed. */
function clash(err: unknown, externalId: string | null): ApiError {
  const e = err as { constraint?: string; message?: string };
  if (/external/.test(e.constraint ?? e.message ?? '')) return enrolmentExternalIdTaken(externalId);
  return new ApiError('enrolment.exists', 'This person is already enrolled through this enrolment method.');
}

export function directWrites(db: Db, organisationId: string, events: EventRecorder): EnrolmentWrites {
  return {
    insert: (row) => enrolmentsRepository.insertRow(db, row, (err) => (isUniqueViolation(err) ? clash(err, row.external_id) : err)),
    update: (row, set) => enrolmentsRepository.updateLive(db, organisationId, row.id, set),
    tombstone: (row, at) => deletionsRepository.record(db, organisationId, 'enrolment', row, at),
    event: (type, data) => events.record(db, organisationId, type, data),
  };
}

/**
 * directWrites for a single request whose enrolment was read locked (lockedLookups): its change cannot miss
 * the row, so it is a deferred write (db/deferred-writes.ts) that rides with the next statement or the COMMIT.
 */
export function lockedRowWrites(db: Db, organisationId: string, events: EventRecorder): EnrolmentWrites {
  return {
    ...directWrites(db, organisationId, events),
    async update(row, set) {
      await enrolmentsRepository.update(db, organisationId, row.id, set);
      return { ...row, ...set };
    },
  };
}

/**
 * Writes queued in `batch`. The database's unique keys are checked in memory against what the lookups know
 * (every external id a bulk request names, and every enrolment its operations wrote); one taken meanwhile by
 * another request fails the batch's INSERT, and the engine runs the operations one by one.
 */
export function batchedWrites(batch: BatchWrites, organisationId: string, look: EnrolmentLookups): EnrolmentWrites {
  return {
    async insert(row) {
      if (row.external_id !== null && (await look.byExternalId(row.external_id))) throw enrolmentExternalIdTaken(row.external_id);
      batch.insert('enrolments', row);
    },
    async update(row, set) {
      batch.update('enrolments', organisationId, row.id, set);
      return { ...row, ...set };
    },
    async tombstone(row, at) {
      batch.insert('deletions', tombstoneRow(organisationId, 'enrolment', row, at));
    },
    async event(type, data) {
      batch.event(organisationId, type, data);
    },
  };
}
