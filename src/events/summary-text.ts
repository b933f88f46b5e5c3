// How event summaries quote a name or a title: as a JSON string, cut to 77 characters and `...` past 80
// (characters, not UTF-16 units: never half a character). The same in SQL, for the events that a statement makes
// itself (db/final-statement.ts: a change and its event in one statement), so that both word them alike.
import { sql, type RawBuilder } from 'kysely';

const LONGEST = 80;
const CUT_TO = 77;

export function quotedForSummary(text: string): string {
  const characters = text.length > LONGEST ? [...text] : undefined;
  return JSON.stringify(characters && characters.length > LONGEST ? `${characters.slice(0, CUT_TO).join('')}...` : text);
}

/** PostgreSQL: quotedForSummary of a text expression. */
export function quotedForSummarySql(text: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`to_json(case when char_length(${text}) > ${sql.lit(LONGEST)} then left(${text}, ${sql.lit(CUT_TO)}) || '...' else ${text} end)::text`;
}

/** PostgreSQL: a timestamptz as summaries print it, the RFC 3339 UTC text with milliseconds JavaScript's toISOString writes. */
export function isoTimestampSql(at: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`to_char(${at} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
