import type { Selectable } from 'kysely';
import { v5 as uuidV5 } from 'uuid';
import type { Db } from '../../db/database.ts';
import type { EmailMessageRecipientsTable, EmailMessagesTable, EmailMessageStatus, EnrolmentsTable, RecipientOutcome } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';

export type EmailMessageRow = Selectable<EmailMessagesTable>;
export type RecipientRow = Selectable<EmailMessageRecipientsTable>;

export type StoredAudience = { type: 'people'; person_ids: string[] } | { type: 'course'; course_id: string; roles?: string[] };

/** A person the audience resolves to: whom to send to, and as what address. */
export interface AudienceMember {
  person_id: string;
  address: string;
  name: string;
}

/** A recipient's id is derived from the message and the person, so a preview and the sent record agree. */
export const recipientId = (messageId: string, personId: string): string => uuidV5(personId, messageId);

export const emailMessagesRepository = {
  ...tenantRows('email_messages'),

  /**
   * Applies `patch` only while the message is still in `status` (and not deleted): a worker that claimed it
   * meanwhile wins, and this change is refused instead of landing on a message being sent.
   */
  async updateIfStatus(db: Db, organisationId: string, id: string, status: EmailMessageStatus, patch: Partial<EmailMessageRow>): Promise<EmailMessageRow | undefined> {
    return db
      .updateTable('email_messages')
      .set(patch)
      .where('organisation_id', '=', organisationId)
      .where('id', '=', id)
      .where('status', '=', status)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
  },

  /** The ids among `ids` that are people of this organisation. */
  async existingPeople(db: Db, organisationId: string, ids: string[]): Promise<Set<string>> {
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
