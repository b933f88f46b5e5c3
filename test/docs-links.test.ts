// The project explains itself from its own tree (docs/README.md): every relative link in the README, docs/,
// bench/README.md and the folder READMEs leads to a file that exists, and its `#anchor` to a heading there
// (GitHub's slugs); and no tracked file cites a document a clone does not contain (the design notes and the
// product specification the project was built from live outside the repository).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..');
const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);

/** The documents whose links must hold: the README, docs/, the benchmarks' README and every folder README. */
const documents = tracked.filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')) || path.basename(f) === 'README.md');

/** Lines outside fenced code blocks, with inline code spans blanked (a link or heading in code is neither). */
function proseLines(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!fence || marker.startsWith(fence))) {
      fence = fence ? undefined : marker;
      lines.push('');
      continue;
    }
    lines.push(fence ? '' : line.replace(/(`+)[\s\S]*?\1/g, (span) => ' '.repeat(span.length)));
  }
  return lines;
}

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, each space a hyphen. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a document offers, with GitHub's `-1`, `-2` for repeated headings. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const raw = markdown.split('\n');
  proseLines(markdown).forEach((line, i) => {
    if (!/^#{1,6}\s/.test(line)) return;
    const base = slug(raw[i].replace(/^#{1,6}\s+/, '').replace(/\s+#+\s*$/, ''));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  });
  return result;
}

/** The relative links of a document that do not resolve, as `target (line N)`. */
export function brokenLinks(file: string, markdown: string, read: (file: string) => string | undefined): string[] {
  const broken: string[] = [];
  proseLines(markdown).forEach((line, i) => {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not ours to check
      const [filePart, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = filePart ? path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(filePart))) : file;
      const where = `${target} (line ${i + 1})`;
      if (resolved.startsWith('..')) {
        broken.push(`${where}: leaves the repository`);
        continue;
      }
      const text = filePart ? read(resolved.replace(/\/$/, '')) : markdown;
      if (text === undefined) broken.push(`${where}: no such file`);
      else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(text).has(anchor)) broken.push(`${where}: no heading with that anchor`);
    }
  });
  return broken;
}

/** A file's text; '' for a directory; undefined when nothing is there. */
function readFromTree(file: string): string | undefined {
  const full = path.join(root, file);
  if (!fs.existsSync(full)) return undefined;
  return fs.statSync(full).isDirectory() ? '' : fs.readFileSync(full, 'utf8');
}

/** Tracked files that hold text (pictures left out), as they are in the working tree; not this file, which
 * names what it looks for. */
function textFiles(): string[] {
  const self = path.relative(root, import.meta.filename);
  return tracked.filter((file) => file !== self && fs.existsSync(path.join(root, file)) && !fs.readFileSync(path.join(root, file)).includes(0));
}

// Spelled in pieces, so that this file does not itself match a search for references outside the repository.
const shared = ['..', 'shared'].join('/');
const outside = [shared, `${'shared'}/design`, `${'shared'}/spec`, 'CONTRACT.md', 'learning-platform-api.md'];
const contractCitation = /\bCONTRACT\b/;

describe('documentation that travels with the code', () => {
  test('GitHub anchors are made as GitHub makes them', () => {
    assert.equal(slug('Command-line tool (`atrium`)'), 'command-line-tool-atrium');
    assert.equal(slug("Where a request's microseconds go, before and after (issue 13)"), 'where-a-requests-microseconds-go-before-and-after-issue-13');
    assert.equal(slug('Scale results (2026-11-23, `BENCH_SCENARIOS=scale BENCH_ROUNDS=3 npm run bench`)'), 'scale-results-2026-11-23-bench_scenariosscale-bench_rounds3-npm-run-bench');
    assert.equal(slug('Bulk (operations 8 and 9)'), 'bulk-operations-8-and-9');
  });

  test('a broken link, a missing anchor and a link out of the repository are each found', () => {
    const tree: Record<string, string> = { 'docs/a.md': '# A\n\n## Two words\n', 'docs/b.md': '' };
    const doc = [
      '[fine](a.md#two-words) [fine too](#local) [web](https://example.com/x.md#nothing)',
      '## Local',
      '[gone](missing.md) [no anchor](a.md#three-words) [out](../../elsewhere/x.md)',
      '```',
      '[in a code block](missing.md)',
      '```',
      'and `[in a code span](missing.md)`',
    ].join('\n');
    assert.deepEqual(brokenLinks('docs/b.md', doc, (f) => tree[f]), [
      'missing.md (line 3): no such file',
      'a.md#three-words (line 3): no heading with that anchor',
      '../../elsewhere/x.md (line 3): leaves the repository',
    ]);
  });

  test('every relative link in the README, docs/, bench/ and the folder READMEs resolves', () => {
    assert.ok(documents.includes('README.md') && documents.includes('docs/README.md') && documents.includes('bench/README.md'), documents.join(', '));
    const broken = documents.flatMap((file) => brokenLinks(file, fs.readFileSync(path.join(root, file), 'utf8'), readFromTree).map((b) => `${file}: ${b}`));
    assert.deepEqual(broken, []);
  });

  test('every `docs/….md#anchor` cited in code, comments and configuration names a heading that is there', () => {
    const broken: string[] = [];
    for (const file of textFiles()) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      for (const [citation, target, anchor] of text.matchAll(/(?<![\w/.-])(docs\/[\w/-]+\.md)(?:#([\w-]+))?/g)) {
        const cited = readFromTree(target);
        if (cited === undefined) broken.push(`${file}: ${citation}: no such file`);
        else if (anchor !== undefined && !anchors(cited).has(anchor)) broken.push(`${file}: ${citation}: no heading with that anchor`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test('no tracked file refers to a document outside the repository', () => {
    const offenders: string[] = [];
    for (const file of textFiles()) {
      if (file.startsWith('.ci/')) continue;
      fs.readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const hit = outside.find((needle) => line.includes(needle)) ?? (contractCitation.test(line) ? 'CONTRACT' : undefined);
          if (hit) offenders.push(`${file}:${i + 1}: ${hit}`);
        });
    }
    assert.deepEqual(offenders, [], 'cite the docs/ file instead (docs/README.md lists them)');
  });
});
