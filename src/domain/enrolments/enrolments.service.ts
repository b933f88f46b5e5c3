// Enrolments: a person (an API "user") in a course through one of the course's enrolment methods. Create,
// read, list, partial update, soft delete, upsert by external id; and the ending of every enrolment of a
// course, a person or a method when that goes, each with its tombstone and its `enrolment.deleted` event.
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import { newId } from '../../ids.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { resourceList, type ListParams } from '../../operations/listing.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';
import { BatchWrites } from '../bulk/batch-writes.ts';
import { createLookups, directLookups, lockedLookups, prefetchedLookups, type EnrolmentLookups, type NamedInBulk } from './enrolments.lookups.ts';
import { batchedWrites, directWrites, lockedRowWrites, type EnrolmentStore } from './enrolments.writes.ts';
import { endedBecause, enrolmentsRepository, type EndedBy, type EndedEnrolment, type EnrolmentRow } from './enrolments.repository.ts';
import type { CreateEnrolment, Enrolment, UpdateEnrolment, UpsertEnrolment } from './enrolments.schemas.ts';

export type EnrolmentView = Static<typeof Enrolment>;
type Target = { id: string } | { external_id: string };
type Patch = Static<typeof UpdateEnrolment>;

/** What an upsert did: created (201), changed (200), or found everything already so (200, `unchanged`). */
export interface UpsertOutcome {
  created: boolean;
  changed: boolean;
  view: EnrolmentView;
}

export const toEnrolmentView = (r: EnrolmentRow): EnrolmentView => ({
  id: r.id,
  external_id: r.external_id,
  course_id: r.course_id,
  user_id: r.person_id,
  enrolment_method_id: r.enrolment_method_id,
  role: r.role,
  status: r.status,
  starts_at: r.starts_at,
  ends_at: r.ends_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
  deleted_at: r.deleted_at,
});

const instant = (value: string | null | undefined) => (value === undefined || value === null ? value : new Date(value).toISOString());

const datesInOrder = (startsAt: string | null, endsAt: string | null) => startsAt === null || endsAt === null || endsAt >= startsAt;

function checkDates(startsAt: string | null, endsAt: string | null): void {
  if (!datesInOrder(startsAt, endsAt)) throw fieldError('/ends_at', 'before_start', `\`ends_at\` (${endsAt}) is before \`starts_at\` (${startsAt}).`);
}

/** The enrolment a create makes of `input` at `at`, but for its role (asked, or its method's). */
function newEnrolmentRow(organisationId: string, input: Static<typeof CreateEnrolment>, at: string): Omit<EnrolmentRow, 'role'> {
  return {
    id: newId(),
    organisation_id: organisationId,
    enrolment_method_id: input.enrolment_method_id,
    course_id: input.course_id,
    person_id: input.user_id,
    external_id: input.external_id ?? null,
    status: input.status ?? 'active',
    starts_at: instant(input.starts_at) ?? null,
    ends_at: instant(input.ends_at) ?? null,
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
}

const eventData = (r: Pick<EnrolmentRow, 'id' | 'course_id' | 'person_id'>, summary: string) => ({ id: r.id, course_id: r.course_id, user_id: r.person_id, summary });

export function createEnrolmentService(deps: { clock: Clock; cursors: CursorCodec; events: EventRecorder }) {
  const { clock, cursors, events } = deps;
  /** Reads and writes at once, each a statement: a single request's, or a bulk request's run one by one. */
  const direct = (db: Db, organisationId: string, look: EnrolmentLookups = directLookups(db, organisationId)): EnrolmentStore => ({ ...look, ...directWrites(db, organisationId, events) });
  /** A single request's change of one enrolment by id: read locked, changed by a write that rides with the COMMIT. */
  const lockedRow = (db: Db, organisationId: string): EnrolmentStore => ({ ...lockedLookups(db, organisationId), ...lockedRowWrites(db, organisationId, events) });
  const notFound = (target: Target) =>
    new ApiError('enrolment.not_found', 'id' in target ? `No enrolment ${target.id} in this organisation.` : `No enrolment with external_id ${JSON.stringify(target.external_id)}.`);

  async function find(look: EnrolmentLookups, target: Target): Promise<EnrolmentRow> {
    const row = 'id' in target ? await look.enrolment(target.id) : await look.byExternalId(target.external_id);
    if (!row) throw notFound(target);
    return row;
  }

  async function live(look: EnrolmentLookups, target: Target): Promise<EnrolmentRow> {
    const row = await find(look, target);
    if (row.deleted_at !== null) throw new ApiError('enrolment.deleted', `Enrolment ${row.id} was deleted at ${row.deleted_at}; it can no longer change.`);
    return row;
  }

  async function create(db: Db, organisationId: string, input: Static<typeof CreateEnrolment>, look: EnrolmentStore = direct(db, organisationId, createLookups(db, organisationId, input))): Promise<EnrolmentView> {
    // One round trip (PostgreSQL, db/final-statement.ts): the enrolment and its event go with the COMMIT, nothing
    // read first; one not made (what it names absent, deleted or disabled, the person already enrolled through the
    // method, the external id taken) refuses it, so that the request runs again down here (422, 409). Dates out of
    // order come down here at once: the 422 they make is answered only after every other check.
    const startsAt = instant(input.starts_at) ?? null;
    const endsAt = instant(input.ends_at) ?? null;
    if (finalStatementOffered() && datesInOrder(startsAt, endsAt)) {
      const at = nowIso(clock);
      const asked = { ...newEnrolmentRow(organisationId, input, at), role: input.role ?? null };
      return toEnrolmentView(await enrolmentsRepository.createInOneStatement(db, asked));
    }
    const course = await look.course(input.course_id);
    if (!course) throw fieldError('/course_id', 'not_found', `No course ${input.course_id} in this organisation.`);
    const person = await look.person(input.user_id);
    if (!person) throw fieldError('/user_id', 'not_found', `No user ${input.user_id} in this organisation.`);
    const method = await look.method(input.enrolment_method_id);
    if (!method || method.course_id !== course.id) {
      throw fieldError('/enrolment_method_id', 'not_found', `No enrolment method ${input.enrolment_method_id} in course ${course.id}.`);
    }
    if (course.deleted_at !== null) throw new ApiError('course.deleted', `Course ${course.id} was deleted; it takes no new enrolments.`);
    if (person.deleted_at !== null) throw new ApiError('user.deleted', `User ${person.id} was deleted; they cannot be enrolled.`);
    if (method.deleted_at !== null || method.status !== 'enabled') {
      throw new ApiError('enrolment_method.disabled', `Enrolment method ${method.id} is ${method.deleted_at !== null ? 'deleted' : 'disabled'}; it admits no one new.`);
    }
    if (await look.livePair(method.id, person.id)) throw new ApiError('enrolment.exists', `User ${person.id} is already enrolled through enrolment method ${method.id}.`);
    checkDates(startsAt, endsAt);
    const row: EnrolmentRow = { ...newEnrolmentRow(organisationId, input, nowIso(clock)), role: input.role ?? (method.role as EnrolmentRow['role']) };
    await look.insert(row);
    await look.event('enrolment.created', eventData(row, `User enrolled as ${row.role}${row.status === 'suspended' ? ' (suspended)' : ''}.`));
    look.remember(row);
    return toEnrolmentView(row);
  }

  /** The fields of `patch` that differ from `row`, normalised; empty when the patch changes nothing. */
  function changesOf(row: EnrolmentRow, patch: Patch): Partial<EnrolmentRow> {
    const changes: Partial<EnrolmentRow> = {};
    if (patch.role !== undefined && patch.role !== row.role) changes.role = patch.role;
    if (patch.status !== undefined && patch.status !== row.status) changes.status = patch.status;
    for (const field of ['starts_at', 'ends_at'] as const) {
      const value = instant(patch[field]);
      if (value !== undefined && value !== row[field]) changes[field] = value;
    }
    return changes;
  }

  /**
   * Partial update of a live enrolment. A patch that changes nothing is no update: no write, no event, and
   * `updated_at` stays (so a nightly resend of the same roster leaves changes-since feeds quiet).
   */
  async function applyPatch(row: EnrolmentRow, patch: Patch, look: EnrolmentStore): Promise<{ changed: boolean; view: EnrolmentView }> {
    const changes = changesOf(row, patch);
    if (Object.keys(changes).length === 0) return { changed: false, view: toEnrolmentView(row) };
    checkDates(changes.starts_at !== undefined ? changes.starts_at : row.starts_at, changes.ends_at !== undefined ? changes.ends_at : row.ends_at);
    const fields = Object.keys(changes);
    const updated = await look.update(row, { ...changes, updated_at: nowIso(clock) });
    if (!updated) throw new ApiError('enrolment.deleted', `Enrolment ${row.id} was deleted; it can no longer change.`);
    await look.event('enrolment.updated', eventData(updated, `Enrolment changed: ${fields.join(', ')}.`));
    look.remember(updated);
    return { changed: true, view: toEnrolmentView(updated) };
  }

  async function update(db: Db, organisationId: string, target: Target, patch: Patch, look: EnrolmentStore = lockedRow(db, organisationId)): Promise<EnrolmentView> {
    // One round trip (PostgreSQL, db/final-statement.ts): the change and its event go with the COMMIT; an
    // enrolment not changed (absent, deleted, already so, or its dates would be out of order) refuses it, so that
    // the request runs again down here (404, 409, 422, or the enrolment as it is).
    if ('id' in target && finalStatementOffered() && Object.values(patch).some((value) => value !== undefined)) {
      const changes = { role: patch.role, status: patch.status, starts_at: instant(patch.starts_at), ends_at: instant(patch.ends_at) };
      return toEnrolmentView(await enrolmentsRepository.updateInOneStatement(db, organisationId, target.id, changes, nowIso(clock)));
    }
    return (await applyPatch(await live(look, target), patch, look)).view;
  }

  /**
   * Reads only: the upsert's outcome when it would write nothing (the enrolment exists, live, and already as
   * `input` says), otherwise undefined. A bulk resend of a roster answers most operations this way.
   */
  async function unchangedUpsert(externalId: string, input: Static<typeof UpsertEnrolment>, look: EnrolmentLookups): Promise<UpsertOutcome | undefined> {
    const existing = await look.byExternalId(externalId);
    if (!existing || existing.deleted_at !== null || input.course_id !== existing.course_id || input.user_id !== existing.person_id || input.enrolment_method_id !== existing.enrolment_method_id) {
      return undefined;
    }
    return Object.keys(changesOf(existing, input)).length === 0 ? { created: false, changed: false, view: toEnrolmentView(existing) } : undefined;
  }

  async function upsertByExternalId(db: Db, organisationId: string, externalId: string, input: Static<typeof UpsertEnrolment>, look: EnrolmentStore = direct(db, organisationId)): Promise<UpsertOutcome> {
    const existing = await look.byExternalId(externalId);
    if (!existing) return { created: true, changed: true, view: await create(db, organisationId, { ...input, external_id: externalId }, look) };
    if (existing.deleted_at !== null) throw new ApiError('enrolment.deleted', `Enrolment ${existing.id} (external_id ${JSON.stringify(externalId)}) was deleted at ${existing.deleted_at}; give the new one another external_id.`);
    for (const [field, column] of [['course_id', 'course_id'], ['user_id', 'person_id'], ['enrolment_method_id', 'enrolment_method_id']] as const) {
      if (input[field] !== existing[column]) throw fieldError(`/${field}`, 'immutable', `An enrolment keeps its ${field}; delete it and create another.`);
    }
    const { changed, view } = await applyPatch(existing, input, look);
    return { created: false, changed, view };
  }

  async function remove(db: Db, organisationId: string, target: Target, look: EnrolmentStore = lockedRow(db, organisationId)): Promise<void> {
    // One round trip (PostgreSQL): the end, its tombstone and its event go with the COMMIT; an enrolment not live
    // refuses it, so that the request runs again down here (404 or 409).
    if ('id' in target && finalStatementOffered()) return enrolmentsRepository.deleteInOneStatement(db, organisationId, target.id, nowIso(clock));
    const row = await live(look, target);
    const at = nowIso(clock);
    const ended = await look.update(row, { deleted_at: at, updated_at: at });
    if (!ended) throw new ApiError('enrolment.deleted', `Enrolment ${row.id} was deleted; it can no longer change.`);
    await look.tombstone(row, at);
    await look.event('enrolment.deleted', eventData(row, 'Enrolment ended.'));
    look.remember(ended);
  }

  /**
   * Ends every live enrolment of a course, a person or a method, in the caller's transaction: one statement,
   * then each enrolment's tombstone and `enrolment.deleted` event. Returns how many ended.
   */
  async function endAll(db: Db, organisationId: string, by: EndedBy, why: string): Promise<number> {
    const at = nowIso(clock);
    const ended: EndedEnrolment[] = await enrolmentsRepository.endAll(db, organisationId, by, at);
    if (ended.length === 0) return 0;
    await deletionsRepository.recordMany(db, organisationId, 'enrolment', ended, at);
    for (const row of ended) await events.record(db, organisationId, 'enrolment.deleted', eventData(row, `Enrolment ended: ${why}.`));
    return ended.length;
  }

  return {
    async get(db: Db, organisationId: string, id: string): Promise<EnrolmentView> {
      return toEnrolmentView(await find(directLookups(db, organisationId), { id }));
    },
    async getByExternalId(db: Db, organisationId: string, externalId: string): Promise<EnrolmentView> {
      return toEnrolmentView(await find(directLookups(db, organisationId), { external_id: externalId }));
    },
    list: resourceList(cursors, {
      list: 'enrolments',
      page: enrolmentsRepository.page,
      map: toEnrolmentView,
      filters: (params: ListParams & { course_id?: string; user_id?: string; status?: string }) => ({ course_id: params.course_id, person_id: params.user_id, status: params.status }),
    }),
    create,
    update,
    upsertByExternalId,
    unchangedUpsert,
    remove,
    /** For a bulk request run one by one: what its operations name read up front, the writes made at once. */
    prefetched: async (db: Db, organisationId: string, named: NamedInBulk): Promise<EnrolmentStore> => direct(db, organisationId, await prefetchedLookups(db, organisationId, named)),
    /** For a bulk request run in batch: the same reads, the writes queued in `writes` (flushed by the bulk engine). */
    async batch(db: Db, organisationId: string, named: NamedInBulk): Promise<{ store: EnrolmentStore; writes: BatchWrites }> {
      const look = await prefetchedLookups(db, organisationId, named);
      const writes = new BatchWrites(events);
      return { store: { ...look, ...batchedWrites(writes, organisationId, look) }, writes };
    },
    /** For the users area (deleting a user) and `atrium person remove`: call it in the deletion's transaction. */
    endEnrolmentsOfUser: (trx: Db, organisationId: string, userId: string) => endAll(trx, organisationId, { person_id: userId }, endedBecause.person_id),
    endEnrolmentsOfCourse: (trx: Db, organisationId: string, courseId: string) => endAll(trx, organisationId, { course_id: courseId }, endedBecause.course_id),
    endEnrolmentsOfMethod: (trx: Db, organisationId: string, methodId: string) => endAll(trx, organisationId, { enrolment_method_id: methodId }, endedBecause.enrolment_method_id),
  };
}

export type EnrolmentService = ReturnType<typeof createEnrolmentService>;
