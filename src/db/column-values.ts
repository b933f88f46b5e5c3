// How values of the columns look in TypeScript on both engines (the conventions are in tables.ts).
export type Bool = boolean | number;
export type Json = string;
export type Timestamp = string;
