// Template languages are BCP 47 tags (spec: operation 1 — 1 to 35 characters,
// `^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$`). Tags are case-insensitive (RFC 5646 2.1.1), so `EN-gb` and `en-GB`
// name one template: we store and answer the conventional case (language lower, script title, region upper).
import Type from 'typebox';
import { ApiError } from '../../errors/api-error.ts';

export const LANGUAGE_PATTERN = '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$';
export const LANGUAGE_MAX_LENGTH = 35;
const languageRegex = new RegExp(LANGUAGE_PATTERN);

export const LanguageTag = Type.String({
  minLength: 1,
  maxLength: LANGUAGE_MAX_LENGTH,
  pattern: LANGUAGE_PATTERN,
  description: 'BCP 47 language tag, 1 to 35 characters (e.g. `en`, `en-GB`, `pt-BR`); case-insensitive, answered in conventional case.',
});

export function canonicalLanguage(tag: string): string {
  return tag
    .split('-')
    .map((subtag, i) => {
      if (i === 0) return subtag.toLowerCase();
      if (subtag.length === 2 && /^[A-Za-z]+$/.test(subtag)) return subtag.toUpperCase();
      if (subtag.length === 4 && /^[A-Za-z]+$/.test(subtag)) return subtag[0].toUpperCase() + subtag.slice(1).toLowerCase();
      return subtag.toLowerCase();
    })
    .join('-');
}

/**
 * For a tag that arrives as a path parameter: the path schema accepts any string so that a malformed tag is a
 * 422 naming the parameter (invalid content) rather than the 404 a path value failing its schema becomes.
 */
export function languageFromPath(value: string): string {
  if (value.length < 1 || value.length > LANGUAGE_MAX_LENGTH || !languageRegex.test(value)) {
    throw new ApiError(
      'validation.invalid_parameter',
      `Path parameter \`language\` must be a BCP 47 language tag of 1 to ${LANGUAGE_MAX_LENGTH} characters matching ${LANGUAGE_PATTERN}.`,
    );
  }
  return canonicalLanguage(value);
}
