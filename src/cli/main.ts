// Entry of the `atrium` command (bin/atrium.js imports this file; `npm run atrium` runs it directly), so it
// runs on import. Exit codes: 0 done, 1 the request could not be done, 2 the invocation was wrong.
// Messages go to stderr without stack traces: the reader is an operator, not the person debugging us.
import { withAuditScope } from '../audit/audit-log.ts';
import { cliSource, optionNames } from '../audit/entry-points.ts';
import { loadConfig } from '../config.ts';
import { openRuntime } from '../runtime.ts';
import { parseCommandArgs } from './args.ts';
import type { Command, CommandContext, CommandResult, Runtime } from './command.ts';
import { commandsOfGroup, findCommand, usage, usageLine } from './commands.ts';
import { describeFailure, EXIT_USAGE, UsageError } from './errors.ts';

/** Commands that change no organisation's state themselves; `serve` must not run its whole server in a command's audit scope. */
const UNAUDITED = new Set(['serve', 'worker', 'migrate']);

/**
 * Reports a failure: a sentence (and the usage, for a wrong invocation), or with --json one JSON object on one
 * line. Both go to stderr, so stdout only ever holds a command's result: `key=$(atrium api-key create … --json)`
 * captures the key or nothing, and a script reads the failure's `code` from stderr after a non-zero exit.
 */
function fail(err: unknown, json: boolean, usageText: string, command?: Command): number {
  const { exit, problem, message } = describeFailure(err, command?.fieldOptions);
  process.stderr.write(json ? `${JSON.stringify(problem)}\n` : `atrium: ${message}\n${exit === EXIT_USAGE ? usageText : ''}`);
  return exit;
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
  // Looked for anywhere, not parsed: a failure to find the command or parse its options is reported as JSON too.
  const json = argv.includes('--json');
  const found = findCommand(argv);
  if (!found) {
    if (argv.length === 0) return fail(new UsageError('no command given'), json, usage());
    const group = commandsOfGroup(argv[0]);
    if (group.length === 0) return fail(new UsageError(`unknown command: ${argv[0]}`), json, usage());
    const sub = argv[1];
    return fail(new UsageError(sub === undefined || sub.startsWith('-') ? `${argv[0]}: which one?` : `unknown command: ${argv[0]} ${sub}`), json, usage(group));
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
    // The change a command makes is recorded in its transaction as the operator's (audit/audit-log.ts).
    const action = `atrium ${command.words.join(' ')}`;
    const result = UNAUDITED.has(command.words[0]) ? await command.run(args, ctx) : await withAuditScope(cliSource(), action, () => command.run(args, ctx), optionNames(rest));
    if (result === undefined) return undefined;
    print(result, json);
    return 0;
  } catch (err) {
    return fail(err, json, `usage: ${usageLine(command)}\n`, command);
  } finally {
    if (runtime) await (await runtime.catch(() => undefined))?.database.close();
  }
}

const code = await runCli(process.argv.slice(2));
if (code !== undefined) process.exitCode = code;
