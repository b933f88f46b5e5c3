// Email messages: a draft and a scheduled course message.
import { createdId, demoAuthor, type SeedStep } from './steps.ts';

// A draft to the administrator, and a message to BIO101's students scheduled a week after the seed runs (so the
// running worker does not send it at once): scheduling, unscheduling and the recipients preview can be tried.
export const emailMessages: SeedStep = {
  collection: 'email_messages',
  async run(ctx) {
    const author = await demoAuthor(ctx, 'the demo email messages need an author');
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
