// Comparing a presented secret or signature with the one expected, as text and in constant time: the exact
// text we issued, never another spelling of the same bytes (base64url decoding skips stray characters and a
// signature's spare bits), and no timing that tells how much of it was right.
import { timingSafeEqual } from 'node:crypto';

export function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  // Unequal lengths say nothing secret: what we issue has a fixed length.
  return a.length === b.length && timingSafeEqual(a, b);
}
