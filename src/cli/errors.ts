// How a command fails. Every refusal is an ApiError carrying a code of the API's catalogue (src/errors/error-catalog.ts),
// so `--json` reports the same codes a script would meet over HTTP. The exit code follows the code: 2 when the
// invocation itself is wrong (`cli.usage`: the usage is shown so the caller can correct it, and nothing was
// opened), 1 when it was well formed but could not be done.
import { ConfigError } from '../config.ts';
import { describeDatabaseError, isDatabaseUnavailable } from '../db/availability.ts';
import { ApiError, type FieldError } from '../errors/api-error.ts';

export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export class UsageError extends ApiError {
  /** `option`: the option at fault (without its dashes) and what is wrong with it, in the API's field codes. */
  constructor(detail: string, option?: { name: string; code: string }) {
    super('cli.usage', detail, option && { errors: [{ path: `--${option.name}`, code: option.code, detail }] });
    this.name = 'UsageError';
  }
}

/** What `--json` prints for a failure: a problem document's fields that mean something outside HTTP. */
export interface CliProblem {
  code: string;
  title: string;
  detail: string;
  /** The options (or environment variables) at fault, for validation problems. */
  errors?: FieldError[];
}

export interface CliFailure {
  exit: number;
  problem: CliProblem;
  /** The sentence printed without --json (as it was before --json failures existed). */
  message: string;
}

/**
 * A failure as the caller sees it. `fieldOptions` maps the first segment of a service's JSON Pointer (`/roles`,
 * `/redirect_uris/1`) to the option that carried it, where the option is not simply that name with dashes.
 */
export function describeFailure(err: unknown, fieldOptions: Readonly<Record<string, string>> = {}): CliFailure {
  if (err instanceof ApiError) {
    const errors = err.errors?.map((e) => ({ ...e, path: optionOf(e.path, fieldOptions) }));
    // A body-shaped refusal (the service's own rules) is about an argument here: there is no body.
    const code = err.code === 'validation.invalid_body' ? 'cli.invalid_argument' : err.code;
    const title = code === err.code ? err.title : new ApiError(code).title;
    return { exit: code === 'cli.usage' ? EXIT_USAGE : EXIT_FAILED, problem: { code, title, detail: err.detail, ...(errors ? { errors } : {}) }, message: err.message };
  }
  if (err instanceof ConfigError) {
    const errors = err.problems.map((p) => {
      const [variable, ...rest] = p.split(': ');
      return { path: variable, code: 'invalid_value', detail: rest.join(': ') };
    });
    return failure(new ApiError('cli.invalid_configuration', err.message, { errors }));
  }
  const message = `unexpected error: ${describe(err)}`;
  // The database going away is worth telling apart from our own faults: a script may wait and try again.
  if (isDatabaseUnavailable(err)) return { ...failure(new ApiError('database.unavailable', `the database is not reachable: ${describeDatabaseError(err)}`)), message };
  // No stack: the reader is an operator or a script, not the person debugging us.
  return { ...failure(new ApiError('internal.error', message)), message };
}

const failure = (err: ApiError): CliFailure => describeFailure(err);

function optionOf(path: string, fieldOptions: Readonly<Record<string, string>>): string {
  if (!path.startsWith('/')) return path;
  const field = path.split('/')[1];
  return fieldOptions[field] ?? `--${field.replaceAll('_', '-')}`;
}

function describe(err: unknown): string {
  if (err instanceof AggregateError) return err.errors.map(describe).join('; ') || err.message;
  return err instanceof Error ? err.message || err.name : String(err);
}
