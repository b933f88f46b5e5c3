// What every demo step is and shares: the seed's context, a step, finding what an earlier step made, the
// person demo content is authored by, and markdown text.
import type { Db } from '../../db/database.ts';
import type { Services } from '../../services.ts';
import { peopleRepository } from '../../domain/people/people.repository.ts';
import { ApiError } from '../../errors/api-error.ts';

export interface SeedContext {
  /** The transaction the whole seed runs in: a failure leaves the organisation as it was. */
  db: Db;
  services: Services;
  organisationId: string;
  /** Per collection: external id → id of every row created so far. */
  created: Record<string, Map<string, string>>;
}

export interface SeedStep {
  /** The collection the step fills; also its key in the summary. */
  collection: string;
  run(ctx: SeedContext): Promise<Map<string, string>>;
}

/** Looks up a row an earlier step made; a miss means the steps are out of order, a bug in this file. */
export function createdId(ctx: SeedContext, collection: string, externalId: string): string {
  const id = ctx.created[collection]?.get(externalId);
  if (id === undefined) throw new Error(`seed step order: ${collection} ${externalId} has not been created`);
  return id;
}

/** The organisation's first person (its administrator, usually): demo content is authored by them. */
export async function demoAuthor(ctx: SeedContext, needs: string): Promise<{ id: string }> {
  const author = await peopleRepository.earliest(ctx.db, ctx.organisationId);
  if (!author) throw new ApiError('user.not_found', `${needs}: create a person first (atrium person create)`);
  return author;
}

export const md = (content: string) => ({ format: 'markdown' as const, content });
