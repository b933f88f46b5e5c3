// Enrolment methods of a course, and what deleting one does to the enrolments made through it (spec op. 7).
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { EnrolmentsTable } from '../../db/tables.ts';
import { insertWithExternalId } from '../external-ids.ts';
import { foundOr404, newResourceRow } from '../resource-rows.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import { newId } from '../../ids.ts';
import { extensionFor } from '../extensions/extensions.catalog.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import type { ExtensionService } from '../extensions/extensions.service.ts';
import type { EnrolmentService } from '../enrolments/enrolments.service.ts';
import { resourceList, type ListParams } from '../../operations/listing.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';
import type { CreateEnrolmentMethod, EnrolmentMethod, MethodSettings, UpdateEnrolmentMethod } from './enrolment-methods.schemas.ts';
import { enrolmentMethodsRepository, type EnrolmentMethodRow } from './enrolment-methods.repository.ts';
import { andThen, type MaybeAsync } from '../../maybe-async.ts';

type View = Static<typeof EnrolmentMethod>;
type Settings = Static<typeof MethodSettings>;

/** Which settings each type takes; `cohort` must name its cohort. */
const settingsByType: Record<string, { allowed: (keyof Settings)[]; required: (keyof Settings)[] }> = {
  manual: { allowed: [], required: [] },
  self: { allowed: ['enrolment_key', 'max_enrolments'], required: [] },
  guest: { allowed: ['password'], required: [] },
  cohort: { allowed: ['cohort_id'], required: ['cohort_id'] },
};

/** Why `settings` do not suit a method of `type` (a 422), or undefined when they do. */
function settingsProblem(type: string, settings: Settings): ApiError | undefined {
  const rule = settingsByType[type];
  for (const key of Object.keys(settings) as (keyof Settings)[]) {
    if (!rule.allowed.includes(key)) return fieldError(`/settings/${key}`, 'not_applicable', `\`${key}\` does not apply to ${type} enrolment.`);
  }
  for (const key of rule.required) {
    if (settings[key] === undefined) return fieldError(`/settings/${key}`, 'required', `${type} enrolment needs \`${key}\`.`);
  }
  return undefined;
}

function checkSettings(type: string, settings: Settings): void {
  const problem = settingsProblem(type, settings);
  if (problem) throw problem;
}

const label = (row: { type: string; name: string | null }) => (row.name ? `${JSON.stringify(row.name)} (${row.type})` : row.type);

export const toEnrolmentMethodView = (r: EnrolmentMethodRow): View => ({
  id: r.id,
  external_id: r.external_id,
  course_id: r.course_id,
  type: r.type,
  name: r.name,
  status: r.status,
  role: r.role as View['role'],
  settings: JSON.parse(r.settings) as Settings,
  created_at: r.created_at,
  updated_at: r.updated_at,
  deleted_at: r.deleted_at,
});

export function createEnrolmentMethodService(deps: {
  clock: Clock;
  cursors: CursorCodec;
  events: EventRecorder;
  extensions: ExtensionService;
  enrolments: Pick<EnrolmentService, 'endEnrolmentsOfMethod'>;
}) {
  const { clock, cursors, events, extensions, enrolments } = deps;

  /** The method `found` as read, if it is there and live: 404 or 409 otherwise. */
  async function liveOf<R extends EnrolmentMethodRow>(id: string, found: MaybeAsync<R | undefined>): Promise<R> {
    const row = await foundOr404(found, 'enrolment_method.not_found', `No enrolment method ${id} in this organisation.`);
    if (row.deleted_at !== null) throw new ApiError('enrolment_method.deleted', `Enrolment method ${id} was deleted at ${row.deleted_at}.`);
    return row;
  }
  const live = (db: Db, organisationId: string, id: string) => liveOf(id, enrolmentMethodsRepository.findById(db, organisationId, id));

  async function create(db: Db, organisationId: string, input: Static<typeof CreateEnrolmentMethod>): Promise<View> {
    const settings = input.settings ?? {};
    const at = nowIso(clock);
    const row: EnrolmentMethodRow = {
      ...newResourceRow(organisationId, input.external_id, at),
      course_id: input.course_id,
      type: input.type,
      name: input.name ?? null,
      status: input.status ?? 'enabled',
      role: input.role ?? 'student',
      settings: JSON.stringify(settings),
    };
    const extension = extensionFor('enrolment_method', input.type);
    // One round trip (PostgreSQL, db/final-statement.ts): the method and its event go with the COMMIT, nothing read
    // first; one not made (its course absent or deleted, its type switched off, its external id taken) refuses it,
    // so that the request runs again down here (422, 409). An unknown type, or settings that do not suit it, come
    // down here at once: their 422 is answered only after the course's checks.
    if (finalStatementOffered() && extension !== undefined && settingsProblem(input.type, settings) === undefined) {
      return toEnrolmentMethodView(await enrolmentMethodsRepository.createInOneStatement(db, row, extension));
    }
    // One query for the course and the type's switch (an unknown type has none: requireEnabled refuses it).
    const { course, extensionDisabled } = await enrolmentMethodsRepository.courseAndSwitch(db, organisationId, input.course_id, extension ?? '');
    if (!course) throw fieldError('/course_id', 'not_found', `No course ${input.course_id} in this organisation.`);
    if (course.deleted_at !== null) throw new ApiError('course.deleted', `Course ${course.id} was deleted; it takes no new enrolment methods.`);
    await extensions.requireEnabled(db, organisationId, 'enrolment_method', input.type, '/type', extensionDisabled);
    checkSettings(input.type, settings);
    await insertWithExternalId((onClash) => enrolmentMethodsRepository.insert(db, row, onClash), 'enrolment method', input.external_id);
    await events.record(db, organisationId, 'enrolment_method.created', { id: row.id, course_id: row.course_id, summary: `Enrolment method ${label(row)} added.` });
    return toEnrolmentMethodView(row);
  }

  async function update(db: Db, organisationId: string, id: string, patch: Static<typeof UpdateEnrolmentMethod>): Promise<View> {
    // One round trip (PostgreSQL, db/final-statement.ts): the change and its event go with the COMMIT; a method
    // not changed (absent, deleted, already so, or of a type the settings do not suit) refuses it, so that the
    // request runs again down here (404, 409, 422, or the method as it is).
    if (finalStatementOffered() && (patch.name !== undefined || patch.status !== undefined || patch.role !== undefined || patch.settings !== undefined)) {
      const { name, status, role } = patch;
      const settings = patch.settings;
      const typesTakingSettings = settings === undefined ? undefined : Object.keys(settingsByType).filter((type) => settingsProblem(type, settings) === undefined);
      const changes = { name, status, role, settings: settings === undefined ? undefined : JSON.stringify(settings) };
      return toEnrolmentMethodView(await enrolmentMethodsRepository.updateInOneStatement(db, organisationId, id, changes, typesTakingSettings, nowIso(clock)));
    }
    const row = await live(db, organisationId, id);
    const changes: Partial<EnrolmentMethodRow> = {};
    if (patch.name !== undefined && patch.name !== row.name) changes.name = patch.name;
    if (patch.status !== undefined && patch.status !== row.status) changes.status = patch.status;
    if (patch.role !== undefined && patch.role !== row.role) changes.role = patch.role;
    if (patch.settings !== undefined) {
      checkSettings(row.type, patch.settings);
      const settings = JSON.stringify(patch.settings);
      if (settings !== row.settings) changes.settings = settings;
    }
    if (Object.keys(changes).length === 0) return toEnrolmentMethodView(row);
    changes.updated_at = nowIso(clock);
    await enrolmentMethodsRepository.update(db, organisationId, id, changes);
    const updated = { ...row, ...changes };
    await events.record(db, organisationId, 'enrolment_method.updated', {
      id,
      course_id: row.course_id,
      summary: `Enrolment method ${label(updated)} changed: ${Object.keys(changes).filter((k) => k !== 'updated_at').join(', ')}.`,
    });
    return toEnrolmentMethodView(updated);
  }

  return {
    get(db: Db, organisationId: string, id: string): MaybeAsync<View> {
      return andThen(foundOr404(enrolmentMethodsRepository.findById(db, organisationId, id), 'enrolment_method.not_found', `No enrolment method ${id} in this organisation.`), toEnrolmentMethodView);
    },

    list: resourceList(cursors, {
      list: 'enrolment_methods',
      page: enrolmentMethodsRepository.page,
      map: toEnrolmentMethodView,
      filters: (params: ListParams & { course_id?: string }) => ({ course_id: params.course_id }),
    }),

    create,
    update,

    async getByExternalId(db: Db, organisationId: string, externalId: string): Promise<View> {
      return toEnrolmentMethodView(await foundOr404(enrolmentMethodsRepository.findByExternalId(db, organisationId, externalId), 'enrolment_method.not_found', `No enrolment method with external_id ${JSON.stringify(externalId)}.`));
    },

    async upsertByExternalId(db: Db, organisationId: string, externalId: string, input: Static<typeof CreateEnrolmentMethod>) {
      const existing = await enrolmentMethodsRepository.findByExternalId(db, organisationId, externalId);
      if (!existing) return { created: true, view: await create(db, organisationId, { ...input, external_id: externalId }) };
      if (existing.course_id !== input.course_id) throw fieldError('/course_id', 'immutable', 'An enrolment method cannot move to another course.');
      if (existing.type !== input.type) throw fieldError('/type', 'immutable', 'An enrolment method cannot change its type; delete it and add another.');
      return { created: false, view: await update(db, organisationId, existing.id, input) };
    },

    /**
     * spec: operation 7. A method that still has active enrolments is not deleted silently: that would
     * unenrol people as a side effect. The caller says `unenrol=true` to end those enrolments with it;
     * otherwise 409. Deletion is soft (a tombstone appears in /enrolment_methods/deletions).
     */
    async remove(db: Db, organisationId: string, id: string, opts: { unenrol: boolean }): Promise<void> {
      // One round trip (PostgreSQL, db/final-statement.ts) for a method through which nobody is enrolled: the
      // delete, its tombstone and its event go with the COMMIT; a method not live, or one that has enrolments,
      // refuses it, so that the request runs again down here (404, 409). A caller who says `unenrol` expects
      // enrolments to end, each with its tombstone and event: that request takes the full path at once.
      if (finalStatementOffered() && !opts.unenrol) {
        return enrolmentMethodsRepository.deleteUnusedInOneStatement(db, organisationId, id, nowIso(clock));
      }
      // The method and how many live enrolments it has, in one query.
      const row = await liveOf(id, enrolmentMethodsRepository.findWithLiveEnrolments(db, organisationId, id));
      const active = row.live_enrolments;
      if (active > 0 && !opts.unenrol) {
        throw new ApiError('enrolment_method.has_enrolments', `Enrolment method ${id} still has ${active} active enrolment(s); send \`unenrol=true\` to end them with it.`);
      }
      const at = nowIso(clock);
      // Each ended enrolment gets its tombstone and its `enrolment.deleted` event, as when its course goes.
      const ended = active > 0 ? await enrolments.endEnrolmentsOfMethod(db, organisationId, id) : 0;
      await enrolmentMethodsRepository.update(db, organisationId, id, { deleted_at: at, updated_at: at });
      await deletionsRepository.record(db, organisationId, 'enrolment_method', row, at);
      await events.record(db, organisationId, 'enrolment_method.deleted', {
        id,
        course_id: row.course_id,
        summary: `Enrolment method ${label(row)} deleted${ended > 0 ? `; ${ended} enrolment(s) ended` : ''}.`,
      });
    },

    /** Enrols a person through a method (used by enrolment flows and the demo seed). */
    async enrol(db: Db, organisationId: string, methodId: string, personId: string): Promise<{ id: string }> {
      const method = await live(db, organisationId, methodId);
      if (method.status !== 'enabled') throw new ApiError('enrolment_method.disabled', `Enrolment method ${methodId} is disabled.`);
      const id = newId();
      const at = nowIso(clock);
      await enrolmentMethodsRepository.insertEnrolment(db, {
        id,
        organisation_id: organisationId,
        enrolment_method_id: methodId,
        course_id: method.course_id,
        person_id: personId,
        external_id: null,
        role: method.role as EnrolmentsTable['role'],
        status: 'active',
        starts_at: null,
        ends_at: null,
        created_at: at,
        updated_at: at,
        deleted_at: null,
      });
      return { id };
    },
  };
}

export type EnrolmentMethodService = ReturnType<typeof createEnrolmentMethodService>;
