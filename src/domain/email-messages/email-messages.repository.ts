import { sql, type RawBuilder, type Selectable } from 'kysely';
import { v5 as uuidV5 } from 'uuid';
import type { Db } from '../../db/database.ts';
import type { EmailMessageRecipientsTable, EmailMessagesTable, EnrolmentsTable, RecipientOutcome } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { isPostgres } from '../../db/column-types.ts';
import { changedColumnsSql, insertInOneStatement, updateLiveInOneStatement, type ColumnChange } from '../one-statement-update.repository.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { isoTimestampSql, quotedForSummarySql } from '../../events/summary-text.ts';

export type EmailMessageRow = Selectable<EmailMessagesTable>;
export type RecipientRow = Selectable<EmailMessageRecipientsTable>;

export type StoredAudience = { type: 'people'; person_ids: string[] } | { type: 'course'; course_id: string; roles?: string[] };

/** A person the audience resolves to: whom to send to, and as what address. */
export interface AudienceMember {
  person_id: string;
  address: string;
  name: string;
}

/** What a PATCH in one statement may set: values checked already (subject, body and send_at as stored). */
export interface PlainEmailMessageChanges {
  subject?: string;
  body?: string;
  send_at?: string | null;
  status?: 'draft' | 'scheduled' | 'cancelled';
}

const quotedSubject = quotedForSummarySql(sql`u.subject`);

/** A recipient's id is derived from the message and the person, so a preview and the sent record agree. */
export const recipientId = (messageId: string, personId: string): string => uuidV5(personId, messageId);

export const emailMessagesRepository = {
  ...tenantRows('email_messages'),

  /**
   * The message, locked until the transaction ends (PostgreSQL: FOR UPDATE; SQLite's writer excludes every
   * other): the sending worker passes over a locked message (its claim skips locked rows), so a change decided on
   * this row lands on it as read, and can be a deferred write (db/deferred-writes.ts) rather than an UPDATE whose
   * answer the request waits for.
   */
  findForChange(db: Db, organisationId: string, id: string): Promise<EmailMessageRow | undefined> {
    const query = db.selectFrom('email_messages').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id);
    return (isPostgres(db) ? query.forUpdate() : query).executeTakeFirst();
  },

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): the change of a draft or scheduled
   * message, its event worded as the service words it (describeChange). A scheduled message keeps a send_at
   * not before `earliestSendAt`, as the service checks when status or send_at change. When any of this does not
   * hold, nothing changes and the full path says why (409, 422).
   */
  updateInOneStatement(db: Db, organisationId: string, id: string, changes: PlainEmailMessageChanges, at: string, earliestSendAt: string): Promise<EmailMessageRow> {
    const asked: ColumnChange[] = [];
    if (changes.subject !== undefined) asked.push(['subject', sql`${changes.subject}::text`]);
    if (changes.body !== undefined) asked.push(['body', sql`${changes.body}::text`]);
    if (changes.send_at !== undefined) asked.push(['send_at', sql`${changes.send_at}::timestamptz`]);
    if (changes.status !== undefined) asked.push(['status', sql`${changes.status}::text`]);
    const premises = [sql<boolean>`b.status in ('draft', 'scheduled')`];
    if (changes.send_at !== undefined || changes.status !== undefined) {
      const status = changes.status === undefined ? sql`b.status` : sql`${changes.status}::text`;
      const sendAt = changes.send_at === undefined ? sql`b.send_at` : sql`${changes.send_at}::timestamptz`;
      premises.push(sql<boolean>`((b.status is not distinct from ${status} and b.send_at is not distinct from ${sendAt}) or ${status} <> 'scheduled' or ${sendAt} >= ${earliestSendAt}::timestamptz)`);
    }
    const how = sql`case u.status when 'scheduled' then 'scheduled for ' || ${isoTimestampSql(sql`u.send_at`)} when 'draft' then 'unscheduled (back to draft)' else 'cancelled' end`;
    const changed = changedColumnsSql(asked.map(([column]) => column));
    const summary = sql`'Email message ' || ${quotedSubject} || case when b.status is distinct from u.status then ' ' || ${how} else ' changed: ' || ${changed} end || '.'`;
    return updateLiveInOneStatement(db, 'email_messages', organisationId, id, asked, { type: 'email_message.updated', occurredAt: at, members: [['summary', summary]] }, { premises });
  },

  /**
   * PostgreSQL, as a final statement: the soft delete of a message not being sent (a scheduled one cancelled
   * with it, so it is never sent), its tombstone and its event (deletions.repository.ts).
   */
  softDeleteInOneStatement(db: Db, organisationId: string, id: string, at: string): Promise<void> {
    // `was`: the message as it was (the statement's snapshot, before its UPDATE), whose status the summary tells.
    const was = sql`select status from email_messages where organisation_id = ${organisationId} and id = ${id}`;
    const cancelled = sql`case when (select status from was) = 'scheduled' then ' (its scheduled sending cancelled)' else '' end`;
    const event = { type: 'email_message.deleted' as const, occurredAt: at, members: [['summary', sql`'Email message ' || ${quotedSubject} || ' deleted' || ${cancelled} || '.'`]] as Array<[string, typeof cancelled]> };
    return deletionsRepository.softDeleteInOneStatement(db, 'email_messages', 'email_message', organisationId, id, event, {
      set: [['status', sql`case when status = 'scheduled' then 'cancelled' else status end`]],
      premises: [sql<boolean>`status <> 'sending'`],
      effects: [['was', was]],
    });
  },

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a new message, `row` as the service made
   * it, with its event saying `summary`. The premises, each a refusal of the full path (checkAudienceTargets): every
   * person a `people` audience lists one of the organisation's, a `course` audience's course there and live; an
   * external id taken makes nothing either.
   */
  createInOneStatement(db: Db, row: EmailMessageRow, audience: StoredAudience, summary: string): Promise<EmailMessageRow> {
    const org = row.organisation_id;
    // Compared as text, as the ids came in the body.
    const premise =
      audience.type === 'people'
        ? sql<boolean>`not exists(select 1 from unnest(${audience.person_ids}::text[]) as asked(id) where not exists(select 1 from people p where p.organisation_id = ${org} and p.id::text = asked.id))`
        : sql<boolean>`exists(select 1 from courses c where c.organisation_id = ${org} and c.id::text = ${audience.course_id}::text and c.deleted_at is null)`;
    const event = { type: 'email_message.created' as const, occurredAt: row.created_at, members: [['summary', sql`${summary}::text`]] as Array<[string, RawBuilder<unknown>]> };
    return insertInOneStatement<EmailMessageRow>(db, 'email_messages', row, event, { premises: [premise] });
  },

  /** Messages by external id, locked as findForChange locks them (a bulk upsert may change them). */
  byExternalIdsForChange(db: Db, organisationId: string, externalIds: string[]): Promise<EmailMessageRow[]> {
    if (externalIds.length === 0) return Promise.resolve([]);
    const query = db.selectFrom('email_messages').selectAll().where('organisation_id', '=', organisationId).where('external_id', 'in', externalIds);
    return (isPostgres(db) ? query.forUpdate() : query).execute();
  },

  /** Courses by id: whether each exists and is live. */
  courses(db: Db, organisationId: string, ids: string[]): Promise<Array<{ id: string; deleted_at: string | null }>> {
    if (ids.length === 0) return Promise.resolve([]);
    return db.selectFrom('courses').select(['id', 'deleted_at']).where('organisation_id', '=', organisationId).where('id', 'in', ids).execute();
  },

  /** The ids among `ids` that are people of this organisation. */
  async existingPeople(db: Db, organisationId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await db.selectFrom('people').select('id').where('organisation_id', '=', organisationId).where('id', 'in', ids).execute();
    return new Set(rows.map((r) => r.id));
  },

  /**
   * The people an audience resolves to now, in person id order, from after `afterPersonId`. A course's
   * participants: people with an active enrolment in it through a method that is not deleted (with one of
   * `roles`, when given). Each person once, whatever the number of their enrolments.
   */
  audience(db: Db, organisationId: string, audience: StoredAudience, page: { afterPersonId?: string; limit?: number } = {}): Promise<AudienceMember[]> {
    let query = db.selectFrom('people').select(['id as person_id', 'email as address', 'name']).where('organisation_id', '=', organisationId);
    if (audience.type === 'people') {
      query = query.where('id', 'in', audience.person_ids);
    } else {
      let participants = db
        .selectFrom('enrolments')
        .innerJoin('enrolment_methods', 'enrolment_methods.id', 'enrolments.enrolment_method_id')
        .select('enrolments.person_id')
        .where('enrolments.organisation_id', '=', organisationId)
        .where('enrolments.course_id', '=', audience.course_id)
        .where('enrolments.status', '=', 'active')
        .where('enrolments.deleted_at', 'is', null)
        .where('enrolment_methods.deleted_at', 'is', null);
      if (audience.roles) participants = participants.where('enrolments.role', 'in', audience.roles as EnrolmentsTable['role'][]);
      query = query.where('id', 'in', participants);
    }
    if (page.afterPersonId) query = query.where('id', '>', page.afterPersonId);
    query = query.orderBy('id');
    return (page.limit === undefined ? query : query.limit(page.limit)).execute();
  },

  /** Recorded recipients of a message (once sending started), in person id order. */
  recipients(db: Db, organisationId: string, messageId: string, page: { afterPersonId?: string; limit: number; outcome?: RecipientOutcome }): Promise<RecipientRow[]> {
    let query = db.selectFrom('email_message_recipients').selectAll().where('organisation_id', '=', organisationId).where('email_message_id', '=', messageId);
    if (page.outcome) query = query.where('outcome', '=', page.outcome);
    if (page.afterPersonId) query = query.where('person_id', '>', page.afterPersonId);
    return query.orderBy('person_id').limit(page.limit).execute();
  },
};
