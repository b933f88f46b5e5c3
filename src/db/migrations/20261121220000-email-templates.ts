// Email templates: organisation overrides per (message, scope, language) and the deployment's platform
// templates per (message, language), each with numbered versions. The partial unique indexes hold the rule
// "at most one draft and one published version per template" even against concurrent writers.
import { sql, type Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { changeTimes, createTenantTable, type TableBuilder } from '../migration-tables.ts';

/** The version columns both levels share. */
function versionColumns(db: Kysely<any>, table: TableBuilder, templates: string): TableBuilder {
  const t = columnTypes(db);
  return table
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('template_id', t.uuid, (c) => c.notNull().references(`${templates}.id`))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('preheader', 'text')
    .addColumn('variable_refs', 'text', (c) => c.notNull())
    .addColumn('body', 'text')
    .$call(changeTimes(db))
    .addColumn('published_at', t.timestamp);
}

async function oneVersionPerState(db: Kysely<any>, table: string): Promise<void> {
  await db.schema.createIndex(`${table}_number`).on(table).columns(['template_id', 'version']).unique().execute();
  for (const state of ['draft', 'published']) {
    await db.schema.createIndex(`${table}_one_${state}`).on(table).column('template_id').unique().where(sql.ref('state'), '=', sql.lit(state)).execute();
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await createTenantTable(db, 'email_templates')
    .addColumn('message_key', 'text', (c) => c.notNull())
    .addColumn('scope_level', 'text', (c) => c.notNull())
    .addColumn('scope_id', t.uuid)
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  // NULLs are distinct in unique indexes, so the tenant level (scope_id null) gets an index of its own.
  await db.schema
    .createIndex('email_templates_scoped')
    .on('email_templates')
    .columns(['organisation_id', 'message_key', 'scope_level', 'scope_id', 'language'])
    .unique()
    .where(sql.ref('scope_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('email_templates_tenant')
    .on('email_templates')
    .columns(['organisation_id', 'message_key', 'language'])
    .unique()
    .where(sql.ref('scope_id'), 'is', null)
    .execute();

  await versionColumns(db, db.schema.createTable('email_template_versions'), 'email_templates')
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('from_name', 'text')
    .addColumn('reply_to', 'text')
    .addColumn('text_part', 'text')
    .execute();
  await oneVersionPerState(db, 'email_template_versions');

  await db.schema
    .createTable('platform_email_templates')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('message_key', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('platform_email_templates_unique', ['message_key', 'language'])
    .execute();

  await versionColumns(db, db.schema.createTable('platform_email_template_versions'), 'platform_email_templates').execute();
  await oneVersionPerState(db, 'platform_email_template_versions');
}
