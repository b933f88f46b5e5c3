// Activities of every type, and wiki pages with several versions (one of them restored).
import { catalog, courseKey } from './course-structure.ts';
import { createdId, demoAuthor, md, type SeedStep } from './steps.ts';

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

export const activities: SeedStep = {
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

export const wikiPages: SeedStep = {
  collection: 'wiki_pages',
  async run(ctx) {
    // Versions record who made them; the demo's are the organisation's first person's (its administrator).
    const author = await demoAuthor(ctx, 'the demo wiki pages need an author');
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
