// The /mcp requests under way, by a number: what the SDK carries for a request (its authInfo's `extra.call`)
// instead of the call itself.
//
// Why not the call: the SDK leaves some of the objects it made for an exchange reachable from V8's old
// generation after the exchange has ended, until the next full collection (bench/scavenge-retention.ts: a
// failing zod safeParse keeps its input that way, and the SDK makes four per message). Everything those objects
// refer to is then copied by every scavenge meanwhile and promoted: with the call in authInfo, that was the
// organisation, the actor, and Fastify's request and reply with their sockets' objects, on every tool call. A
// number keeps nothing alive.

export interface CallRegistry<Call> {
  /** Registers `call` until `close(key)`; the number returned names it to the SDK. */
  open(call: Call): number;
  close(key: number): void;
  /** The call the SDK's request names; only ever asked while its HTTP request is under way. */
  get(key: unknown): Call;
}

export function createCallRegistry<Call>(): CallRegistry<Call> {
  const calls = new Map<number, Call>();
  let last = 0;
  return {
    open(call) {
      last = last === Number.MAX_SAFE_INTEGER ? 1 : last + 1;
      calls.set(last, call);
      return last;
    },
    close(key) {
      calls.delete(key);
    },
    get(key) {
      const call = calls.get(key as number);
      if (call === undefined) throw new Error('an MCP exchange ran after the /mcp request that carried it had ended');
      return call;
    },
  };
}
