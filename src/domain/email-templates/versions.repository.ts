// SQL for template versions, shared by both levels: `email_template_versions` (organisation data, every query
// filtered by organisation) and `platform_email_template_versions` (the deployment's, owned by nobody).
// The owner argument's type follows the table, so an organisation table can never be queried without one.
import type { Db } from '../../db/database.ts';
import type { Tables, TemplateVersionState } from '../../db/tables.ts';

export type VersionTable = 'email_template_versions' | 'platform_email_template_versions';
// No generated columns: a selected row is the table's row type itself.
export type VersionRow<T extends VersionTable> = Tables[T];
/** The organisation a version belongs to; null for the platform level. */
export type OwnerOf<T extends VersionTable> = T extends 'email_template_versions' ? string : null;

export function versionRows<T extends VersionTable>(table: T) {
  type Row = VersionRow<T>;
  // Kysely cannot narrow columns through a generic table; the casts stay inside this function.
  const owned = (query: any, owner: string | null) => (owner === null ? query : query.where('organisation_id', '=', owner));
  const select = (db: Db, owner: string | null, templateId: string) => owned((db as any).selectFrom(table).selectAll().where('template_id', '=', templateId), owner);
  const update = (db: Db, owner: string | null) => owned((db as any).updateTable(table), owner);

  return {
    /** Every version of a template, newest first. */
    list(db: Db, owner: OwnerOf<T>, templateId: string): Promise<Row[]> {
      return select(db, owner, templateId).orderBy('version', 'desc').execute();
    },

    findById(db: Db, owner: OwnerOf<T>, templateId: string, id: string): Promise<Row | undefined> {
      return select(db, owner, templateId).where('id', '=', id).executeTakeFirst();
    },

    findInState(db: Db, owner: OwnerOf<T>, templateId: string, state: TemplateVersionState): Promise<Row | undefined> {
      return select(db, owner, templateId).where('state', '=', state).executeTakeFirst();
    },

    async lastVersion(db: Db, owner: OwnerOf<T>, templateId: string): Promise<number> {
      const row = await select(db, owner, templateId).clearSelect().select('version').orderBy('version', 'desc').limit(1).executeTakeFirst();
      return row?.version ?? 0;
    },

    async insert(db: Db, row: Tables[T]): Promise<void> {
      await (db as any).insertInto(table).values(row).execute();
    },

    /** Replaces the draft's content; undefined when `id` is no longer the draft (published meanwhile). */
    replaceDraft(db: Db, owner: OwnerOf<T>, id: string, content: Partial<Row>, at: string): Promise<Row | undefined> {
      return update(db, owner).set({ ...content, updated_at: at }).where('id', '=', id).where('state', '=', 'draft').returningAll().executeTakeFirst();
    },

    /** The published version (if any) becomes archived; it keeps its `published_at`. */
    async archivePublished(db: Db, owner: OwnerOf<T>, templateId: string, at: string): Promise<void> {
      await update(db, owner).set({ state: 'archived', updated_at: at }).where('template_id', '=', templateId).where('state', '=', 'published').execute();
    },

    /** The draft becomes published; undefined when `id` is no longer the draft. */
    publishDraft(db: Db, owner: OwnerOf<T>, id: string, at: string): Promise<Row | undefined> {
      return update(db, owner).set({ state: 'published', published_at: at, updated_at: at }).where('id', '=', id).where('state', '=', 'draft').returningAll().executeTakeFirst();
    },
  };
}

export type VersionRows<T extends VersionTable> = ReturnType<typeof versionRows<T>>;
