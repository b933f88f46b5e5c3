// Every command of `atrium`, in the order the usage lists them. A new command group adds its list here.
import { roleNames, scopeResources } from '../access/capabilities.ts';
import { apiKeyCommands } from './api-key.ts';
import type { Command } from './command.ts';
import { migrateCommand } from './migrate.ts';
import { oauthClientCommands } from './oauth-client.ts';
import { orgCommands } from './org.ts';
import { personCommands } from './person.ts';
import { seedCommands } from './seed.ts';
import { serveCommand } from './serve.ts';
import { workerCommand } from './worker.ts';

export const commands: readonly Command[] = [serveCommand, workerCommand, migrateCommand, ...orgCommands, ...personCommands, ...apiKeyCommands, ...oauthClientCommands, ...seedCommands];

export const usageLine = (c: Command): string => ['atrium', ...c.words, c.synopsis].filter((s) => s !== '').join(' ');

const notes = [
  'Every command but serve prints JSON instead of a sentence when given --json.',
  `roles: ${roleNames.join(', ')}`,
  `scopes: RESOURCE:read, RESOURCE:write or RESOURCE:delete, for RESOURCE in ${scopeResources.join(', ')}`,
];

export function usage(list: readonly Command[] = commands): string {
  return `usage:\n${list.map((c) => `  ${usageLine(c)}`).join('\n')}\n\n${notes.join('\n')}\n`;
}

/** The command whose words start argv, and the arguments after them. */
export function findCommand(argv: readonly string[]): { command: Command; rest: string[] } | undefined {
  const command = commands.find((c) => c.words.every((w, i) => argv[i] === w));
  return command && { command, rest: argv.slice(command.words.length) };
}

/** The commands sharing argv's first word (`atrium org` without a subcommand). */
export const commandsOfGroup = (word: string | undefined): Command[] => commands.filter((c) => c.words[0] === word);
