// The demo content `atrium seed demo` creates, as an ordered list of steps. Each step fills one collection
// through the services (so the rows obey the same rules as API writes) and records what it made by
// external id, which later steps use to link to it. A new area adds its step at the end of `demoSteps`.
import { activities, wikiPages } from './seed-demo/activities.ts';
import { categories, courses, sections } from './seed-demo/course-structure.ts';
import { emailMessages } from './seed-demo/email-messages.ts';
import { emailTemplateVersions, platformEmailTemplateVersions } from './seed-demo/email-templates.ts';
import { enrolmentMethods } from './seed-demo/enrolment-methods.ts';
import { files } from './seed-demo/files.ts';
import { lessonPages } from './seed-demo/lesson-pages.ts';
import type { SeedStep } from './seed-demo/steps.ts';

export type { SeedContext, SeedStep } from './seed-demo/steps.ts';

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
