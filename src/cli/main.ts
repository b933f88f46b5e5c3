// Entry of the `atrium` command (bin/atrium.js imports this file; `npm run atrium` runs it directly), so it
// runs on import. Exit codes: 0 done, 1 the request could not be done, 2 the invocation was wrong.
// Messages go to stderr without stack traces: the reader is an operator, not the person debugging us.
import { InvalidApiKeyRequest } from '../auth/api-keys.service.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { InvalidPersonRequest } from '../domain/people/people.service.ts';
import { ApiError } from '../errors/api-error.ts';
import { openRuntime } from '../runtime.ts';
import { parseCommandArgs } from './args.ts';
import type { CommandContext, CommandResult, Runtime } from './command.ts';
import { commandsOfGroup, findCommand, usage, usageLine } from './commands.ts';
import { CommandError, UsageError } from './errors.ts';

const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** Errors whose message is meant for the operator as it is. */
const expected = [CommandError, ConfigError, InvalidApiKeyRequest, InvalidPersonRequest, ApiError];

function fail(code: number, message: string, usageText = ''): number {
  process.stderr.write(`atrium: ${message}\n${usageText}`);
  return code;
}

function print(result: CommandResult, json: boolean): void {
  process.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
}

/** Runs one invocation; the exit code, or undefined when the command goes on running (serve). */
export async function runCli(argv: string[]): Promise<number | undefined> {
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(usage());
    return 0;
  }
  const found = findCommand(argv);
  if (!found) {
    if (argv.length === 0) return fail(EXIT_USAGE, 'no command given', usage());
    const group = commandsOfGroup(argv[0]);
    if (group.length === 0) return fail(EXIT_USAGE, `unknown command: ${argv[0]}`, usage());
    const sub = argv[1];
    return fail(EXIT_USAGE, sub === undefined || sub.startsWith('-') ? `${argv[0]}: which one?` : `unknown command: ${argv[0]} ${sub}`, usage(group));
  }
  const { command, rest } = found;

  let runtime: Promise<Runtime> | undefined;
  try {
    const args = parseCommandArgs(rest, command.options);
    if (args.flag('help')) {
      process.stdout.write(`usage: ${usageLine(command)}\n`);
      return 0;
    }
    const config = loadConfig();
    const ctx: CommandContext = { config, runtime: () => (runtime ??= openRuntime(config)) };
    const result = await command.run(args, ctx);
    if (result === undefined) return undefined;
    print(result, args.flag('json'));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) return fail(EXIT_USAGE, err.message, `usage: ${usageLine(command)}\n`);
    if (expected.some((type) => err instanceof type)) return fail(EXIT_FAILED, (err as Error).message);
    return fail(EXIT_FAILED, `unexpected error: ${describe(err)}`);
  } finally {
    if (runtime) await (await runtime.catch(() => undefined))?.database.close();
  }
}

function describe(err: unknown): string {
  if (err instanceof AggregateError) return err.errors.map(describe).join('; ') || err.message;
  return err instanceof Error ? err.message || err.name : String(err);
}

const code = await runCli(process.argv.slice(2));
if (code !== undefined) process.exitCode = code;
