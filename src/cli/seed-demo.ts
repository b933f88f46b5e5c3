// The demo content `atrium seed demo` creates, as an ordered list of steps. Each step fills one collection
// through the services (so the rows obey the same rules as API writes) and records what it made by
// external id, which later steps use to link to it. A new area adds its step at the end of `demoSteps`.
import type { Db } from '../db/database.ts';
import type { Services } from '../services.ts';
import { peopleRepository } from '../domain/people/people.repository.ts';
import { CommandError } from './errors.ts';

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

interface DemoCourse {
  shortname: string;
  fullname: string;
  sections: string[];
}

const catalog: { key: string; name: string; courses: DemoCourse[] }[] = [
  {
    key: 'sciences',
    name: 'Sciences',
    courses: [
      { shortname: 'BIO101', fullname: 'Introduction to Biology', sections: ['Cells', 'Genetics', 'Evolution', 'Ecology'] },
      { shortname: 'CHEM101', fullname: 'Chemistry Foundations', sections: ['Atoms and elements', 'Bonds', 'Reactions'] },
    ],
  },
  {
    key: 'humanities',
    name: 'Humanities',
    courses: [
      { shortname: 'HIST201', fullname: 'Modern European History', sections: ['Revolutions', 'Industrialisation', 'The world wars', 'Europe after 1945'] },
      { shortname: 'PHIL110', fullname: 'Thinking Clearly: Logic and Argument', sections: ['Arguments', 'Fallacies', 'Evidence'] },
    ],
  },
];

const courseKey = (c: DemoCourse) => `demo-course-${c.shortname.toLowerCase()}`;

/** Looks up a row an earlier step made; a miss means the steps are out of order, a bug in this file. */
function createdId(ctx: SeedContext, collection: string, externalId: string): string {
  const id = ctx.created[collection]?.get(externalId);
  if (id === undefined) throw new Error(`seed step order: ${collection} ${externalId} has not been created`);
  return id;
}

const categories: SeedStep = {
  collection: 'categories',
  async run(ctx) {
    const made = new Map<string, string>();
    for (const c of catalog) {
      const external_id = `demo-category-${c.key}`;
      made.set(external_id, (await ctx.services.courses.createCategory(ctx.db, ctx.organisationId, { name: c.name, external_id })).id);
    }
    return made;
  },
};

const courses: SeedStep = {
  collection: 'courses',
  async run(ctx) {
    const made = new Map<string, string>();
    for (const c of catalog) {
      const category_id = createdId(ctx, 'categories', `demo-category-${c.key}`);
      for (const course of c.courses) {
        const external_id = courseKey(course);
        const row = await ctx.services.courses.createCourse(ctx.db, ctx.organisationId, { fullname: course.fullname, shortname: course.shortname, category_id, external_id });
        made.set(external_id, row.id);
      }
    }
    return made;
  },
};

const sections: SeedStep = {
  collection: 'sections',
  async run(ctx) {
    const made = new Map<string, string>();
    for (const course of catalog.flatMap((c) => c.courses)) {
      const course_id = createdId(ctx, 'courses', courseKey(course));
      for (const [i, title] of course.sections.entries()) {
        const external_id = `${courseKey(course)}-section-${i + 1}`;
        const summary = { format: 'markdown' as const, content: `## ${title}\n\nWeek ${i + 1} of *${course.fullname}*.` };
        // The last section of each course starts hidden, so visibility changes can be tried on real data.
        const visible = i < course.sections.length - 1;
        made.set(external_id, (await ctx.services.sections.create(ctx.db, ctx.organisationId, { course_id, title, summary, visible, external_id })).id);
      }
    }
    return made;
  },
};

interface DemoActivity {
  external_id: string;
  course: string;
  /** Index of the course section it sits in. */
  section: number;
  type: 'wiki' | 'lesson';
  name: string;
  settings?: { mode?: 'collaborative' | 'individual' | 'group' };
}

// Activities of every type, in one step so that later steps find each by external id. A new activity type
// adds its demo activities to this list.
const demoActivities: DemoActivity[] = [
  { external_id: 'demo-activity-bio101-glossary', course: 'BIO101', section: 0, type: 'wiki', name: 'Biology glossary', settings: { mode: 'collaborative' } },
  { external_id: 'demo-activity-hist201-notebook', course: 'HIST201', section: 0, type: 'wiki', name: 'Reading notebook', settings: { mode: 'individual' } },
  { external_id: 'demo-activity-bio101-photosynthesis', course: 'BIO101', section: 0, type: 'lesson', name: 'Photosynthesis: a short lesson' },
];

const activities: SeedStep = {
  collection: 'activities',
  async run(ctx) {
    const made = new Map<string, string>();
    for (const a of demoActivities) {
      const course = catalog.flatMap((c) => c.courses).find((c) => c.shortname === a.course)!;
      const course_id = createdId(ctx, 'courses', courseKey(course));
      const section_id = createdId(ctx, 'sections', `${courseKey(course)}-section-${a.section + 1}`);
      const row = await ctx.services.activities.create(ctx.db, ctx.organisationId, { course_id, section_id, type: a.type, name: a.name, settings: a.settings, external_id: a.external_id });
      made.set(a.external_id, row.id);
    }
    return made;
  },
};

const md = (content: string) => ({ format: 'markdown' as const, content });

/** Each page is created from its first version and edited into the others; `restore` then brings one back. */
const demoWikiPages: { external_id: string; activity: string; versions: { title: string; body: unknown }[]; restore?: number }[] = [
  {
    external_id: 'demo-wiki-bio101-cell',
    activity: 'demo-activity-bio101-glossary',
    versions: [
      { title: 'Cell', body: md('The smallest unit of life.') },
      { title: 'Cell', body: md('The smallest unit of life. Every cell has a membrane, cytoplasm and DNA.') },
      { title: 'Cell (biology)', body: md('The smallest unit of life. Every cell has a membrane, cytoplasm and DNA.\n\nSee also [[Mitosis]].') },
    ],
  },
  {
    external_id: 'demo-wiki-bio101-mitosis',
    activity: 'demo-activity-bio101-glossary',
    versions: [
      { title: 'Mitosis', body: md('One cell divides into two identical daughter cells.') },
      { title: 'Mitosis', body: md('Cells just split, that is all.') },
    ],
    // The second edit lost the detail: version 1 is brought back as version 3.
    restore: 1,
  },
  {
    external_id: 'demo-wiki-bio101-photosynthesis',
    activity: 'demo-activity-bio101-glossary',
    versions: [
      { title: 'Photosynthesis', body: md('Plants turn light into chemical energy.') },
      { title: 'Photosynthesis', body: md('Plants, algae and some bacteria turn light, water and carbon dioxide into glucose and oxygen.') },
    ],
  },
  {
    external_id: 'demo-wiki-hist201-notebook-week1',
    activity: 'demo-activity-hist201-notebook',
    versions: [
      { title: 'Week 1 reading', body: md('- 1789: the Estates-General meets') },
      { title: 'Week 1 reading', body: md('- 1789: the Estates-General meets\n- 1789: the storming of the Bastille') },
    ],
  },
];

const wikiPages: SeedStep = {
  collection: 'wiki_pages',
  async run(ctx) {
    // Versions record who made them; the demo's are the organisation's first person's (its administrator).
    const author = await peopleRepository.earliest(ctx.db, ctx.organisationId);
    if (!author) throw new CommandError('the demo wiki pages need an author: create a person first (atrium person create)');
    const made = new Map<string, string>();
    for (const p of demoWikiPages) {
      const [first, ...edits] = p.versions;
      const activity_id = createdId(ctx, 'activities', p.activity);
      const page = await ctx.services.wikiPages.create(ctx.db, ctx.organisationId, author.id, { activity_id, ...first, external_id: p.external_id });
      for (const edit of edits) await ctx.services.wikiPages.update(ctx.db, ctx.organisationId, author.id, page.id, edit);
      if (p.restore !== undefined) await ctx.services.wikiPages.restore(ctx.db, ctx.organisationId, author.id, page.id, p.restore);
      made.set(p.external_id, page.id);
    }
    return made;
  },
};

interface DemoWording {
  subject: string;
  preheader?: string;
  variable_refs: string[];
  text_part?: string;
  body?: string;
}

/** A template's history: each of `published` is published in turn (all but the last end archived); `draft` then stays a draft. */
interface DemoTemplateHistory {
  message_key: string;
  language: string;
  published: DemoWording[];
  draft?: DemoWording;
}

const blocks = (...paragraphs: string[]) => JSON.stringify({ type: 'blocks', blocks: paragraphs.map((text) => ({ type: 'paragraph', text })) });

/** Writes and publishes a history through either level's service; records each version made under `key/vN`. */
async function seedHistory(made: Map<string, string>, key: string, history: DemoTemplateHistory, level: { write(w: DemoWording): Promise<{ version: { id: string; version: number } }>; publish(): Promise<unknown> }) {
  for (const wording of [...history.published, ...(history.draft ? [history.draft] : [])]) {
    const { version } = await level.write(wording);
    made.set(`${key}/v${version.version}`, version.id);
    if (wording !== history.draft) await level.publish();
  }
}

// Organisation templates at every scope level, so that restore and publish can be tried at once.
const demoEmailTemplates: (DemoTemplateHistory & { scope?: { level: 'category' | 'course' | 'activity'; collection: string; external_id: string } })[] = [
  {
    message_key: 'enrolment_welcome',
    language: 'en',
    published: [
      { subject: 'Welcome to {{course.fullname}}', variable_refs: ['course.fullname'], body: blocks('Welcome to {{course.fullname}}.') },
      { subject: 'Welcome to {{course.fullname}}, {{user.firstname}}', preheader: 'Your course is ready', variable_refs: ['course.fullname', 'user.firstname', 'course.url'], text_part: 'Start here: {{course.url}}', body: blocks('Hello {{user.firstname}}, welcome to {{course.fullname}}.', 'Start here: {{course.url}}') },
    ],
    draft: { subject: 'You are in: {{course.fullname}}', variable_refs: ['course.fullname'], body: blocks('You are enrolled in {{course.fullname}}.') },
  },
  {
    message_key: 'enrolment_welcome',
    language: 'en',
    scope: { level: 'course', collection: 'courses', external_id: 'demo-course-bio101' },
    published: [
      { subject: 'Welcome to the lab, {{user.firstname}}', variable_refs: ['user.firstname'], body: blocks('Bring a lab coat to the first session.') },
      { subject: 'Welcome to Biology, {{user.firstname}}', variable_refs: ['user.firstname'], body: blocks('Bring a lab coat and safety glasses to the first session.') },
    ],
  },
  {
    message_key: 'assignment_due_reminder',
    language: 'en',
    scope: { level: 'category', collection: 'categories', external_id: 'demo-category-sciences' },
    published: [{ subject: 'Lab report due {{assignment.due_date}}', variable_refs: ['assignment.due_date', 'assignment.name'], text_part: '{{assignment.name}} is due {{assignment.due_date}}.' }],
    draft: { subject: 'Reminder: {{assignment.name}}', variable_refs: ['assignment.name'] },
  },
  {
    message_key: 'wiki_page_changed',
    language: 'en',
    scope: { level: 'activity', collection: 'activities', external_id: 'demo-activity-bio101-glossary' },
    published: [
      { subject: 'Glossary: {{page.title}} changed', variable_refs: ['page.title'] },
      { subject: '{{page.editor}} improved "{{page.title}}" in the biology glossary', variable_refs: ['page.editor', 'page.title', 'page.url'], text_part: 'Read it: {{page.url}}' },
    ],
  },
  {
    message_key: 'password_reset',
    language: 'fr',
    published: [
      { subject: 'Réinitialisation du mot de passe', variable_refs: ['reset.url'], text_part: 'Choisissez un nouveau mot de passe : {{reset.url}}' },
      { subject: 'Choisissez un nouveau mot de passe', preheader: 'Ce lien expire bientôt', variable_refs: ['reset.url', 'reset.expires_in_minutes'], text_part: 'Lien valable {{reset.expires_in_minutes}} minutes : {{reset.url}}' },
    ],
  },
];

const emailTemplateVersions: SeedStep = {
  collection: 'email_template_versions',
  async run(ctx) {
    const made = new Map<string, string>();
    const service = ctx.services.emailTemplates;
    for (const tpl of demoEmailTemplates) {
      const query = tpl.scope ? { language: tpl.language, level: tpl.scope.level, scope_id: createdId(ctx, tpl.scope.collection, tpl.scope.external_id) } : { language: tpl.language };
      await seedHistory(made, `${tpl.message_key}/${tpl.scope?.external_id ?? 'tenant'}/${tpl.language}`, tpl, {
        write: (w) => service.saveDraft(ctx.db, ctx.organisationId, tpl.message_key, query, w),
        publish: () => service.publish(ctx.db, ctx.organisationId, tpl.message_key, query),
      });
    }
    return made;
  },
};

// The deployment's platform templates belong to no organisation: seeded only where the deployment has none yet
// for that message and language, so seeding a second organisation adds nothing to them.
const demoPlatformTemplates: DemoTemplateHistory[] = [
  {
    message_key: 'password_reset',
    language: 'en',
    published: [
      { subject: 'Reset your password', variable_refs: ['reset.url'], body: blocks('Choose a new password: {{reset.url}}') },
      { subject: 'Reset your {{site.name}} password', preheader: 'This link expires soon', variable_refs: ['reset.url', 'site.name', 'reset.expires_in_minutes'], body: blocks('Choose a new password within {{reset.expires_in_minutes}} minutes: {{reset.url}}') },
    ],
  },
  {
    message_key: 'enrolment_welcome',
    language: 'en',
    published: [{ subject: 'Welcome to {{course.fullname}}', variable_refs: ['course.fullname', 'site.name'], body: blocks('Welcome to {{course.fullname}} on {{site.name}}.') }],
  },
];

const platformEmailTemplateVersions: SeedStep = {
  collection: 'platform_email_template_versions',
  async run(ctx) {
    const made = new Map<string, string>();
    const service = ctx.services.platformEmailTemplates;
    for (const tpl of demoPlatformTemplates) {
      if ((await service.view(ctx.db, tpl.message_key, tpl.language)).template_id !== null) continue;
      await seedHistory(made, `${tpl.message_key}/${tpl.language}`, tpl, {
        write: (w) => service.saveDraft(ctx.db, ctx.organisationId, tpl.message_key, tpl.language, w),
        publish: () => service.publish(ctx.db, ctx.organisationId, tpl.message_key, tpl.language),
      });
    }
    return made;
  },
};

type DemoLessonPage = Omit<Parameters<Services['lessonPages']['create']>[2], 'lesson_id' | 'external_id'> & { key: string };

// A lesson with a branch (a content page whose buttons lead into it or skip it), an end of branch, and a
// question of every kind, so that page types, answers and jumps can be tried at once. `jump:<key>` jumps to
// another demo page, which the step fills in once that page exists.
const demoLessonPages: DemoLessonPage[] = [
  {
    key: 'start',
    title: 'What is photosynthesis?',
    page_type: 'content',
    contents: md('Plants make their own food from light, water and carbon dioxide. Read on, or test yourself straight away.'),
    answers: [{ text: 'Tell me more', jump_to: 'next_page' }, { text: 'Straight to the questions', jump_to: 'jump:gas' }],
  },
  { key: 'light', title: 'Light and chlorophyll', page_type: 'content', contents: md('Chlorophyll in the chloroplasts absorbs red and blue light.'), answers: [{ text: 'Continue', jump_to: 'next_page' }] },
  { key: 'branch-end', title: 'End of the reading', page_type: 'end_of_branch', answers: [{ text: '', jump_to: 'next_page' }] },
  {
    key: 'gas',
    title: 'Which gas do plants take in?',
    page_type: 'multichoice',
    contents: md('During photosynthesis, plants take in …'),
    answers: [
      { text: 'Carbon dioxide', response: 'Right.', score: 1, jump_to: 'next_page' },
      { text: 'Oxygen', response: 'Oxygen is what they give off.', score: 0, jump_to: 'this_page' },
    ],
  },
  { key: 'oxygen', title: 'Plants give off oxygen', page_type: 'truefalse', contents: md('True or false: photosynthesis releases oxygen.'), answers: [{ text: 'True', score: 1 }, { text: 'False', jump_to: 'this_page' }] },
  { key: 'temperature', title: 'Best temperature', page_type: 'numerical', contents: md('Around which temperature (°C) do most plants photosynthesise best?'), answers: [{ text: '20:30', response: 'Between 20 and 30 °C.', score: 1 }] },
  {
    key: 'parts',
    title: 'Parts of the leaf',
    page_type: 'matching',
    contents: md('Match each part with its job.'),
    answers: [{ text: 'Chloroplast', response: 'Captures light', score: 1 }, { text: 'Stoma', response: 'Lets gases in and out', score: 1 }],
  },
  { key: 'essay', title: 'In your own words', page_type: 'essay', contents: md('Explain why a plant kept in the dark dies.'), answers: [{ text: '', score: 2, jump_to: 'end_of_lesson' }] },
];

const lessonPages: SeedStep = {
  collection: 'lesson_pages',
  async run(ctx) {
    const made = new Map<string, string>();
    const lesson_id = createdId(ctx, 'activities', 'demo-activity-bio101-photosynthesis');
    const externalId = (key: string) => `demo-lesson-bio101-photosynthesis-${key}`;
    const withoutJumps = (answers: DemoLessonPage['answers']) => answers?.map((a) => (a.jump_to?.startsWith('jump:') ? { ...a, jump_to: 'next_page' } : a));
    for (const { key, ...page } of demoLessonPages) {
      const created = await ctx.services.lessonPages.create(ctx.db, ctx.organisationId, { ...page, answers: withoutJumps(page.answers), lesson_id, external_id: externalId(key) });
      made.set(externalId(key), created.id);
    }
    // Jumps to other pages, now that they exist.
    for (const { key, answers } of demoLessonPages.filter((p) => p.answers?.some((a) => a.jump_to?.startsWith('jump:')))) {
      const resolved = answers!.map((a) => (a.jump_to?.startsWith('jump:') ? { ...a, jump_to: made.get(externalId(a.jump_to.slice(5)))! } : a));
      await ctx.services.lessonPages.update(ctx.db, ctx.organisationId, { id: made.get(externalId(key))! }, { answers: resolved });
    }
    return made;
  },
};

// A draft to the administrator, and a message to BIO101's students scheduled a week after the seed runs (so the
// running worker does not send it at once): scheduling, unscheduling and the recipients preview can be tried.
const emailMessages: SeedStep = {
  collection: 'email_messages',
  async run(ctx) {
    const author = await peopleRepository.earliest(ctx.db, ctx.organisationId);
    if (!author) throw new CommandError('the demo email messages need an author: create a person first (atrium person create)');
    const made = new Map<string, string>();
    const service = ctx.services.emailMessages;
    const draft = await service.create(ctx.db, ctx.organisationId, author.id, {
      external_id: 'demo-email-welcome-term',
      subject: 'Welcome to the new term',
      body: { format: 'markdown', content: 'Hello,\n\nThe new term starts on **Monday**. Your courses are open: have a look around.' },
      audience: { type: 'people', person_ids: [author.id] },
    });
    made.set('demo-email-welcome-term', draft.id);
    // A week after the service's own "now" (its clock stamped the draft), whatever clock it runs on.
    const nextWeek = new Date(Date.parse(draft.created_at) + 7 * 24 * 3_600_000).toISOString();
    const scheduled = await service.create(ctx.db, ctx.organisationId, author.id, {
      external_id: 'demo-email-bio101-lab-safety',
      subject: 'BIO101: bring your lab coat on Thursday',
      body: { format: 'html', content: '<p>Our first lab session is on <strong>Thursday</strong>. Bring a lab coat and safety glasses.</p>' },
      audience: { type: 'course', course_id: createdId(ctx, 'courses', 'demo-course-bio101'), roles: ['student'] },
      status: 'scheduled',
      send_at: nextWeek,
    });
    made.set('demo-email-bio101-lab-safety', scheduled.id);
    return made;
  },
};

// A manual and a self-enrolment method on every demo course, with the organisation's first person enrolled
// in BIO101 (so the scheduled course message has a recipient and deleting the method shows its 409).
const enrolmentMethods: SeedStep = {
  collection: 'enrolment_methods',
  async run(ctx) {
    const made = new Map<string, string>();
    const first = await peopleRepository.earliest(ctx.db, ctx.organisationId);
    for (const course of catalog.flatMap((c) => c.courses)) {
      const course_id = createdId(ctx, 'courses', `demo-course-${course.shortname.toLowerCase()}`);
      const slug = course.shortname.toLowerCase();
      const manual = await ctx.services.enrolmentMethods.create(ctx.db, ctx.organisationId, { course_id, type: 'manual', external_id: `demo-enrol-${slug}-manual` });
      const self = await ctx.services.enrolmentMethods.create(ctx.db, ctx.organisationId, {
        course_id,
        type: 'self',
        name: 'Self enrolment with a key',
        settings: { enrolment_key: `${slug}-2027` },
        external_id: `demo-enrol-${slug}-self`,
      });
      made.set(`demo-enrol-${slug}-manual`, manual.id);
      made.set(`demo-enrol-${slug}-self`, self.id);
      if (first && course.shortname === 'BIO101') await ctx.services.enrolmentMethods.enrol(ctx.db, ctx.organisationId, manual.id, first.id);
    }
    return made;
  },
};

// Files on two targets: one on the deployment storage, one on an organisation directory target; then the
// deployment storage is the default again (operation 5), and both files still read from where they went.
const files: SeedStep = {
  collection: 'files',
  async run(ctx) {
    const author = await peopleRepository.earliest(ctx.db, ctx.organisationId);
    if (!author) throw new CommandError('the demo files need an uploader: create a person first (atrium person create)');
    const storage = ctx.services.storage;
    const text = (content: string) => Buffer.from(content).toString('base64');
    const made = new Map<string, string>();
    const syllabus = await storage.upload(ctx.db, ctx.organisationId, author.id, { filename: 'bio101-syllabus.txt', content_type: 'text/plain', content_base64: text('BIO101 syllabus: cells, genetics, evolution, ecology.') });
    made.set('demo-file-bio101-syllabus', syllabus.id);
    const archive = await storage.createTarget(ctx.db, ctx.organisationId, { name: 'Demo archive', directory: `demo-${ctx.organisationId}` });
    await storage.makeDefault(ctx.db, ctx.organisationId, archive.id);
    const reading = await storage.upload(ctx.db, ctx.organisationId, author.id, { filename: 'hist201-reading-list.md', content_type: 'text/markdown', content_base64: text('# Reading list\n\n- Hobsbawm, *The Age of Revolution*') });
    made.set('demo-file-hist201-reading-list', reading.id);
    await storage.restoreDeployment(ctx.db, ctx.organisationId);
    return made;
  },
};

export const demoSteps: readonly SeedStep[] = [
  categories,
  courses,
  sections,
  activities,
  wikiPages,
  emailTemplateVersions,
  platformEmailTemplateVersions,
  lessonPages,
  enrolmentMethods,
  emailMessages,
  files,
];
