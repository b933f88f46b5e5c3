// The `atrium` command as a real process, for the tests that drive it as an operator does.
import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..', '..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with only PATH and the variables given (none inherited, so a developer's DATABASE_URL cannot leak in). */
export function runCliProcess(env: Record<string, string>, args: string[], input = '', entry = 'src/cli/main.ts'): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, entry), ...args], { cwd: root, env: { PATH: process.env.PATH ?? '', ...env } });
    child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
