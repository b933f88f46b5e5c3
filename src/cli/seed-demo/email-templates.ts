// Email templates with published, archived and draft versions: organisation ones at every scope level, and the
// deployment's platform templates where it has none yet.
import { createdId, type SeedStep } from './steps.ts';

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

export const emailTemplateVersions: SeedStep = {
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

export const platformEmailTemplateVersions: SeedStep = {
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
