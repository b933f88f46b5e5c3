// A lesson's pages: a branch, an end of branch and a question of every kind.
import type { Services } from '../../services.ts';
import { createdId, md, type SeedStep } from './steps.ts';

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

export const lessonPages: SeedStep = {
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
