// Server-rendered pages (ARCHITECTURE: admin pages): eta templates through @fastify/view, escaping by default,
// one layout (views/layout.eta), and the stylesheet served as a file under /assets/ with a content hash in its
// URL so that browsers may keep it for a year. Registered on the root instance: the admin and sign-in pages,
// the consent page and the documentation pages all render through it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance } from 'fastify';

const viewsDir = path.join(import.meta.dirname, 'views');
const assetsDir = path.join(import.meta.dirname, 'assets');

/** `/assets/atrium.css?v=<hash of its content>`: a new deployment's stylesheet is a new URL. */
export const stylesheetUrl = `/assets/atrium.css?v=${createHash('sha256').update(fs.readFileSync(path.join(assetsDir, 'atrium.css'))).digest('hex').slice(0, 12)}`;

export async function registerViews(app: FastifyInstance): Promise<void> {
  const eta = new Eta({ views: viewsDir, autoEscape: true, cache: true, autoTrim: [false, 'nl'] });
  await app.register(fastifyView, { engine: { eta }, templates: viewsDir, production: true, defaultContext: { stylesheetUrl } });
  await app.register(fastifyStatic, {
    root: assetsDir,
    prefix: '/assets/',
    index: false,
    list: false,
    wildcard: false,
    maxAge: '365d',
    immutable: true,
  });
}
