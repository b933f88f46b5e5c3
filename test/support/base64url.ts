// Other texts of one base64url value. Decoding keeps only whole bytes, so the last character of a value whose
// length is not a multiple of 3 carries spare bits; a signature checked on its decoded bytes would accept them.
import assert from 'node:assert/strict';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const flipLowestBit = (ch: string) => ALPHABET[ALPHABET.indexOf(ch) ^ 1];

/** The text with its last character's lowest (spare) bit flipped: another text that decodes to the same bytes. */
export function spareBitsVariant(text: string): string {
  const other = text.slice(0, -1) + flipLowestBit(text.at(-1)!);
  assert.ok(Buffer.from(other, 'base64url').equals(Buffer.from(text, 'base64url')), `${text} has no spare bits in its last character`);
  return other;
}

/** The text with a bit of its next-to-last character flipped: different bytes. */
export const changedBitVariant = (text: string): string => text.slice(0, -2) + flipLowestBit(text.at(-2)!) + text.at(-1);
