// Sections of a course: create (appended at the end), read, list, partial update (spec operation 10), soft delete.
import { generateKeyBetween } from 'fractional-indexing';
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { insertWithExternalId } from '../external-ids.ts';
import { foundOr404, newResourceRow } from '../resource-rows.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import { resourceList, type ListParams } from '../../operations/listing.ts';
import { softDelete } from '../deletions/soft-delete.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import type { CreateSection, Section, UpdateSection, UpsertSection } from './sections.schemas.ts';
import { sectionsRepository, type SectionRow } from './sections.repository.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';
import { quotedForSummary } from '../../events/summary-text.ts';
import { andThen, type MaybeAsync } from '../../maybe-async.ts';

export type SectionView = Static<typeof Section>;

const describeTitle = (title: string | null) => (title === null ? '(untitled)' : quotedForSummary(title));

export function toSectionView(row: SectionRow): SectionView {
  return {
    id: row.id,
    external_id: row.external_id,
    course_id: row.course_id,
    parent_section_id: row.parent_section_id,
    sort_key: row.sort_key,
    title: row.title,
    summary: row.summary === null ? null : JSON.parse(row.summary),
    visible: Boolean(row.visible),
    created_at: row.created_at,
    updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
}

export function createSectionService(deps: { clock: Clock; cursors: CursorCodec; events: EventRecorder }) {
  const { clock, cursors, events } = deps;

  async function live(db: Db, organisationId: string, id: string): Promise<SectionRow> {
    const row = await foundOr404(sectionsRepository.findById(db, organisationId, id), 'section.not_found', `No section ${id} in this organisation.`);
    if (row.deleted_at !== null) throw new ApiError('section.deleted', `Section ${id} was deleted at ${row.deleted_at}; it can no longer change.`);
    return row;
  }

  async function create(db: Db, organisationId: string, input: Static<typeof CreateSection>): Promise<SectionView> {
    const at = nowIso(clock);
    const asked = {
      ...newResourceRow(organisationId, input.external_id, at),
      course_id: input.course_id,
      parent_section_id: input.parent_section_id ?? null,
      title: input.title ?? null,
      summary: input.summary ? JSON.stringify(input.summary) : null,
      visible: input.visible ?? true,
    };
    const summary = `Section ${describeTitle(asked.title)} added.`;
    // One round trip (PostgreSQL, db/final-statement.ts): the section, its sort key after the course's last (made
    // by the database, as generateKeyBetween makes it) and its event go with the COMMIT; one not made (its course
    // absent or deleted, its parent not a live section of it, its external id taken) refuses it, so that the
    // request runs again down here (422, 409).
    if (finalStatementOffered()) return toSectionView(await sectionsRepository.createInOneStatement(db, asked, summary));
    // One read for every check and the new sort key (sections.repository.ts, placement).
    const placement = await sectionsRepository.placement(db, organisationId, input.course_id, input.parent_section_id ?? null);
    if (!placement) throw fieldError('/course_id', 'not_found', `No course ${input.course_id} in this organisation.`);
    if (placement.deleted_at !== null) throw new ApiError('course.deleted', `Course ${input.course_id} was deleted; sections cannot be added to it.`);
    if (input.parent_section_id && placement.parent_course_id !== input.course_id) {
      throw fieldError('/parent_section_id', 'not_found', 'The parent section must be a live section of the same course.');
    }
    const row: SectionRow = { ...asked, sort_key: generateKeyBetween(placement.last_sort_key ?? null, null) };
    await insertWithExternalId((onClash) => sectionsRepository.insert(db, row, onClash), 'section', input.external_id);
    await events.record(db, organisationId, 'section.created', { id: row.id, course_id: row.course_id, summary });
    return toSectionView(row);
  }

  /**
   * spec: operation 10 — partial update; fields absent from the body are left as they are. One UPDATE does
   * the common case; only when it changes nothing do we read, to tell 404, 409 and "already so" apart.
   * A PATCH that changes nothing is not an update: updated_at (and changes-since feeds) stay put.
   */
  function update(db: Db, organisationId: string, id: string, patch: Static<typeof UpdateSection>): MaybeAsync<SectionView> {
    const changes: Pick<Partial<SectionRow>, 'title' | 'visible'> = {};
    if (patch.title !== undefined) changes.title = patch.title;
    if (patch.visible !== undefined) changes.visible = patch.visible;
    if (Object.keys(changes).length > 0) {
      const at = nowIso(clock);
      // What the event says changed: the new title is the one asked for.
      const what = [patch.title !== undefined ? `titled ${describeTitle(patch.title)}` : null, patch.visible !== undefined ? (patch.visible ? 'shown' : 'hidden') : null];
      const summary = `Section ${what.filter(Boolean).join(' and ')}.`;
      // One round trip (PostgreSQL, db/final-statement.ts): the change and its event go with the COMMIT, and a
      // section not changed (absent, deleted, already so) refuses it, so that the request runs again down here.
      if (finalStatementOffered()) return sectionsRepository.updateLiveRecordingEvent(db, organisationId, id, changes, at, summary).then(toSectionView);
      // On SQLite, in a transaction, at once: the statements answer at once (src/maybe-async.ts).
      return andThen(sectionsRepository.updateLiveIfChanged(db, organisationId, id, changes, at), (updated) => {
        if (updated === undefined) return andThen(live(db, organisationId, id), toSectionView);
        return andThen(events.record(db, organisationId, 'section.updated', { id, course_id: updated.course_id, summary }), () => toSectionView(updated));
      });
    }
    return andThen(live(db, organisationId, id), toSectionView);
  }

  return {
    get(db: Db, organisationId: string, id: string): MaybeAsync<SectionView> {
      return andThen(foundOr404(sectionsRepository.findById(db, organisationId, id), 'section.not_found', `No section ${id} in this organisation.`), toSectionView);
    },

    list: resourceList(cursors, {
      list: 'sections',
      page: sectionsRepository.page,
      map: toSectionView,
      filters: (params: ListParams & { course_id?: string }) => ({ course_id: params.course_id }),
    }),

    async getByExternalId(db: Db, organisationId: string, externalId: string): Promise<SectionView> {
      return toSectionView(await foundOr404(sectionsRepository.findByExternalId(db, organisationId, externalId), 'section.not_found', `No section with external_id ${JSON.stringify(externalId)} in this organisation.`));
    },

    async upsertByExternalId(db: Db, organisationId: string, externalId: string, input: Static<typeof UpsertSection>) {
      const existing = await sectionsRepository.findByExternalId(db, organisationId, externalId);
      if (!existing) return { created: true, view: await create(db, organisationId, { ...input, external_id: externalId }) };
      if (existing.course_id !== input.course_id) throw fieldError('/course_id', 'immutable', 'A section cannot move to another course.');
      const view = await update(db, organisationId, existing.id, { title: input.title ?? undefined, visible: input.visible });
      return { created: false, view };
    },

    create,
    update,

    async remove(db: Db, organisationId: string, id: string): Promise<void> {
      // One round trip (PostgreSQL, db/final-statement.ts): the delete, its tombstone and its event go with the
      // COMMIT, and a section not live refuses it, so that the request runs again down here (404 or 409).
      if (finalStatementOffered()) {
        return sectionsRepository.softDeleteInOneStatement(db, organisationId, id, nowIso(clock));
      }
      const row = await live(db, organisationId, id);
      await softDelete(db, organisationId, 'section', row, nowIso(clock), (patch) => sectionsRepository.update(db, organisationId, id, patch));
      await events.record(db, organisationId, 'section.deleted', { id, course_id: row.course_id, summary: `Section ${describeTitle(row.title)} deleted.` });
    },
  };
}

export type SectionService = ReturnType<typeof createSectionService>;
