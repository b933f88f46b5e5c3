// How the service is started, read from the files that start it: the systemd units in deploy/, `npm start`
// (package.json) and the `atrium` command's first line. The memory bench starts the service with the same
// `node` flags as production; test/startup-modules.test.ts checks that every start says the same.
import fs from 'node:fs';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** What each documented start runs, as a list of words. */
export function startCommands(): Record<string, string[]> {
  const words = (line: string) => line.trim().split(/\s+/);
  const execStart = (unit: string) => words(/^ExecStart=(.*)$/m.exec(read(unit))?.[1] ?? '');
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  return {
    'deploy/atrium-api@.service': execStart('deploy/atrium-api@.service'),
    'deploy/atrium-worker@.service': execStart('deploy/atrium-worker@.service'),
    'npm start': words(scripts.start),
    // `#!/usr/bin/env -S node …`: what env runs.
    'bin/atrium.js': words(/^#!\S*env -S (.*)$/m.exec(read('bin/atrium.js'))?.[1] ?? ''),
  };
}

/** The `node` flags production starts the service with (deploy/atrium-api@.service). */
export function productionNodeFlags(): string[] {
  return startCommands()['deploy/atrium-api@.service'].filter((word) => word.startsWith('--'));
}
