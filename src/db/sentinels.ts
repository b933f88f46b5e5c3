// The stand-ins for a statement's values while it is compiled once to run many times (prepared.ts: fixed queries;
// statement-shapes.ts: one-statement writes by shape): each value is replaced by a sentinel string naming its
// slot, and where the sentinels land among the compiled parameters says where each value goes from then on.
const SENTINEL = '\u0000statement-slot:';

/** The stand-in for the value of `slot`. */
export const sentinel = (slot: number) => `${SENTINEL}${slot}`;

/** The slot a compiled parameter stands for, or undefined when it is a constant of the statement. */
export const slotOf = (parameter: unknown): number | undefined => (typeof parameter === 'string' && parameter.startsWith(SENTINEL) ? Number(parameter.slice(SENTINEL.length)) : undefined);
