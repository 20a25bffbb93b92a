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
 * (test/dynalite-expressions.test.ts). Installed on the CommonJS parser modules that dynalite's
 * validations call at request time (one shared module object per process, reached through internals.ts), once.
 */
import { dynaliteParser, PARSERS } from './internals.js';

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

interface Shape {
  build: Build;
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
 * Builds a fresh copy of a kept result with the request's values in it. `shared` holds, per request, the
 * copies of the nodes that occur more than once in the result (dynalite's update parser puts each path both
 * in its section and in `paths`), so that they stay one object, as in a parse.
 */
type Build = (values: Record<string, unknown>, shared: unknown[]) => unknown;

class Uncacheable extends Error {}

/** How often each object occurs in `node`'s tree (a second occurrence is not descended into). */
function occurrences(node: unknown, counts: Map<object, number>): Map<object, number> {
  if (node === null || typeof node !== 'object') return counts;
  const seen = counts.get(node) ?? 0;
  counts.set(node, seen + 1);
  if (seen === 0) for (const child of Object.values(node)) occurrences(child, counts);
  return counts;
}

/** One result being compiled: the request's values by identity, occurrences, the builders of shared nodes. */
interface Compiling {
  values: Map<unknown, string>;
  counts: Map<object, number>;
  shared: Map<object, Build>;
}

/** A builder of `node`'s copy: containers copied (same prototype), primitives as they are, values from the request. */
function compile(node: unknown, compiling: Compiling): Build {
  if (node === null || typeof node !== 'object') return () => node;
  const name = compiling.values.get(node);
  if (name !== undefined) return (given) => given[name];
  if (!Array.isArray(node) && valueShaped(node)) throw new Uncacheable();
  if ((compiling.counts.get(node) ?? 0) < 2) return containerBuild(node, compiling);
  let build = compiling.shared.get(node);
  if (!build) {
    const at = compiling.shared.size;
    // Registered before its children are compiled: a node that contains itself still terminates.
    let own: Build = () => undefined;
    build = (given, copies) => (copies[at] ??= own(given, copies));
    compiling.shared.set(node, build);
    own = containerBuild(node, compiling);
  }
  return build;
}

function containerBuild(node: object, compiling: Compiling): Build {
  const keys = Object.keys(node);
  const children = keys.map((key) => compile((node as Record<string, unknown>)[key], compiling));
  if (Array.isArray(node)) return (given, copies) => children.map((build) => build(given, copies));
  const prototype = Object.getPrototypeOf(node) as object | null;
  return (given, copies) => {
    const copy: Record<string, unknown> = prototype === Object.prototype ? {} : Object.create(prototype);
    for (let k = 0; k < keys.length; k++) copy[keys[k]!] = children[k]!(given, copies);
    return copy;
  };
}

/** Keep a successful parse as a template, or nothing when it cannot be kept. */
function shapeOf(result: unknown, context: ParseContext, before: { names: string[]; values: string[] }) {
  const byIdentity = new Map<unknown, string>();
  for (const [name, value] of Object.entries(context.attrVals ?? {})) byIdentity.set(value, name);
  try {
    return {
      build: compile(result, {
        values: byIdentity,
        counts: occurrences(result, new Map()),
        shared: new Map(),
      }),
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
      return shape.build(context.attrVals ?? {}, []);
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

/**
 * dynalite's own parse of one of its parsers, kept beside the memoised one (undefined before the install).
 * @example ownParse('updateParser')?.('SET #a = :a', { context }) // what dynalite's parser alone returns
 */
export function ownParse(name: (typeof PARSERS)[number]): Parser['parse'] | undefined {
  return (dynaliteParser(name) as Parser & { [INSTALLED]?: Parser['parse'] })[INSTALLED];
}

/** Memoise dynalite's three expression parsers in this process (idempotent). */
export function installDynaliteExpressionMemo(): void {
  for (const name of PARSERS) {
    const parser = dynaliteParser(name) as Parser & { [INSTALLED]?: Parser['parse'] };
    if (parser[INSTALLED]) continue;
    // dynalite's own parse is kept beside the memoised one (the tests compare them).
    parser[INSTALLED] = parser.parse.bind(parser);
    parser.parse = memoisedParse(parser[INSTALLED]);
  }
}
