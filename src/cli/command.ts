// What a command is: its words, its options, and a run function that returns what to print. Printing,
// exit codes and closing the database are main.ts's job, so commands stay plain functions of their input.
import type { ParseArgsOptionsConfig } from 'node:util';
import type { Config } from '../config.ts';
import type { openRuntime } from '../runtime.ts';
import type { Args } from './args.ts';

export type Runtime = Awaited<ReturnType<typeof openRuntime>>;

export interface CommandContext {
  config: Config;
  /** Opens (and migrates) the database on first use; main.ts closes it when the command is done. */
  runtime(): Promise<Runtime>;
}

export interface CommandResult {
  /** Printed with --json. */
  json: unknown;
  /** Printed otherwise: one short line for a person. */
  text: string;
}

export interface Command {
  /** The words that select it: ['org', 'create']. */
  words: readonly string[];
  /** Options after the words, as shown in the usage: '--address HOST --name NAME [--plan standard|no-api]'. */
  synopsis: string;
  options: ParseArgsOptionsConfig;
  /**
   * The option behind each field a service may name in a refusal (`/redirect_uris/0` → `--redirect-uri`), where
   * it is not the field's name with dashes (`/service_version` → `--service-version`).
   */
  fieldOptions?: Readonly<Record<string, string>>;
  /** undefined: the command keeps running (serve) and owns its own shutdown. */
  run(args: Args, ctx: CommandContext): Promise<CommandResult | undefined>;
}
