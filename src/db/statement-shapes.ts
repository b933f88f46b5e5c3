// Statements that repeat in shape with new values, compiled once per shape: a PATCH's one statement on PostgreSQL
// (domain/one-statement-update.repository.ts) is the same text for every section retitled, with another title,
// id and time. Building it through Kysely's `sql` tags and compiling it cost about a tenth of the PATCH's CPU
// (bench/README.md); a statement of a shape seen before now costs a walk over the few small builders its caller
// made, and an array of parameters.
//
// A statement is given as its own values (the caller's plain ones), its parts (builders the caller made, whose
// values are read out of them) and a key of everything else that decides its text (table, columns, flags). The
// first time a shape is seen it is built with a sentinel in place of every value and compiled; the sentinels'
// places in the compiled parameters say where each value goes from then on (sentinels.ts). preparedQuery
// (prepared.ts) does the same for fixed queries whose arguments are all plain values.
import { RawNode, ValueNode, type CompiledQuery, type OperationNode, type OperationNodeSource, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import { sentinel, slotOf } from './sentinels.ts';

/** The builder for a statement: `value(i)` stands for the statement's own value i, `part(i)` for its part i. */
export type ShapeBuild<R> = (value: (index: number) => unknown, part: (index: number) => RawBuilder<unknown>) => RawBuilder<R>;

interface Shape {
  sql: string;
  query: CompiledQuery['query'];
  /** For each parameter of the text: the slot of the value that goes there, or the constant itself (part of the shape). */
  order: Array<number | { constant: unknown }>;
}

const MAX_SHAPES = 1_000;
const shapesByAdapter = new Map<unknown, Map<string, Shape>>();

/** What a node without values says of itself, by the node (names and tables are made once: one-statement-update.repository.ts). */
const fixedKeys = new WeakMap<OperationNode, string | null>();

/**
 * Appends the node's values to `values` (in the order Kysely's compiler meets them) and returns a key of the
 * rest of it; undefined when it cannot be keyed (a literal, or a node with values inside that is not raw SQL).
 */
function keyOf(node: OperationNode, values: unknown[]): string | undefined {
  if (node.kind === 'RawNode') {
    const { sqlFragments, parameters } = node as RawNode;
    let key = `(${sqlFragments[0]}`;
    for (let i = 0; i < parameters.length; i++) {
      const inner = keyOf(parameters[i], values);
      if (inner === undefined) return undefined;
      key += `\u0001${inner}\u0001${sqlFragments[i + 1]}`;
    }
    return `${key})`;
  }
  if (node.kind === 'ValueNode') {
    const { value, immediate } = node as ValueNode;
    if (immediate) return undefined;
    values.push(value);
    return '?';
  }
  let fixed = fixedKeys.get(node);
  if (fixed === undefined) {
    const text = JSON.stringify(node);
    fixed = text.includes('"ValueNode"') ? null : text;
    fixedKeys.set(node, fixed);
  }
  return fixed ?? undefined;
}

/** The node with a sentinel for each value, numbered on from `next.slot` in keyOf's order. */
function slotted(node: OperationNode, next: { slot: number }): OperationNode {
  if (node.kind === 'RawNode') {
    const raw = node as RawNode;
    return RawNode.create(raw.sqlFragments, raw.parameters.map((p) => slotted(p, next)));
  }
  if (node.kind === 'ValueNode') return ValueNode.create(sentinel(next.slot++));
  return node;
}

const asBuilder = (node: OperationNode) => ({ toOperationNode: () => node }) as OperationNodeSource as RawBuilder<unknown>;

/**
 * `build` compiled with `values` and `parts`: from its shape's text when `key` (what else decides the text: a
 * table, its columns, flags; lists are joined with commas) and the parts' shapes were seen before, else built
 * and compiled, and its shape kept. A part that cannot be keyed makes the statement built as it is, every time.
 */
export function compileByShape<R>(db: Db, key: readonly unknown[], values: readonly unknown[], parts: readonly RawBuilder<unknown>[], build: ShapeBuild<R>): CompiledQuery<R> {
  const all = [...values];
  let fullKey = key.join('\u0003');
  const nodes: OperationNode[] = [];
  for (const part of parts) {
    const node = part.toOperationNode();
    const partKey = keyOf(node, all);
    if (partKey === undefined) return build((i) => values[i], (i) => parts[i]).compile(db);
    fullKey += `\u0002${partKey}`;
    nodes.push(node);
  }
  const adapter = db.getExecutor().adapter.constructor;
  let shapes = shapesByAdapter.get(adapter);
  if (shapes === undefined) shapesByAdapter.set(adapter, (shapes = new Map()));
  let shape = shapes.get(fullKey);
  if (shape === undefined) {
    const next = { slot: values.length };
    const slottedParts = nodes.map((node) => asBuilder(slotted(node, next)));
    const compiled = build(sentinel, (i) => slottedParts[i]).compile(db);
    const order = compiled.parameters.map((p) => slotOf(p) ?? { constant: p });
    shape = { sql: compiled.sql, query: compiled.query, order };
    // Bounded: past MAX_SHAPES a new shape is compiled each time, as before.
    if (shapes.size < MAX_SHAPES) shapes.set(fullKey, shape);
  }
  const parameters = shape.order.map((o) => (typeof o === 'number' ? all[o] : o.constant));
  return { sql: shape.sql, parameters, query: shape.query, queryId: { queryId: '' } } as unknown as CompiledQuery<R>;
}
