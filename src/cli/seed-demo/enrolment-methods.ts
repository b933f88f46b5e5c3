// Enrolment methods on every demo course, and an enrolment.
import { peopleRepository } from '../../domain/people/people.repository.ts';
import { catalog } from './course-structure.ts';
import { createdId, type SeedStep } from './steps.ts';

// A manual and a self-enrolment method on every demo course, with the organisation's first person enrolled
// in BIO101 (so the scheduled course message has a recipient and deleting the method shows its 409).
export const enrolmentMethods: SeedStep = {
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
