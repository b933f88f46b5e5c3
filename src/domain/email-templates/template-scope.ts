// The scope an organisation template applies to (spec: operation 1 — Query): the whole organisation
// (`tenant`), or one category, course or activity of it, in one language.
import type { Db } from '../../db/database.ts';
import type { TemplateScopeLevel } from '../../db/tables.ts';
import { ApiError } from '../../errors/api-error.ts';
import { activitiesRepository } from '../activities/activities.repository.ts';
import { categoriesRepository, coursesRepository } from '../courses/courses.repository.ts';
import { canonicalLanguage } from './language-tag.ts';

export interface TemplateScopeQuery {
  language: string;
  level?: TemplateScopeLevel;
  scope_id?: string;
}

export interface TemplateScope {
  level: TemplateScopeLevel;
  scope_id: string | null;
  language: string;
}

/** spec: operation 1 — `scope_id` is required unless `level` is `tenant`, and refused when it is (422). */
export function scopeFromQuery(query: TemplateScopeQuery): TemplateScope {
  const level = query.level ?? 'tenant';
  if (level === 'tenant' && query.scope_id !== undefined) {
    throw new ApiError('validation.invalid_parameter', 'Query parameter `scope_id` is refused when `level` is `tenant`: the tenant scope is the whole organisation.');
  }
  if (level !== 'tenant' && query.scope_id === undefined) {
    throw new ApiError('validation.invalid_parameter', `Query parameter \`scope_id\` is required when \`level\` is \`${level}\`: name the ${level}.`);
  }
  return { level, scope_id: query.scope_id ?? null, language: canonicalLanguage(query.language) };
}

const scopeRows = { category: categoriesRepository, course: coursesRepository, activity: activitiesRepository };

const notFound = (scope: TemplateScope) => new ApiError('email_template.scope_not_found', `No ${scope.level} ${scope.scope_id} in this organisation.`);

/**
 * Whether the scope exists in the organisation (404 otherwise) and is live: a deleted category, course or
 * activity keeps its templates readable, but they no longer change (see `may_edit_source`).
 */
export async function scopeIsLive(db: Db, organisationId: string, scope: TemplateScope): Promise<boolean> {
  if (scope.level === 'tenant') return true;
  const row = await scopeRows[scope.level].findById(db, organisationId, scope.scope_id!);
  if (!row) throw notFound(scope);
  return row.deleted_at === null;
}
