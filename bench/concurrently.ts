// `count` calls of `call`, `concurrency` at a time (each of `concurrency` loops awaits its calls in turn): the load
// the in-process benches put on what they measure.
export async function concurrently(count: number, concurrency: number, call: () => Promise<unknown>): Promise<void> {
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = 0; i < count / concurrency; i++) await call();
    }),
  );
}
