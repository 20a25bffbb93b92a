/**
 * dynalite's expressions parsed once per shape, not once per request.
 *
 * Why: dynalite parses every UpdateExpression, ConditionExpression, KeyConditionExpression, FilterExpression and
 * ProjectionExpression with a PEG parser on every request. The meter's one write carries two long expressions
 * (the counters, the day, the ring of its last writes' tokens), and parsing them was ~45 % of dynalite's CPU per
 * metering write, measured (bench: "npm start's local DynamoDB"). The request path sends the same few
 * expressions again and again, with other values.
 *
 * How: the result of a parse depends on the expression, the names (`#x` → attribute name), which values it
 * uses and their types, never on what the values hold — except in the two checks that read a value's content
 * (`attribute_type(path, :t)` checks the type name in `:t`; `BETWEEN :a AND :b` compares the bounds), which are
 * never memoised. The first parse of a shape is dynalite's own, with the request's values; its result is kept
 * as a template in which every value the parser returned is a slot, named after it. A later request of the same
 * shape gets a fresh copy of the template with its own values in the slots (dynalite mutates what it gets
 * while applying an update, so every request has its own copy), and the same names and values are marked used
 * as dynalite's parser would mark them. A parse that fails (a syntax error, a check that refuses) is never
 * kept: every request of that shape is parsed again and gets dynalite's own message. A result that holds
 * anything shaped like a value that is not one of the request's own values is not kept either.
 *
 * Equivalence with dynalite's own parse is tested over generated expressions and values
 * (test/local/dynalite-expressions.test.ts). Installed on the CommonJS parser modules that dynalite's
 * validations call at request time (one shared module object per process), once.
 */
import { createRequire } from 'node:module';

interface ParseContext {
  attrNames?: Record<string, string>;
  attrVals?: Record<string, Record<string, unknown>>;
  unusedAttrNames?: Record<string, boolean>;
  unusedAttrVals?: Record<string, boolean>;
  isKeyCondition?: boolean;
}

interface Parser {
  parse(input: string, options: { context: ParseContext }): unknown;
}

/** A value's place in a kept result: filled with the request's own value of that name. */
class Slot {
  constructor(readonly name: string) {}
}

interface Shape {
  template: unknown;
  /** The names and values the parse marked used (removed from the context's unused sets). */
  usedNames: string[];
  usedValues: string[];
}

/** dynalite's AttributeValue type keys, in the order its parsers test them. */
const TYPES = ['S', 'N', 'B', 'NULL', 'BOOL', 'SS', 'NS', 'BS', 'L', 'M'] as const;

/** The checks that read what a value holds, not only its type: such expressions are always parsed. */
const READS_CONTENT = /attribute_type|between/i;

/** Shapes kept per parser; a full cache starts again (the request path uses a few dozen). */
export const MAX_SHAPES = 4096;

function typeOf(value: Record<string, unknown> | undefined): string {
  for (const type of TYPES) if (value?.[type] != null) return type;
  return '?';
}

/** What the result of a parse can depend on: the expression, the names, which values exist and their types. */
function shapeKey(input: string, context: ParseContext): string {
  let key = `${context.isKeyCondition ? 'k' : '-'}${input}\u0000${JSON.stringify(context.attrNames ?? null)}\u0000`;
  for (const [name, value] of Object.entries(context.attrVals ?? {})) key += `${name}:${typeOf(value)},`;
  return key;
}

/** Looks like an AttributeValue: an object with exactly one key, an AttributeValue type. */
function valueShaped(node: object): boolean {
  const keys = Object.keys(node);
  return keys.length === 1 && (TYPES as readonly string[]).includes(keys[0]!);
}

/**
 * `node` with each of the request's values (by identity) replaced by a slot; undefined when the result holds
 * something shaped like a value that is not one of them (a copy of a value's content: not kept).
 */
function templateOf(node: unknown, values: Map<unknown, string>, seen: Map<object, unknown>): unknown {
  if (node === null || typeof node !== 'object') return node;
  const name = values.get(node);
  if (name !== undefined) return new Slot(name);
  if (seen.has(node)) return seen.get(node);
  if (!Array.isArray(node) && valueShaped(node)) throw new Uncacheable();
  const copy = emptyLike(node);
  seen.set(node, copy);
  for (const [key, child] of Object.entries(node)) copy[key] = templateOf(child, values, seen);
  return copy;
}

class Uncacheable extends Error {}

/** An empty array, or an empty object with the same prototype (dynalite's parsers use prototype-less maps). */
function emptyLike(node: object): Record<string, unknown> {
  return Array.isArray(node)
    ? ([] as unknown as Record<string, unknown>)
    : Object.create(Object.getPrototypeOf(node));
}

/** A fresh copy of `node` with the slots filled from `values`; shared parts stay shared, as in a parse. */
function filled(node: unknown, values: Record<string, unknown>, seen: Map<object, unknown>): unknown {
  if (node === null || typeof node !== 'object') return node;
  if (node instanceof Slot) return values[node.name];
  if (seen.has(node)) return seen.get(node);
  const copy = emptyLike(node);
  seen.set(node, copy);
  for (const [key, child] of Object.entries(node)) copy[key] = filled(child, values, seen);
  return copy;
}

/** Keep a successful parse as a template, or nothing when it cannot be kept. */
function shapeOf(result: unknown, context: ParseContext, before: { names: string[]; values: string[] }) {
  const byIdentity = new Map<unknown, string>();
  for (const [name, value] of Object.entries(context.attrVals ?? {})) byIdentity.set(value, name);
  try {
    return {
      template: templateOf(result, byIdentity, new Map()),
      usedNames: before.names.filter((name) => !(name in (context.unusedAttrNames ?? {}))),
      usedValues: before.values.filter((name) => !(name in (context.unusedAttrVals ?? {}))),
    } satisfies Shape;
  } catch (error) {
    if (error instanceof Uncacheable) return undefined;
    throw error;
  }
}

/** `parser.parse`, memoised by shape (see above). */
export function memoisedParse(parse: Parser['parse']): Parser['parse'] {
  const shapes = new Map<string, Shape>();
  return (input, options) => {
    const { context } = options;
    if (READS_CONTENT.test(input)) return parse(input, options);
    const key = shapeKey(input, context);
    const shape = shapes.get(key);
    if (shape) {
      for (const name of shape.usedNames) delete context.unusedAttrNames?.[name];
      for (const name of shape.usedValues) delete context.unusedAttrVals?.[name];
      return filled(shape.template, context.attrVals ?? {}, new Map());
    }
    const before = {
      names: Object.keys(context.unusedAttrNames ?? {}),
      values: Object.keys(context.unusedAttrVals ?? {}),
    };
    // Throws on a syntax error, returns a string for a refused expression: neither is kept.
    const result = parse(input, options);
    if (result !== null && typeof result === 'object') {
      const kept = shapeOf(result, context, before);
      if (kept) {
        if (shapes.size >= MAX_SHAPES) shapes.clear();
        shapes.set(key, kept);
      }
    }
    return result;
  };
}

const INSTALLED = Symbol.for('catalogue-read-api.dynalite-expressions');
const PARSERS = ['updateParser', 'conditionParser', 'projectionParser'] as const;

/** Memoise dynalite's three expression parsers in this process (idempotent). */
export function installDynaliteExpressionMemo(): void {
  const require = createRequire(import.meta.url);
  for (const name of PARSERS) {
    const parser = require(`dynalite/db/${name}`) as Parser & { [INSTALLED]?: true };
    if (parser[INSTALLED]) continue;
    parser.parse = memoisedParse(parser.parse.bind(parser));
    parser[INSTALLED] = true;
  }
}
