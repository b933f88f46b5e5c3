import { v7 } from 'uuid';

/** UUIDv7: time-ordered, so primary-key indexes stay append-mostly and ids sort by creation. */
export const newId = (): string => v7();
