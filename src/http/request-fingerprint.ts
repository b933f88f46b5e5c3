// The Idempotency-Key fingerprint of a request: SHA-256 over method, URL and the body's JSON text, exactly
// JSON.stringify's (so fingerprints recorded before stay comparable). JSON.stringify recurses once per level of
// nesting and throws a RangeError on a body nested deeply enough, which must never turn a request into a 500:
// then the same text is written into the hash piece by piece with an explicit stack.
// A request that asked for `Prefer: return=minimal` (prefer.ts) gets an answer of another shape, so its
// fingerprint hashes that preference too (a line between the URL and the body that no body's JSON text can
// start with); without it, the text hashed is exactly what it was before the header was read at all, so
// records stored by earlier versions still compare equal.
import { createHash, type Hash } from 'node:crypto';

type Step = { text: string } | { value: unknown };

/** Whether JSON.stringify keeps an object member with this value (it drops undefined, functions, symbols). */
const kept = (v: unknown) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';

function writeJson(hash: Hash, root: unknown): void {
  const stack: Step[] = [{ value: root }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    if ('text' in step) {
      hash.update(step.text);
      continue;
    }
    let v = step.value;
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON(): unknown }).toJSON();
    if (v === null || typeof v !== 'object') {
      // Primitives: JSON.stringify of one value does not recurse. In an array, what it would drop is null.
      hash.update(kept(v) ? (JSON.stringify(v) ?? 'null') : 'null');
      continue;
    }
    if (Array.isArray(v)) {
      stack.push({ text: ']' });
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] });
        if (i > 0) stack.push({ text: ',' });
      }
      stack.push({ text: '[' });
      continue;
    }
    const entries = Object.entries(v).filter(([, inner]) => kept(inner));
    stack.push({ text: '}' });
    for (let i = entries.length - 1; i >= 0; i--) {
      stack.push({ value: entries[i][1] });
      stack.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(entries[i][0])}:` });
    }
    stack.push({ text: '{' });
  }
}

export function requestFingerprint(method: string, url: string, body: unknown, options?: { returnMinimal?: boolean }): string {
  const hash = createHash('sha256').update(`${method} ${url}\n`);
  if (options?.returnMinimal) hash.update('Prefer: return=minimal\n');
  if (body === undefined) return hash.digest('hex');
  // JSON.stringify is five times faster; a body read by body-parser.ts nests at most 64 levels and never
  // makes it throw, but whatever else reaches here, the explicit stack takes over.
  let text: string | undefined;
  try {
    text = JSON.stringify(body);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
  }
  if (text !== undefined) hash.update(text);
  else writeJson(hash, body);
  return hash.digest('hex');
}
