// Categories, courses and their sections.
import { createdId, type SeedStep } from './steps.ts';

export interface DemoCourse {
  shortname: string;
  fullname: string;
  sections: string[];
}

export const catalog: { key: string; name: string; courses: DemoCourse[] }[] = [
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

export const courseKey = (c: DemoCourse) => `demo-course-${c.shortname.toLowerCase()}`;

export const categories: SeedStep = {
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

export const courses: SeedStep = {
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

export const sections: SeedStep = {
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
