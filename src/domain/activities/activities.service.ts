// Activities of a course, whatever their type: create (only while the type's extension is switched on),
// read, list, rename or move, soft delete. Type-specific rows and settings come from the `ActivityType`
// entries the service is given; pages of every type hang from an activity.
import type { Static } from 'typebox';
import type { RawBuilder } from 'kysely';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { insertWithExternalId } from '../external-ids.ts';
import { foundOr404, newResourceRow } from '../resource-rows.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import { extensionFor } from '../extensions/extensions.catalog.ts';
import { softDelete } from '../deletions/soft-delete.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';
import { isPostgres } from '../../db/column-types.ts';
import { quotedForSummary } from '../../events/summary-text.ts';
import type { ExtensionService } from '../extensions/extensions.service.ts';
import { listPage, type ListParams } from '../../operations/listing.ts';
import { sectionsRepository } from '../sections/sections.repository.ts';
import type { Activity, CreateActivity, UpdateActivity, UpsertActivity } from './activities.schemas.ts';
import { activitiesRepository, type ActivityRow, type SettingsJsonSql } from './activities.repository.ts';
import type { ActivitySettingsValue, ActivityTypes } from './activity-types.ts';

type ActivityView = Static<typeof Activity>;

const label = (row: { type: string; name: string }) => `${row.type} ${quotedForSummary(row.name)}`;

/**
 * The live activity of `type` that a request body names at `pointer`, for areas whose resources hang from
 * one (wiki pages, lesson pages): unknown or of another type is a 422 at the pointer, deleted a 409.
 */
export async function requireActivityOfType(db: Db, organisationId: string, id: string, type: string, pointer: string): Promise<ActivityRow> {
  return refuseUnlessActivityOfType(await activitiesRepository.findById(db, organisationId, id), id, type, pointer);
}

/** requireActivityOfType for a caller that read the activity with its other facts. */
export function refuseUnlessActivityOfType<Row extends Pick<ActivityRow, 'type' | 'deleted_at'>>(row: Row | undefined, id: string, type: string, pointer: string): Row {
  if (!row) throw fieldError(pointer, 'not_found', `No activity ${id} in this organisation.`);
  if (row.type !== type) throw fieldError(pointer, 'wrong_type', `Activity ${id} is a ${row.type}, not a ${type}.`);
  if (row.deleted_at !== null) throw new ApiError('activity.deleted', `Activity ${id} was deleted at ${row.deleted_at}; nothing in it can change.`);
  return row;
}

/** Refuses (409) a change to something inside an activity that has been deleted. */
export async function requireLiveActivity(db: Db, organisationId: string, id: string): Promise<void> {
  const row = await activitiesRepository.findById(db, organisationId, id);
  if (!row || row.deleted_at !== null) throw activityDeleted(id);
}

/** requireLiveActivity's refusal, for a caller that read whether the activity is live with its other facts. */
export const activityDeleted = (id: string) => new ApiError('activity.deleted', `Activity ${id} was deleted; nothing in it can change.`);

export function createActivityService(deps: { clock: Clock; cursors: CursorCodec; events: EventRecorder; extensions: ExtensionService; types: ActivityTypes }) {
  const { clock, cursors, events, extensions, types } = deps;

  /** Rows with their type's settings, read in one query per type present (unless `read` already holds them). */
  async function views(db: Db, organisationId: string, rows: ActivityRow[], read?: Map<string, ActivitySettingsValue>): Promise<ActivityView[]> {
    const settings = read ?? new Map<string, ActivitySettingsValue>();
    for (const type of read ? [] : new Set(rows.map((r) => r.type))) {
      const settingsOf = types[type]?.settingsOf;
      if (!settingsOf) continue;
      for (const [id, s] of await settingsOf(db, organisationId, rows.filter((r) => r.type === type).map((r) => r.id))) settings.set(id, s);
    }
    return rows.map((r) => ({
      id: r.id,
      external_id: r.external_id,
      course_id: r.course_id,
      section_id: r.section_id,
      type: r.type,
      name: r.name,
      settings: settings.get(r.id) ?? {},
      created_at: r.created_at,
      updated_at: r.updated_at,
      deleted_at: r.deleted_at,
    }));
  }

  const view = async (db: Db, organisationId: string, row: ActivityRow) => (await views(db, organisationId, [row]))[0];

  async function live(db: Db, organisationId: string, id: string): Promise<ActivityRow> {
    return (await liveWithSettings(db, organisationId, id, false)).row;
  }

  /**
   * The live activity, and (`withSettings`, on PostgreSQL) its type's settings read with it, so that a change's
   * answer costs no read of its own after the write (a round trip inside the transaction). Undefined settings:
   * not read (views reads them).
   */
  async function liveWithSettings(db: Db, organisationId: string, id: string, withSettings: boolean): Promise<{ row: ActivityRow; settings?: Map<string, ActivitySettingsValue> }> {
    const read = withSettings && isPostgres(db);
    const found = await foundOr404<ActivityRow & { settings_json?: string | null }>(
      read ? activitiesRepository.findWithSettings(db, organisationId, id, settingsJsonSql(organisationId)) : activitiesRepository.findById(db, organisationId, id),
      'activity.not_found',
      `No activity ${id} in this organisation.`,
    );
    if (found.deleted_at !== null) throw new ApiError('activity.deleted', `Activity ${id} was deleted at ${found.deleted_at}; it can no longer change.`);
    if (!read) return { row: found };
    const { settings_json: settings, ...row } = found;
    return { row, settings: new Map(settings == null ? [] : [[id, JSON.parse(settings) as ActivitySettingsValue]]) };
  }

  async function checkSection(db: Db, organisationId: string, sectionId: string, courseId: string): Promise<void> {
    refuseSection(await sectionsRepository.findById(db, organisationId, sectionId), courseId);
  }

  function refuseSection(section: { course_id: string | null; deleted_at: string | null } | undefined, courseId: string): void {
    if (!section || section.course_id !== courseId || section.deleted_at !== null) {
      throw fieldError('/section_id', 'not_found', 'The section must be a live section of the activity’s course.');
    }
  }

  function checkSettings(type: string, settings: ActivitySettingsValue): void {
    const allowed: readonly string[] = types[type]?.settingKeys ?? [];
    for (const key of Object.keys(settings)) {
      if (!allowed.includes(key)) throw fieldError(`/settings/${key}`, 'not_applicable', `\`${key}\` does not apply to a ${type} activity.`);
    }
  }

  /**
   * One round trip (PostgreSQL, db/final-statement.ts): the activity, the rows its type makes with it (a wiki's
   * wiki) and its event go with the COMMIT; one not made (the course absent or deleted, the type switched off, the
   * section not a live section of the course, the external id taken) refuses it, so that the request runs again
   * down its full path (422, 409). Undefined where the request takes that path at once: settings the type does not
   * take (a 422 that comes after the course's, the switch's and the section's refusals), a type whose own rows
   * cannot be made in the statement.
   */
  async function createInOneStatement(db: Db, organisationId: string, input: Static<typeof CreateActivity>): Promise<ActivityView | undefined> {
    const extension = extensionFor('activity_type', input.type);
    if (extension === undefined || !finalStatementOffered()) return undefined;
    const settings = input.settings ?? {};
    const type = types[input.type];
    if (type?.create && !type.createInOneStatement) return undefined;
    try {
      checkSettings(input.type, settings);
    } catch {
      return undefined;
    }
    const made = type?.createInOneStatement?.(settings);
    const row = newActivityRow(organisationId, input);
    const activity = await activitiesRepository.createInOneStatement(db, row, `Activity ${label(row)} added.`, extension, made?.effects ?? []);
    return (await views(db, organisationId, [activity], new Map(made ? [[activity.id, made.settings]] : [])))[0];
  }

  const newActivityRow = (organisationId: string, input: Static<typeof CreateActivity>): ActivityRow => ({
    ...newResourceRow(organisationId, input.external_id, nowIso(clock)),
    course_id: input.course_id,
    section_id: input.section_id ?? null,
    type: input.type,
    name: input.name,
  });

  async function create(db: Db, organisationId: string, input: Static<typeof CreateActivity>): Promise<ActivityView> {
    const finished = await createInOneStatement(db, organisationId, input);
    if (finished) return finished;
    // Course, type switch and section read at once: one round trip rather than three (PostgreSQL).
    const facts = await activitiesRepository.creationFacts(db, organisationId, { courseId: input.course_id, extension: extensionFor('activity_type', input.type), sectionId: input.section_id ?? undefined });
    if (facts.course_id === null) throw fieldError('/course_id', 'not_found', `No course ${input.course_id} in this organisation.`);
    const course = { id: facts.course_id };
    if (facts.course_deleted_at !== null) throw new ApiError('course.deleted', `Course ${course.id} was deleted; activities cannot be added to it.`);
    await extensions.requireEnabled(db, organisationId, 'activity_type', input.type, '/type', Boolean(facts.extension_disabled));
    if (input.section_id) refuseSection(facts.section_course_id === null ? undefined : { course_id: facts.section_course_id, deleted_at: facts.section_deleted_at }, course.id);
    const settings = input.settings ?? {};
    checkSettings(input.type, settings);
    const row = newActivityRow(organisationId, input);
    await insertWithExternalId((onClash) => activitiesRepository.insert(db, row, onClash), 'activity', input.external_id);
    const shown = await types[row.type]?.create?.(db, organisationId, row, settings);
    await events.record(db, organisationId, 'activity.created', { id: row.id, course_id: row.course_id, type: row.type, summary: `Activity ${label(row)} added.` });
    // The settings as the type stored them: nothing to read back.
    return (await views(db, organisationId, [row], new Map(shown ? [[row.id, shown]] : [])))[0];
  }

  /** Each type's settings in SQL, for the PATCH in one statement, which answers them with the row. */
  const settingsJsonSql = (organisationId: string): SettingsJsonSql =>
    Object.fromEntries(Object.entries(types).flatMap(([name, type]) => (type.settingsJsonSql ? [[name, (activityId: RawBuilder<unknown>) => type.settingsJsonSql!(organisationId, activityId)]] : [])));

  /** A change that changes nothing is not an update: no event, updated_at stays. */
  async function update(db: Db, organisationId: string, id: string, patch: Static<typeof UpdateActivity>): Promise<ActivityView> {
    // One round trip (PostgreSQL, db/final-statement.ts): the change, its event and the activity as answered go
    // with the COMMIT; an activity not changed (absent, deleted, already so, a section not of its course) refuses
    // it, so that the request runs again down here.
    if ((patch.name !== undefined || patch.section_id !== undefined) && finalStatementOffered()) {
      const { settings_json: settings, ...updated } = await activitiesRepository.updateInOneStatement(db, organisationId, id, { name: patch.name, section_id: patch.section_id }, nowIso(clock), settingsJsonSql(organisationId));
      return (await views(db, organisationId, [updated], new Map(settings === null ? [] : [[id, JSON.parse(settings) as ActivitySettingsValue]])))[0];
    }
    const { row, settings } = await liveWithSettings(db, organisationId, id, true);
    const changes: Partial<Pick<ActivityRow, 'name' | 'section_id' | 'updated_at'>> = {};
    if (patch.name !== undefined && patch.name !== row.name) changes.name = patch.name;
    if (patch.section_id !== undefined && patch.section_id !== row.section_id) {
      if (patch.section_id !== null) await checkSection(db, organisationId, patch.section_id, row.course_id);
      changes.section_id = patch.section_id;
    }
    const changed = Object.keys(changes);
    if (changed.length === 0) return (await views(db, organisationId, [row], settings))[0];
    changes.updated_at = nowIso(clock);
    await activitiesRepository.update(db, organisationId, id, changes);
    const updated = { ...row, ...changes };
    await events.record(db, organisationId, 'activity.updated', { id, course_id: row.course_id, type: row.type, summary: `Activity ${label(updated)} changed: ${changed.join(', ')}.` });
    return (await views(db, organisationId, [updated], settings))[0];
  }

  return {
    async get(db: Db, organisationId: string, id: string): Promise<ActivityView> {
      // The row and the settings every type could have for this id, read at once: plain reads issued together
      // leave in one write (one round trip on PostgreSQL), where the settings read after the row would be a second.
      const settingsReads = Object.values(types).flatMap((type) => (type.settingsOf ? [type.settingsOf(db, organisationId, [id])] : []));
      const [found, ...settingsByType] = await Promise.all([activitiesRepository.findById(db, organisationId, id), ...settingsReads]);
      const row = await foundOr404(Promise.resolve(found), 'activity.not_found', `No activity ${id} in this organisation.`);
      return (await views(db, organisationId, [row], new Map(settingsByType.flatMap((m) => [...m]))))[0];
    },

    async list(db: Db, organisationId: string, params: ListParams & { course_id?: string; section_id?: string; type?: string }) {
      const page = await listPage(cursors, {
        list: 'activities',
        organisationId,
        params,
        filters: { course_id: params.course_id, section_id: params.section_id, type: params.type },
        fetch: (q) => activitiesRepository.page(db, organisationId, q),
        map: (row) => row,
      });
      return { data: await views(db, organisationId, page.data), page: page.page };
    },

    async getByExternalId(db: Db, organisationId: string, externalId: string): Promise<ActivityView> {
      const row = await foundOr404(activitiesRepository.findByExternalId(db, organisationId, externalId), 'activity.not_found', `No activity with external_id ${JSON.stringify(externalId)} in this organisation.`);
      return view(db, organisationId, row);
    },

    /** Course, type and settings are fixed once the activity exists: an upsert may not change them. */
    async upsertByExternalId(db: Db, organisationId: string, externalId: string, input: Static<typeof UpsertActivity>) {
      const existing = await activitiesRepository.findByExternalId(db, organisationId, externalId);
      if (!existing) return { created: true, view: await create(db, organisationId, { ...input, external_id: externalId }) };
      if (existing.course_id !== input.course_id) throw fieldError('/course_id', 'immutable', 'An activity cannot move to another course.');
      if (existing.type !== input.type) throw fieldError('/type', 'immutable', 'An activity cannot change its type.');
      if (input.settings !== undefined) {
        const current = (await view(db, organisationId, existing)).settings as Record<string, unknown>;
        for (const [key, value] of Object.entries(input.settings)) {
          if (current[key] !== value) throw fieldError(`/settings/${key}`, 'immutable', `\`${key}\` is fixed once the activity exists.`);
        }
      }
      return { created: false, view: await update(db, organisationId, existing.id, { name: input.name, section_id: input.section_id }) };
    },

    create,
    update,

    async remove(db: Db, organisationId: string, id: string): Promise<void> {
      // One round trip (PostgreSQL, db/final-statement.ts): the delete, its tombstone and its event go with the
      // COMMIT, and an activity not live refuses it, so that the request runs again down here (404 or 409).
      if (finalStatementOffered()) return activitiesRepository.deleteInOneStatement(db, organisationId, id, nowIso(clock));
      const row = await live(db, organisationId, id);
      await softDelete(db, organisationId, 'activity', row, nowIso(clock), (patch) => activitiesRepository.update(db, organisationId, id, patch));
      await events.record(db, organisationId, 'activity.deleted', { id, course_id: row.course_id, type: row.type, summary: `Activity ${label(row)} deleted.` });
    },
  };
}

export type ActivityService = ReturnType<typeof createActivityService>;
