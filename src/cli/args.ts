// Option parsing for one command, over node:util parseArgs. Every malformed invocation becomes a
// UsageError here, so commands only ever see values of the right shape.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from './errors.ts';

/** Options every command accepts. */
export const commonOptions = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsOptionsConfig;

type Value = string | boolean | Array<string | boolean> | undefined;

export interface Args {
  flag(name: string): boolean;
  string(name: string): string | undefined;
  required(name: string): string;
  /** A comma-separated list (`--roles a,b`), blanks dropped. */
  list(name: string): string[] | undefined;
  requiredList(name: string): string[];
  /** An option that may be given several times (`--redirect-uri a --redirect-uri b`). */
  many(name: string): string[];
  choice<T extends string>(name: string, allowed: readonly T[]): T | undefined;
}

export function parseCommandArgs(argv: string[], options: ParseArgsOptionsConfig): Args {
  let values: Record<string, Value>;
  try {
    ({ values } = parseArgs({ args: argv, options: { ...options, ...commonOptions }, strict: true, allowPositionals: false }));
  } catch (err) {
    // parseArgs reports bad input as TypeErrors with ERR_PARSE_ARGS_* codes; anything else is our own bug.
    const code = (err as { code?: string }).code;
    if (!code?.startsWith('ERR_PARSE_ARGS_')) throw err;
    const message = (err as Error).message;
    // The option it is about is only in the message: "Unknown option '--colour'", "Option '--org <value>' argument missing".
    const name = /^(?:Unknown option|Option) '(?:-\w, )?--?([^\s']+)/.exec(message)?.[1];
    const what = code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? 'unknown_option' : /argument missing/.test(message) ? 'required' : 'invalid_value';
    throw new UsageError(message, name === undefined ? undefined : { name, code: what });
  }

  const string = (name: string): string | undefined => {
    const v = values[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new Error(`option --${name} is not declared as a string`);
    if (v.trim() === '') throw new UsageError(`--${name} must not be empty`, { name, code: 'too_short' });
    return v;
  };

  const missing = (name: string) => new UsageError(`missing required option --${name}`, { name, code: 'required' });

  const list = (name: string): string[] | undefined => {
    const v = string(name);
    if (v === undefined) return undefined;
    const items = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
    if (items.length === 0) throw new UsageError(`--${name} needs at least one value`, { name, code: 'too_few_items' });
    return items;
  };

  return {
    flag: (name) => values[name] === true,
    string,
    required(name) {
      const v = string(name);
      if (v === undefined) throw missing(name);
      return v;
    },
    list,
    many(name) {
      const v = values[name];
      if (v === undefined) return [];
      if (!Array.isArray(v)) throw new Error(`option --${name} is not declared with multiple: true`);
      for (const item of v) if (typeof item !== 'string' || item.trim() === '') throw new UsageError(`--${name} must not be empty`, { name, code: 'too_short' });
      return v as string[];
    },
    requiredList(name) {
      const v = list(name);
      if (v === undefined) throw missing(name);
      return v;
    },
    choice<T extends string>(name: string, allowed: readonly T[]): T | undefined {
      const v = string(name);
      if (v === undefined) return undefined;
      if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(v)}`, { name, code: 'invalid_value' });
      return v as T;
    },
  };
}
