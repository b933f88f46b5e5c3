import Type from 'typebox';
import { ExternalId, nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';
import { jumpKeywords, pageTypeNames, type JumpKeyword, type PageTypeName } from './page-types.ts';

// The spec names lesson pages but shows none of their fields ("Fields of … lesson page records: not shown").
// These are the fields of a lesson page as lesson modules have them (a content page with buttons, question
// pages with answers, and the pages that delimit branches and clusters), in the API's own conventions.

const pageTypeDescription =
  '`content`: a page of text whose answers are the buttons a learner chooses from (a branch table). Question pages: `multichoice`, `truefalse`, `shortanswer`, `numerical`, `essay`, `matching`. Structure: `end_of_branch` (closes the branch a content page opened), `cluster` and `end_of_cluster` (delimit a pool of questions asked at random).';
const PageType = Type.Unsafe<PageTypeName>({ type: 'string', enum: [...pageTypeNames], description: pageTypeDescription });

export const LessonPageContents = Type.Object(
  {
    format: Type.Unsafe<'html' | 'markdown' | 'plain'>({ type: 'string', enum: ['html', 'markdown', 'plain'] }),
    content: Type.String({ maxLength: 65535 }),
  },
  { additionalProperties: false, description: 'The text of the page (for a question page, the question).' },
);

const jumpToDescription =
  'Where the learner goes after choosing this answer: `this_page`, `next_page`, `previous_page`, `end_of_lesson`, `unseen_question` (an unseen question of the cluster), `random_question` (a random question of the cluster), or the id of a live page of the same lesson.';
const JumpTo = Type.Union([Type.Unsafe<JumpKeyword>({ type: 'string', enum: [...jumpKeywords] }), Uuid({ description: 'A live page of the same lesson.' })], {
  description: jumpToDescription,
});

const AnswerText = Type.String({ maxLength: 65535, description: 'The button label, choice, accepted answer, number or range (`min:max`) or matched item, by page type.' });
const AnswerResponse = Type.String({ maxLength: 65535 });
const scoreOptions = { minimum: -1000, maximum: 1000, description: 'Points for choosing this answer (custom scoring), -1000 to 1000.' };

export const LessonPageAnswer = Type.Object(
  {
    text: AnswerText,
    response: Nullable(AnswerResponse, { description: 'Feedback shown after the answer is chosen; on a `matching` page, the item the text matches.' }),
    score: Type.Integer(scoreOptions),
    jump_to: Type.String({ description: jumpToDescription }),
  },
  { additionalProperties: false },
);

const AnswerInput = Type.Object(
  {
    text: AnswerText,
    response: Type.Optional(Nullable(AnswerResponse, { description: 'Feedback; required on `matching` pages, where it is the item the text matches.' })),
    score: Type.Optional(Type.Integer({ ...scoreOptions, default: 0 })),
    jump_to: Type.Optional({ ...JumpTo, default: 'next_page' }),
  },
  { additionalProperties: false },
);

const Answers = Type.Array(AnswerInput, {
  maxItems: 100,
  description:
    'By page type: `content` any number (its buttons); `multichoice` and `matching` at least 2; `truefalse` exactly 2; `shortanswer` and `numerical` at least 1; `essay`, `end_of_branch`, `cluster` and `end_of_cluster` at most 1 (its jump and score). Texts must not be blank except on `essay` and structural pages; a `numerical` text is a number or a `min:max` range; a `matching` answer needs `response`.',
});

export const LessonPage = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    lesson_id: Uuid({ description: 'The lesson activity the page belongs to.' }),
    course_id: Uuid({ description: 'The lesson’s course.' }),
    title: Type.String(),
    page_type: Type.String({ description: pageTypeDescription }),
    contents: Nullable(LessonPageContents),
    answers: Type.Array(LessonPageAnswer),
    sort_key: Type.String({ description: 'Orders the pages of a lesson (compare as bytes: lexicographic, case-sensitive).' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    deleted_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'A page of a lesson activity: content, a question, or the end of a branch or cluster.' },
);

const Title = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: '1 to 255 characters, not only white space.' });
const AfterPageId = Nullable(Uuid(), {
  description: 'Place the page right after this live page of the same lesson; null places it first. Left out: at the end (create) or where it is (update).',
});

export const CreateLessonPage = Type.Object(
  {
    lesson_id: Uuid({ description: 'A live lesson activity.' }),
    title: Title,
    page_type: Type.Optional(PageType),
    contents: Type.Optional(Nullable(LessonPageContents)),
    answers: Type.Optional(Answers),
    after_page_id: Type.Optional(AfterPageId),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false, description: 'A new page of a lesson; `page_type` defaults to `content`, `answers` to none.' },
);

export const UpdateLessonPage = Type.Object(
  {
    title: Type.Optional(Title),
    page_type: Type.Optional(PageType),
    contents: Type.Optional(Nullable(LessonPageContents)),
    answers: Type.Optional(Answers),
    after_page_id: Type.Optional(AfterPageId),
  },
  {
    additionalProperties: false,
    description: 'Partial update: fields left out keep their value; `answers` replaces the whole list. The result must suit the page type (422 at `/answers`).',
  },
);

/** `PUT /lesson_pages/ext:{external_id}` and bulk `upsert`: the external id is in the path (or the operation). */
export const UpsertLessonPage = Type.Omit(CreateLessonPage, ['external_id'], { additionalProperties: false });

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ LessonPage, CreateLessonPage, UpdateLessonPage, UpsertLessonPage });
