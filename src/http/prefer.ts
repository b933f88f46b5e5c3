// RFC 7240 `Prefer` request header: only `return=minimal` is acted on (operations that declare a minimal answer,
// `Operation.minimal`). Written here rather than taken from a library: no maintained npm package parses it, and
// the one preference we read needs a small part of the grammar.
//
//   Prefer     = 1#preference                       (comma-separated; several header lines join with ", ")
//   preference = token [ BWS "=" BWS word ] *( OWS ";" [ OWS parameter ] )
//   word       = token / quoted-string
//
// What the RFC asks of a server: a preference it does not know, or cannot parse, is ignored (never an error);
// a preference given more than once counts only the first time (§2); tokens, and the ABNF literals
// "representation" / "minimal" of `return` (§4.2), are case-insensitive.

/** A preference's name, or its value when it is a token (`return=minimal`). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The value `return` is given first in the header, lower-cased; undefined when absent or malformed. */
function returnPreference(header: string): string | undefined {
  // Commas inside a quoted-string do not separate preferences; split outside quotes only.
  for (const preference of splitOutsideQuotes(header, ',')) {
    const [head] = splitOutsideQuotes(preference, ';');
    const eq = head.indexOf('=');
    const name = (eq === -1 ? head : head.slice(0, eq)).trim();
    if (name.toLowerCase() !== 'return') continue;
    // The first `return` decides, even if its value is one we do not know (then: ignored, as if absent).
    if (eq === -1) return undefined;
    let value = head.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    else if (!TOKEN.test(value)) return undefined;
    return value.toLowerCase();
  }
  return undefined;
}

function splitOutsideQuotes(text: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted && ch === '\\') i++;
    else if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** Whether the request's `Prefer` header (as Node gives it) asks for `return=minimal`. */
export function prefersMinimalReturn(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(', ') : header;
  return returnPreference(text) === 'minimal';
}

/** The `Preference-Applied` value of an answer shaped by `return=minimal`. */
export const MINIMAL_RETURN_APPLIED = 'return=minimal';
