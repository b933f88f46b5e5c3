import Type from 'typebox';
import { defineOperation } from '../../operations/operation.ts';
import { ListQuery, PageQuery } from '../../operations/pagination.ts';
import { createOperation, deleteByIdOperation, listOperation, readByIdOperation, syncOperations, updateOperation, type Resource } from '../../operations/resource-operations.ts';
import { IdParams, ListEnvelope, Uuid } from '../../operations/schemas.ts';
import { CreateWikiPage, RestoreWikiPage, UpdateWikiPage, UpsertWikiPage, VersionParams, WikiPage, WikiPageVersion } from './wiki-pages.schemas.ts';

const wikiPage: Resource = { collection: 'wiki_pages', resourceType: 'wiki_page', name: { singular: 'wiki page', plural: 'wiki pages' }, tag: 'Wiki pages', item: WikiPage, notFoundCode: 'wiki_page.not_found' };
const { tag, notFoundCode } = wikiPage;
const read = { scope: 'courses:read', capability: 'course/view' } as const;
const edit = { scope: 'courses:write', capability: 'wiki/edit' } as const;
const example = { activity_id: '0193a5b2-7c1d-7000-8000-000000000001', title: 'Getting started', body: { format: 'markdown', content: '# Welcome\n\nStart here.' } };

export const wikiPageOperations = [
  ...syncOperations({
    ...wikiPage,
    upsertErrorCodes: ['activity.deleted', 'wiki_page.deleted', 'wiki_page.title_taken', 'wiki_page.edit_conflict', 'resource.external_id_taken'],
    read,
    write: edit,
    upsertBody: UpsertWikiPage,
    upsertExample: example,
    getByExternalId: (ctx, ext) => ctx.services.wikiPages.getByExternalId(ctx.db, ctx.organisation.id, ext),
    upsertByExternalId: (ctx, ext, body) => ctx.services.wikiPages.upsertByExternalId(ctx.db, ctx.organisation.id, ctx.actor.personId, ext, body),
  }),
  listOperation({
    ...wikiPage,
    id: 'listWikiPages',
    summary: 'List wiki pages',
    description: 'Live wiki pages in creation order, optionally of one activity, course or subwiki. Deleted pages are listed at `/wiki_pages/deletions`.',
    ...read,
    query: Type.Object(
      {
        ...PageQuery,
        updated_since: ListQuery.updated_since,
        activity_id: Type.Optional(Uuid({ description: 'Only pages of this wiki activity.' })),
        course_id: Type.Optional(Uuid({ description: 'Only pages of this course.' })),
        subwiki_id: Type.Optional(Uuid({ description: 'Only pages of this subwiki.' })),
      },
      { additionalProperties: false },
    ),
    handler: (ctx, { query }) => ctx.services.wikiPages.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    ...wikiPage,
    id: 'getWikiPage',
    summary: 'Read a wiki page',
    description: 'The page as its current version has it. A deleted page is not found.',
    ...read,
    read: (ctx, id) => ctx.services.wikiPages.get(ctx.db, ctx.organisation.id, id),
  }),
  createOperation({
    ...wikiPage,
    id: 'createWikiPage',
    errorCodes: ['activity.deleted', 'wiki_page.title_taken', 'resource.external_id_taken'],
    emits: ['wiki_page.created'],
    summary: 'Create a wiki page',
    description:
      'Version 1 of a new page in a wiki activity. Which subwiki it goes into follows the wiki’s mode: the common one (collaborative), `subwiki_user_id`’s (individual; the caller’s own when left out) or `subwiki_group_id`’s (group). Titles are unique among the live pages of a subwiki (409 `wiki_page.title_taken`).',
    ...edit,
    body: CreateWikiPage,
    bodyExample: example,
    successDescription: 'The new page, at version 1.',
    handler: (ctx, { body }) => ctx.services.wikiPages.create(ctx.db, ctx.organisation.id, ctx.actor.personId, body),
  }),
  updateOperation({
    ...wikiPage,
    id: 'updateWikiPage',
    errorCodes: ['activity.deleted', 'wiki_page.deleted', 'wiki_page.title_taken', 'wiki_page.edit_conflict'],
    emits: ['wiki_page.updated'],
    summary: 'Edit a wiki page',
    description:
      'Partial update of `title` and `body`; a change of either makes a new version (a body or title equal to the current one changes nothing). A deleted page, or one of a deleted activity, cannot change (409); so neither can a page another request changed at the same moment (409 `wiki_page.edit_conflict`).',
    ...edit,
    body: UpdateWikiPage,
    bodyExample: { title: 'Getting started (revised)', body: { format: 'markdown', content: '# Welcome\n\nStart with the reading list.' } },
    successDescription: 'The page as it is now.',
    handler: (ctx, { params, body }) => ctx.services.wikiPages.update(ctx.db, ctx.organisation.id, ctx.actor.personId, params.id, body),
  }),
  deleteByIdOperation({
    ...wikiPage,
    id: 'deleteWikiPage',
    errorCodes: ['activity.deleted', 'wiki_page.deleted'],
    emits: ['wiki_page.deleted'],
    summary: 'Delete a wiki page',
    description: 'Soft delete: the page leaves reads and lists and is listed at `/wiki_pages/deletions`; its title is free again. Deleting it again is a 409.',
    scope: 'courses:delete',
    capability: 'wiki/edit',
    remove: (ctx, id) => ctx.services.wikiPages.remove(ctx.db, ctx.organisation.id, ctx.actor.personId, id),
  }),
  defineOperation({
    id: 'restoreWikiPageVersion',
    errorCodes: ['activity.deleted', 'wiki_page.deleted', 'wiki_page.title_taken', 'wiki_page.edit_conflict'],
    emits: ['wiki_page.restored'],
    method: 'POST',
    path: '/wiki_pages/{id}/actions/restore',
    tag,
    summary: 'Restore an earlier version of a wiki page as a new version',
    description:
      'Makes a new version whose title and body are those of `version`; the versions before it stay as they were. When the page already has that title and body (e.g. `version` is the current one), nothing changes: 200 with the page, no new version. 404: no such page. 409 `wiki_page.deleted`, `activity.deleted`, `wiki_page.title_taken` (another live page now has the old title), `wiki_page.edit_conflict` (a simultaneous change). 422: `version` missing or out of range, or a version the page never had (`errors[0].path` = `/version`).',
    scope: 'courses:write',
    capability: 'wiki/revert',
    writes: true,
    idempotency: 'optional',
    params: IdParams,
    body: RestoreWikiPage,
    bodyExample: { version: 1 },
    notFoundCode,
    success: { status: 200, schema: WikiPage, description: 'The wiki page, at its new version.' },
    errors: [404, 409, 422],
    handler: (ctx, { params, body }) => ctx.services.wikiPages.restore(ctx.db, ctx.organisation.id, ctx.actor.personId, params.id, body.version),
  }),
  defineOperation({
    id: 'listWikiPageVersions',
    method: 'GET',
    path: '/wiki_pages/{id}/versions',
    tag,
    summary: 'List the versions of a wiki page',
    description: 'The `wiki_page_versions` collection of one page, oldest first. Versions are never changed.',
    ...read,
    writes: false,
    params: IdParams,
    query: Type.Object(PageQuery, { additionalProperties: false }),
    notFoundCode,
    success: { status: 200, schema: ListEnvelope(WikiPageVersion), description: 'A page of versions.' },
    errors: [404, 422],
    handler: (ctx, { params, query }) => ctx.services.wikiPages.listVersions(ctx.db, ctx.organisation.id, params.id, query),
  }),
  defineOperation({
    id: 'getWikiPageVersion',
    errorCodes: ['wiki_page.version_not_found'],
    method: 'GET',
    path: '/wiki_pages/{id}/versions/{version}',
    tag,
    summary: 'Read one version of a wiki page',
    description: '404 `wiki_page.version_not_found` for a version the page never had.',
    ...read,
    writes: false,
    params: VersionParams,
    notFoundCode,
    success: { status: 200, schema: WikiPageVersion, description: 'The version.' },
    errors: [404],
    handler: (ctx, { params }) => ctx.services.wikiPages.getVersion(ctx.db, ctx.organisation.id, params.id, params.version),
  }),
];
