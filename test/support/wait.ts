// Waiting in tests for something another task does (a background write, a worker's pass): poll the condition
// rather than sleep a fixed time, which is a race on a busy CI machine.

/** Resolves once `condition` holds; rejects naming `what` after `timeoutMs`. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
