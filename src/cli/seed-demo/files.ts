// Files on the deployment storage and on an organisation directory target.
import { demoAuthor, type SeedStep } from './steps.ts';

// Files on two targets: one on the deployment storage, one on an organisation directory target; then the
// deployment storage is the default again (operation 5), and both files still read from where they went.
export const files: SeedStep = {
  collection: 'files',
  async run(ctx) {
    const author = await demoAuthor(ctx, 'the demo files need an uploader');
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
