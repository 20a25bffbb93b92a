/**
 * The one seam between this package and the insides of dynalite and s3rver: every module, function and field
 * of theirs that the extensions reach past the public API is reached here, and nowhere else.
 *
 * What is reached, and why no public option does it (both packages' options and events were checked):
 * - dynalite's `./db` module, whose `create` builds the store of every server: replaced, to give a server
 *   started with a `journal` option an in-memory store kept durable by the journal (dynamo-journal.ts).
 *   dynalite takes no store of its own making: `dynalite(options)` calls `db.create(options)`.
 * - the store's database (a memory-level instance): dynalite wraps its `get`/`put`/`del`/`batch` in callbacks
 *   answered after a turn of the event loop; the extension calls the unwrapped methods, on its prototype.
 * - dynalite's three expression parsers (`db/updateParser`, `db/conditionParser`, `db/projectionParser`):
 *   their `parse` memoised by shape (dynalite-expressions.ts); its validations call them at request time.
 * - dynalite's `level` (the LevelDB binding that wrote an earlier version's data), read once to migrate it.
 * - dynalite's `db.itemSize`, DynamoDB's item size rules, exported for the product's metering tests.
 * - s3rver's filesystem store class, S3 error class and kept-metadata list: the store of each server is
 *   replaced by one whose write methods write objects whole (s3rver-store.ts); s3rver takes no store option
 *   (`this.store = this.context.store = new FilesystemStore(directory)` in its constructor).
 * - s3rver's Koa middleware list: two middlewares go in front of its router (conditional writes, the events'
 *   request context); Koa's public `use()` only appends, after the router.
 * - the CommonJS `crypto` module object s3rver's `require('crypto')` returns (s3rver-des.ts).
 *
 * {@link checkInstalled} runs before the first server starts: the installed versions must be the ones this
 * package pins ({@link PINNED}) and everything above must be there with the shape the extensions use;
 * otherwise it throws a {@link LayoutError} naming the package, the installed and the pinned version, and what
 * is missing. Upgrading dynalite or s3rver: README.md, "Upgrading dynalite or s3rver".
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The packages this seam reaches into. */
export type Vendor = 'dynalite' | 's3rver';

/**
 * The releases the extensions were written for and checked against, as this package pins them (its package.json:
 * a test holds the two equal). An upgrade changes both, once the extensions are checked against it (README.md).
 */
export const PINNED: Readonly<Record<Vendor, string>> = { dynalite: '4.0.0', s3rver: '3.7.1' };

/** A dependency whose version or layout is not what the extensions rely on. */
export class LayoutError extends Error {
  constructor(
    readonly vendor: Vendor,
    readonly installed: string,
    readonly problems: readonly string[],
  ) {
    super(
      `@catalogue/local-aws extends ${vendor} ${PINNED[vendor]}, but ${vendor} ${installed} is installed` +
        `${installed === PINNED[vendor] ? ' with another layout' : ''}: ${problems.join('; ')}. ` +
        `Install ${vendor} ${PINNED[vendor]} (npm ci), or check the extensions against ${vendor} ${installed} ` +
        '(packages/local-aws/README.md, "Upgrading dynalite or s3rver").',
    );
    this.name = 'LayoutError';
  }
}

/** dynalite's store, as the extensions use it: its table lookup and its database. */
export interface DynaliteStore {
  getTable(
    name: string,
    checkStatus: boolean,
    callback: (error: Error | null, table?: unknown) => void,
  ): void;
  db: DynaliteDb;
}
type Callback = (error: Error | null, value?: unknown) => void;
export interface DynaliteDb {
  get(key: string, callback: Callback): unknown;
  put(key: string, value: unknown, callback: Callback): unknown;
  del(key: string, callback: Callback): unknown;
  batch(operations: { type: 'put' | 'del'; key: string; value?: unknown }[], callback: Callback): unknown;
}
/** The database's own (promise) methods, under dynalite's callback wrapper. */
export interface LevelMethods {
  get(this: unknown, key: string): Promise<unknown>;
  put(this: unknown, key: string, value: unknown, options: object): Promise<void>;
  del(this: unknown, key: string): Promise<void>;
  batch(this: unknown, operations: object[]): Promise<void>;
}
/** dynalite's `./db` module: where every server's store is created. */
export interface DynaliteDbModule {
  create(options: Record<string, unknown>): DynaliteStore;
  itemSize(item: Record<string, unknown>): number;
}
export interface ExpressionParser {
  parse(input: string, options: { context: object }): unknown;
}
export const PARSERS = ['updateParser', 'conditionParser', 'projectionParser'] as const;
export interface LevelDb {
  open(): Promise<void>;
  iterator(): AsyncIterable<[string, string]> & { close(): Promise<void> };
  close(): Promise<void>;
}
export type LevelClass = new (path: string, options: object) => LevelDb;

/** s3rver's filesystem store, as the extensions use it. */
export interface S3rverStore {
  rootDirectory: string;
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  getBucketPath(bucket: string): string;
  existsObject(bucket: string, key: string): Promise<boolean>;
  getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
  putObject(object: unknown): Promise<{ size: number; md5: string }>;
  putPart(
    bucket: string,
    uploadId: string,
    part: number,
    content: unknown,
  ): Promise<{ size: number; md5: string }>;
  putMetadata(bucket: string, key: string, metadata: Record<string, unknown>, md5?: string): Promise<void>;
}
export type S3rverStoreClass = new (rootDirectory: string) => S3rverStore;
export type S3ErrorClass = new (code: string, message: string) => Error & { status: number };
/** A Koa middleware, as s3rver composes them. */
export type Middleware<Context> = (ctx: Context, next: () => Promise<void>) => Promise<void>;

/** What of each package the extensions use: the modules as loaded (real ones, or a test's fakes). */
export interface DynaliteModules {
  version: string;
  db: unknown;
  parsers: Record<(typeof PARSERS)[number], unknown>;
  level: unknown;
}
export interface S3rverModules {
  version: string;
  store: unknown;
  error: unknown;
  object: unknown;
}

const isFunction = (value: unknown): value is (...args: never[]) => unknown => typeof value === 'function';
const field = (value: unknown, name: string): unknown =>
  value !== null && (typeof value === 'object' || typeof value === 'function')
    ? (value as Record<string, unknown>)[name]
    : undefined;

const STORE_METHODS = [
  'getResourcePath',
  'getBucketPath',
  'existsObject',
  'getMetadata',
  'putObject',
  'putPart',
  'putMetadata',
] as const;

/**
 * What the extensions rely on that `modules` lacks, one line each (empty: all there).
 * @example dynaliteProblems({ version: '4.0.0', db: {}, parsers, level }) // → ["dynalite/db: no function create", …]
 */
export function dynaliteProblems(modules: DynaliteModules): string[] {
  const problems: string[] = [];
  for (const name of ['create', 'itemSize']) {
    if (!isFunction(field(modules.db, name))) problems.push(`dynalite/db: no function ${name}`);
  }
  for (const name of PARSERS) {
    if (!isFunction(field(modules.parsers[name], 'parse')))
      problems.push(`dynalite/db/${name}: no function parse`);
  }
  if (!isFunction(field(modules.level, 'Level'))) problems.push("dynalite's level: no class Level");
  return problems;
}

/** What the extensions rely on that s3rver's `modules` lack, one line each (empty: all there). */
export function s3rverProblems(modules: S3rverModules): string[] {
  const problems: string[] = [];
  const prototype = field(modules.store, 'prototype');
  if (!isFunction(modules.store)) problems.push('s3rver/lib/stores/filesystem: not a class');
  for (const name of STORE_METHODS) {
    if (!isFunction(field(prototype, name))) problems.push(`s3rver/lib/stores/filesystem: no method ${name}`);
  }
  if (!isFunction(modules.error)) problems.push('s3rver/lib/models/error: not a class');
  if (!Array.isArray(field(modules.object, 'ALLOWED_METADATA'))) {
    problems.push('s3rver/lib/models/object: no ALLOWED_METADATA list');
  }
  return problems;
}

/** Throw a {@link LayoutError} when the version differs from the pinned one or `problems` are found. */
export function check(vendor: Vendor, version: string, problems: readonly string[]): void {
  const all =
    version === PINNED[vendor] ? problems : [`version ${version}, not ${PINNED[vendor]}`, ...problems];
  if (all.length > 0) throw new LayoutError(vendor, version, all);
}

/** A module of `vendor`'s, or undefined when it is gone (a layout check then names it). */
function load(from: NodeJS.Require, id: string): unknown {
  try {
    return from(id);
  } catch {
    return undefined;
  }
}

/** dynalite's own require (its modules, and its own dependencies, from its place). */
const dynaliteRequire = () => createRequire(require.resolve('dynalite'));

/** dynalite's installed version and modules, as loaded. */
export function dynaliteModules(): DynaliteModules {
  const own = dynaliteRequire();
  return {
    version: (require('dynalite/package.json') as { version: string }).version,
    db: load(own, './db'),
    parsers: Object.fromEntries(
      PARSERS.map((name) => [name, load(own, `./db/${name}`)]),
    ) as DynaliteModules['parsers'],
    level: load(own, 'level'),
  };
}

/** s3rver's installed version and modules, as loaded. */
export function s3rverModules(): S3rverModules {
  return {
    version: (require('s3rver/package.json') as { version: string }).version,
    store: load(require, 's3rver/lib/stores/filesystem'),
    error: load(require, 's3rver/lib/models/error'),
    object: load(require, 's3rver/lib/models/object'),
  };
}

const checked = new Set<Vendor>();

/**
 * Check the installed `vendor` against what the extensions rely on (once per process); throws a
 * {@link LayoutError} when its version or layout differs. Every accessor below calls it first.
 * @example checkInstalled('dynalite'); // throws "@catalogue/local-aws extends dynalite 4.0.0, but dynalite 4.1.0 is installed: …"
 */
export function checkInstalled(vendor: Vendor): void {
  if (checked.has(vendor)) return;
  if (vendor === 'dynalite') {
    const modules = dynaliteModules();
    check(vendor, modules.version, dynaliteProblems(modules));
  } else {
    const modules = s3rverModules();
    check(vendor, modules.version, s3rverProblems(modules));
  }
  checked.add(vendor);
}

/** dynalite's `./db` module (the shared CommonJS module object its `dynalite()` calls `create` on). */
export function dynaliteDb(): DynaliteDbModule {
  checkInstalled('dynalite');
  return dynaliteRequire()('./db') as DynaliteDbModule;
}

/** One of dynalite's expression parser modules (shared: its validations call its `parse`). */
export function dynaliteParser(name: (typeof PARSERS)[number]): ExpressionParser {
  checkInstalled('dynalite');
  return dynaliteRequire()(`./db/${name}`) as ExpressionParser;
}

/** dynalite's LevelDB binding (an earlier version's data directory is read with it). */
export function dynaliteLevel(): LevelClass {
  checkInstalled('dynalite');
  return (dynaliteRequire()('level') as { Level: LevelClass }).Level;
}

/**
 * A store's database methods under dynalite's callback wrapper (their own, on the prototype), checked: a
 * store that lacks them throws a {@link LayoutError}.
 */
export function levelMethods(db: DynaliteDb): LevelMethods {
  const prototype = Object.getPrototypeOf(db) as Record<string, unknown>;
  const missing = (['get', 'put', 'del', 'batch'] as const).filter(
    (name) => !isFunction(prototype?.[name]) || !isFunction((db as unknown as Record<string, unknown>)[name]),
  );
  if (missing.length > 0) {
    throw new LayoutError(
      'dynalite',
      PINNED.dynalite,
      missing.map((name) => `the store's database: no method ${name}`),
    );
  }
  return prototype as unknown as LevelMethods;
}

/** s3rver's filesystem store class, S3 error class and the metadata it keeps (allowed headers). */
export function s3rverStoreParts(): {
  Store: S3rverStoreClass;
  S3Error: S3ErrorClass;
  allowed: readonly string[];
} {
  checkInstalled('s3rver');
  return {
    Store: require('s3rver/lib/stores/filesystem') as S3rverStoreClass,
    S3Error: require('s3rver/lib/models/error') as S3ErrorClass,
    allowed: (require('s3rver/lib/models/object') as { ALLOWED_METADATA: string[] }).ALLOWED_METADATA,
  };
}

/** What of an s3rver instance (a Koa application) the extensions use. */
interface S3rverApp {
  middleware: unknown[];
  store: S3rverStore;
  context: { store: S3rverStore };
}

function appOf(s3rver: object): S3rverApp {
  checkInstalled('s3rver');
  const app = s3rver as Partial<S3rverApp>;
  const problems: string[] = [];
  if (!Array.isArray(app.middleware)) problems.push('an s3rver has no middleware list');
  else if (!field(app.middleware.at(-1), 'router'))
    problems.push("an s3rver's last middleware is not its router");
  if (!app.store || app.context?.store !== app.store) problems.push("an s3rver's store is not its context's");
  if (problems.length > 0) throw new LayoutError('s3rver', PINNED.s3rver, problems);
  return app as S3rverApp;
}

/** Put `middleware` in front of `s3rver`'s router (last in its list), before it serves. */
export function beforeRouter<Context>(s3rver: object, middleware: Middleware<Context>): void {
  const { middleware: list } = appOf(s3rver);
  list.splice(list.length - 1, 0, middleware);
}

/** `s3rver`'s store. */
export function storeOf(s3rver: object): S3rverStore {
  return appOf(s3rver).store;
}

/** Serve `s3rver` from `store` instead of the one its constructor made (before it serves). */
export function replaceStore(s3rver: object, store: S3rverStore): void {
  const app = appOf(s3rver);
  app.store = store;
  app.context.store = store;
}

/** The CommonJS `crypto` module object: the one s3rver's `require('crypto')` returns and calls at call time. */
export function sharedCrypto(): typeof import('node:crypto') {
  return require('node:crypto') as typeof import('node:crypto');
}

/** DynamoDB's item size, by dynalite's implementation of its rules (the product's metering tests use it). */
export function dynaliteItemSize(item: Record<string, unknown>): number {
  return dynaliteDb().itemSize(item);
}
