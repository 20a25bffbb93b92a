/**
 * Real exchanges with the API for the reference page: the fixture catalogue (fixtures/catalogue) rendered by
 * the builder into a store in memory and served by the real proxy core (in-memory keys and quota, a fixed
 * clock, request ids derived from the example's name), so every example on the page is what the product
 * answers — success, 304 and every error an operation can give, the 503s included (each dependency really
 * failing) — and a change of behaviour changes the page.
 *
 * Run in its own process by docs/reference/build.ts (through document.ts): the CDK app, which builds the
 * page, never imports product code.
 */
import { fileURLToPath } from 'node:url';
import { renderCatalogue } from '../../builder/render/full.js';
import { loadSnapshot } from '../../builder/snapshot/load.js';
import type { ConfigOutcome } from '../../proxy/config.js';
import { createHandler } from '../../proxy/core/handler.js';
import type { ProxyDependencies, ProxyResponse } from '../../proxy/core/types.js';
import type { KeyStore } from '../../proxy/keys/interface.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import type { QuotaMeter } from '../../proxy/quota/interface.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { DependencyError } from '../../store/errors.js';
import type { GetOptions, GetOutcome, ObjectStore } from '../../store/objects/interface.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import { exampleRequestId } from './shown.js';

/** The catalogue every example is produced from. */
export const FIXTURE = fileURLToPath(new URL('../../fixtures/catalogue', import.meta.url));

/**
 * The moment of every exchange: half past a minute, so a 429's `Retry-After` reads 30 s and
 * `X-RateLimit-Reset` the minute's start.
 */
export const EXAMPLE_TIME = new Date('2026-01-15T09:30:30.000Z');

/** How the examples show the key (the samples read it from `CATALOGUE_KEY`). */
export const SHOWN_KEY = 'pk_live_…';

const PREFIX = 'catalogue/';
/** Only for these examples; a deployment's cursors are bound with its own secret. */
const CURSOR_SECRET = 'reference-examples-cursor-secret-0123456789';
/** A free-tier key (the published limits show in every rate-limit header), built so no literal key is here. */
const KEY = `pk_live_${'Docs0Example0Key0'.padEnd(22, '0')}`;
const UNKNOWN_KEY = `pk_live_${'Unknown0Key'.padEnd(22, '0')}`;

/** One request to the API, as a consumer sends it. */
export interface ExampleRequest {
  method: string;
  /** Path and query, e.g. `/v1/modules?limit=2`. */
  target: string;
  /** Sent headers, lower-case names; `authorization` as sent (the key is shown as {@link SHOWN_KEY}). */
  headers: Record<string, string>;
}

/** A request and the proxy's answer to it. */
export interface Exchange {
  request: ExampleRequest;
  status: number;
  /** Lower-case names, sorted. */
  headers: Record<string, string>;
  /** The body as text, `undefined` when there is none. */
  body: string | undefined;
}

/** An exchange with the title the page gives it. */
export interface NamedExchange {
  /** Unique within its operation and status: the key of the OpenAPI example. */
  name: string;
  summary: string;
  exchange: Exchange;
}

/** How the proxy's dependencies behave during one exchange. */
export type World =
  | 'normal'
  | 'quota-spent'
  | 'nothing-published'
  | 'keys-down'
  | 'quota-down'
  | 'objects-down'
  | 'objects-damaged';

interface Published {
  store: MemoryObjectStore;
  version: string;
}

let published: Promise<Published> | undefined;

/** The fixture, built once per process. */
function publishedFixture(): Promise<Published> {
  published ??= (async () => {
    const loaded = await loadSnapshot(FIXTURE);
    if (!loaded.ok) throw new Error(`${FIXTURE} does not validate: ${loaded.problems.length} problems`);
    const rendered = renderCatalogue(loaded.snapshot);
    const store = new MemoryObjectStore();
    for (const [id, bytes] of rendered.objects) await store.put(`${PREFIX}o/${id}`, bytes);
    await store.put(`${PREFIX}current.json`, rendered.pointerBytes);
    return { store, version: rendered.pointer.version };
  })();
  return published;
}

/**
 * The version id the fixture publishes as.
 * @example await fixtureVersion() // → '_BKItsyZiIu7TGIQ27u_9w'
 */
export async function fixtureVersion(): Promise<string> {
  return (await publishedFixture()).version;
}

const config: ConfigOutcome = {
  ok: true,
  config: {
    bucket: 'catalogue',
    prefix: PREFIX,
    s3Endpoint: undefined,
    keysTable: 'keys',
    countersTable: 'counters',
    dynamodbEndpoint: undefined,
    cursorSecret: CURSOR_SECRET,
    keyCacheTtlMs: 0,
    keyCacheMaxEntries: 10,
    pointerTtlMs: 60_000,
    dependencyTimeoutMs: 2_000,
    byteCacheBytes: 0,
  },
};

const failing = (dependency: 'keys' | 'quota' | 'objects') => () =>
  Promise.reject(new DependencyError(dependency, `${dependency}: connection reset (an example failure)`));

/** A store that answers every data object with one byte changed: what the integrity checks are for. */
class DamagedStore implements ObjectStore {
  constructor(readonly inner: ObjectStore) {}
  async get(key: string, options?: GetOptions): Promise<GetOutcome> {
    const outcome = await this.inner.get(key, options);
    if (!outcome.ok || !key.includes('/o/')) return outcome;
    const body = Buffer.from(outcome.body);
    body[body.length >> 1] = (body[body.length >> 1] ?? 0) ^ 0x20;
    return { ...outcome, body };
  }
}

async function dependenciesOf(world: World, requestId: string): Promise<ProxyDependencies> {
  const { store } = await publishedFixture();
  const keys = new MemoryKeyStore();
  const record = keys.add(KEY, { keyId: 'key_docsExample' });
  const quota = new MemoryQuotaMeter();
  if (world === 'quota-spent') {
    for (let used = 0; used < record.limits.minute; used++) await quota.meter(record, EXAMPLE_TIME);
  }
  const objects: ObjectStore =
    world === 'nothing-published'
      ? new MemoryObjectStore()
      : world === 'objects-down'
        ? { get: failing('objects') }
        : world === 'objects-damaged'
          ? new DamagedStore(store)
          : store;
  const keyStore: KeyStore = world === 'keys-down' ? { lookup: failing('keys') } : keys;
  const meter: QuotaMeter =
    world === 'quota-down' ? { meter: failing('quota'), refund: failing('quota') } : quota;
  return {
    objects,
    keys: keyStore,
    quota: meter,
    config,
    now: () => EXAMPLE_TIME,
    requestId: () => requestId,
    log: () => {},
  };
}

/** Which `Authorization` a request sends. */
export type Credentials = 'key' | 'none' | 'malformed' | 'unknown';

const AUTHORIZATION: Record<Credentials, string | undefined> = {
  key: `Bearer ${KEY}`,
  none: undefined,
  malformed: 'Bearer pk_live_not-a-key',
  unknown: `Bearer ${UNKNOWN_KEY}`,
};

export interface Ask {
  method: string;
  target: string;
  credentials?: Credentials;
  headers?: Record<string, string>;
  world?: World;
}

/**
 * Send one request through the proxy core in the given world.
 * @example await exchange('getModuleList 200', { method: 'GET', target: '/v1/modules?limit=2' })
 */
export async function exchange(name: string, ask: Ask): Promise<Exchange> {
  const deps = await dependenciesOf(ask.world ?? 'normal', exampleRequestId(name));
  const handle = createHandler(deps);
  const authorization = AUTHORIZATION[ask.credentials ?? 'key'];
  const headers: Record<string, string> = {
    ...(authorization === undefined ? {} : { authorization }),
    ...ask.headers,
  };
  const split = ask.target.indexOf('?');
  const response: ProxyResponse = await handle({
    method: ask.method,
    path: split < 0 ? ask.target : ask.target.slice(0, split),
    query: split < 0 ? '' : ask.target.slice(split + 1),
    headers,
  });
  const shown = { ...headers };
  if (shown.authorization) shown.authorization = shown.authorization.replace(KEY, SHOWN_KEY);
  return {
    request: { method: ask.method, target: ask.target, headers: shown },
    status: response.status,
    headers: Object.fromEntries(Object.entries(response.headers).sort(([a], [b]) => a.localeCompare(b))),
    body: response.body?.toString('utf8'),
  };
}
