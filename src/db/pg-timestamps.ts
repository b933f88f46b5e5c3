// PostgreSQL's text for a timestamptz, as the RFC 3339 UTC string both engines hand above src/db
// (postgres-database.ts). A session whose TimeZone is UTC (the server's default where its system clock is UTC,
// as on our machines and in most containers) writes `YYYY-MM-DD HH:MM:SS[.f…]+00`: that is rearranged as it is, in about a tenth of the time of
// `new Date(text).toISOString()` (0.06 µs against 0.64, bench/README.md). Every row read pays it once per
// timestamp column: two for most resources, a hundred for a list page of fifty.
//
// Another offset (`+01`, `-05:30`) is given to Date in ISO form (`T`, `±HH:MM`). Given PostgreSQL's own form,
// V8 falls back to its legacy parser, which reads the years 1 to 99 as 1950 to 2049: a timestamp of the year 1
// came back as 2001 (the test holds both). Anything else (a year past 9999, BC, infinity, an offset with seconds,
// another DateStyle) goes through Date as it is, as every value did before.

const SPACE = 32;
const PLUS = 43;
const ZERO = 48;
const DOT = 46;
/** `YYYY-MM-DD HH:MM:SS+00`. */
const WHOLE_SECONDS = 22;
/** `YYYY-MM-DD HH:MM:SS.ffffff+00`: microseconds, PostgreSQL's finest. */
const MICROSECONDS = 29;

/** `YYYY-MM-DD HH:MM:SS[.f…]±HH[:MM]`: the date, the time, the offset's hours and minutes. */
const OTHER_OFFSET = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)([+-]\d{2})(?::(\d{2}))?$/;

export function timestamptzToIso(text: string): string {
  const n = text.length;
  if (n >= WHOLE_SECONDS && n <= MICROSECONDS && text.charCodeAt(10) === SPACE && text.charCodeAt(n - 3) === PLUS && text.charCodeAt(n - 2) === ZERO && text.charCodeAt(n - 1) === ZERO) {
    const dateAndTime = `${text.slice(0, 10)}T${text.slice(11, 19)}`;
    if (n === WHOLE_SECONDS) return `${dateAndTime}.000Z`;
    // A fraction: one to six digits (PostgreSQL drops trailing zeros); milliseconds are its first three, cut, not
    // rounded, as Date does.
    if (n > WHOLE_SECONDS + 1 && text.charCodeAt(19) === DOT) return `${dateAndTime}.${(text.slice(20, n - 3) + '00').slice(0, 3)}Z`;
  }
  const offset = OTHER_OFFSET.exec(text);
  if (offset !== null) return new Date(`${offset[1]}T${offset[2]}${offset[3]}:${offset[4] ?? '00'}`).toISOString();
  return new Date(text).toISOString();
}
