// The documentation pages' static files: the API reference renderer (Scalar's standalone browser bundle, from
// our npm dependencies), our start-up script for it, and the stylesheet. Each is addressed by its content hash
// (the bundle by its package version), so it is cached for a year and a new release is a new URL. Three
// files read once need no static-file plugin; a hashed name would otherwise need a build step.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import type { FastifyInstance } from 'fastify';

export const ASSETS_PREFIX = '/docs/assets';

interface Asset {
  type: string;
  file: string;
  /** Read and compressed on first use: most processes (workers, tests) never serve them. */
  body?: Buffer;
  gzipped?: Buffer;
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** Scalar's `dist/browser/standalone.js` and the package's version, found through Node's own resolution. */
function scalarBundle(): { file: string; version: string } {
  const entry = fileURLToPath(import.meta.resolve('@scalar/api-reference'));
  const packageDir = path.resolve(path.dirname(entry), '..');
  const { version } = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  return { file: path.join(packageDir, 'dist', 'browser', 'standalone.js'), version };
}

const hashOf = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex').slice(0, 12);

function buildAssets() {
  const scalar = scalarBundle();
  const own = (name: string, ext: string, type: string) => {
    const file = path.join(here, 'public', `${name}.${ext}`);
    return { url: `${ASSETS_PREFIX}/${name}.${hashOf(file)}.${ext}`, asset: { type, file } };
  };
  const renderer = { url: `${ASSETS_PREFIX}/scalar-api-reference-${scalar.version}/standalone.js`, asset: { type: 'text/javascript; charset=utf-8', file: scalar.file } };
  const boot = own('reference', 'js', 'text/javascript; charset=utf-8');
  const stylesheet = own('docs', 'css', 'text/css; charset=utf-8');
  return { urls: { renderer: renderer.url, boot: boot.url, stylesheet: stylesheet.url }, byUrl: new Map<string, Asset>([renderer, boot, stylesheet].map((a) => [a.url, a.asset])) };
}

let assets: ReturnType<typeof buildAssets> | undefined;

/** The URLs pages link to. */
export function assetUrls() {
  assets ??= buildAssets();
  return assets.urls;
}

export function registerAssetRoutes(app: FastifyInstance): void {
  app.get(`${ASSETS_PREFIX}/*`, async (request, reply) => {
    assets ??= buildAssets();
    const asset = assets.byUrl.get(request.url.split('?')[0]);
    if (!asset) return reply.callNotFound();
    asset.body ??= fs.readFileSync(asset.file);
    reply.header('Cache-Control', 'public, max-age=31536000, immutable').header('Vary', 'Accept-Encoding').type(asset.type);
    if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      asset.gzipped ??= zlib.gzipSync(asset.body);
      return reply.header('Content-Encoding', 'gzip').send(asset.gzipped);
    }
    return reply.send(asset.body);
  });
}
