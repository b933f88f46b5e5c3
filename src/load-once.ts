// What only some deployments or some requests use (the OAuth server, the MCP SDK, Redis, SMTP, Prometheus) is
// imported the first time it is needed, then kept: a process that never needs it never pays its memory
// (docs/operating.md#memory). A failed load is not kept, so the next caller tries again.
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
}
