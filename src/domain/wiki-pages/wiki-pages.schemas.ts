import Type from 'typebox';
import { ExternalId, MAX_SAFE, nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';

// spec: Resources and fields — Wiki page: exactly these fields, all required.
export const WikiPage = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    activity_id: Uuid(),
    course_id: Uuid(),
    wiki_id: Uuid(),
    subwiki_id: Uuid(),
    subwiki_user_id: Nullable(Uuid({ description: 'The person whose subwiki this is, in an individual wiki.' })),
    subwiki_group_id: Nullable(Uuid({ description: 'The group whose subwiki this is, in a group wiki.' })),
    title: Type.String(),
    body: Type.Unknown({ description: 'Any JSON value, stored and returned as given.' }),
    version: Type.Integer({ minimum: 1, description: 'The current version; every change of title or body makes a new one.' }),
    updated_by: Uuid({ description: 'The person who made the current version (or deleted the page).' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { additionalProperties: false, description: 'A page of a wiki activity, as its current version has it.' },
);

/** An item of the `wiki_page_versions` collection: never changed once written. */
export const WikiPageVersion = Type.Object(
  {
    id: Uuid(),
    wiki_page_id: Uuid(),
    version: Type.Integer({ minimum: 1 }),
    title: Type.String(),
    body: Type.Unknown({ description: 'Any JSON value, as it was in this version.' }),
    restored_from: Nullable(Type.Integer({ minimum: 1 }), { description: 'The version this one restored, when a restore made it.' }),
    created_by: Uuid({ description: 'The person who made this version.' }),
    created_at: Timestamp(),
  },
  { additionalProperties: false, description: 'One version of a wiki page.' },
);

// Wiki links name pages by title; a title made only of white space would be a link to nothing.
const Title = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: '1 to 255 characters, unique among the live pages of the subwiki.' });
const Body = Type.Unknown({ description: 'Any JSON value (a block document, Markdown text, …); null is allowed.' });

export const CreateWikiPage = Type.Object(
  {
    activity_id: Uuid({ description: 'A live wiki activity.' }),
    title: Title,
    body: Body,
    subwiki_user_id: Type.Optional(
      Nullable(Uuid({ description: 'Individual wikis only: whose subwiki the page goes into; the caller’s own when left out.' })),
    ),
    subwiki_group_id: Type.Optional(Nullable(Uuid({ description: 'Group wikis only (required there): which group’s subwiki the page goes into.' }))),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateWikiPage = Type.Object(
  {
    title: Type.Optional(Title),
    body: Type.Optional(Body),
  },
  { additionalProperties: false, description: 'Partial update: fields left out keep their value. A change of either makes a new version.' },
);

/** `PUT /wiki_pages/ext:{external_id}`: the external id is in the path. */
export const UpsertWikiPage = Type.Omit(CreateWikiPage, ['external_id'], { additionalProperties: false });

// spec: operation 4 — body `version`, integer 1 to 9007199254740991, a version from `wiki_page_versions`.
export const RestoreWikiPage = Type.Object(
  {
    version: Type.Integer({ minimum: 1, maximum: MAX_SAFE, description: 'A version the page has had (see `GET /wiki_pages/{id}/versions`).' }),
  },
  { additionalProperties: false },
);

export const VersionParams = Type.Object(
  { id: Uuid(), version: Type.Integer({ minimum: 1, maximum: MAX_SAFE }) },
  { additionalProperties: false },
);

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ WikiPage, WikiPageVersion, CreateWikiPage, UpdateWikiPage, UpsertWikiPage, RestoreWikiPage });
