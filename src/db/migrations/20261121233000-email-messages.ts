// Email messages (campaigns), the recipients each one was sent to with their outcome, and the mail log that
// takes the place of an SMTP server when SMTP_URL is not set.
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { createChangesIndex, createResourceTable, createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await createResourceTable(db, 'email_messages', (table) =>
    table
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('audience', 'text', (c) => c.notNull())
      .addColumn('send_at', t.timestamp)
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('sent_at', t.timestamp)
      // Null until sending starts: the audience is resolved into recipients then, not before.
      .addColumn('recipients_total', 'integer')
      .addColumn('recipients_sent', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('recipients_failed', 'integer', (c) => c.notNull().defaultTo(0))
      // The worker holding a message while it sends: a random token per claim, and until when it holds it.
      .addColumn('claim_token', 'text')
      .addColumn('lease_until', t.timestamp)
      .addColumn('created_by', t.uuid, (c) => c.notNull().references('people.id')),
  ).execute();
  await createChangesIndex(db, 'email_messages');
  // The worker's question, across organisations: which scheduled messages are due, which claims have lapsed.
  await db.schema.createIndex('email_messages_due').on('email_messages').columns(['status', 'send_at']).execute();

  await createTenantTable(db, 'email_message_recipients')
    .addColumn('email_message_id', t.uuid, (c) => c.notNull().references('email_messages.id'))
    .addColumn('person_id', t.uuid, (c) => c.notNull().references('people.id'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    // Set, once, just before the mail is handed to the transport: a recipient with it set is never sent again.
    .addColumn('attempted_at', t.timestamp)
    .addColumn('sent_at', t.timestamp)
    .addUniqueConstraint('email_message_recipients_person_unique', ['email_message_id', 'person_id'])
    .execute();

  await db.schema
    .createTable('mail_log')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.references('organisations.id'))
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text')
    .addColumn('html_body', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mail_log_org').on('mail_log').columns(['organisation_id', 'id']).execute();
}
